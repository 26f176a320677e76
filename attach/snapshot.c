/* A running process's threads and their waits, read from outside (snapshot.h). */
#include "snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rchain.h"
#include "remote.h"
#include "rstack.h"

/* Offset of __data.__owner in glibc's pthread_mutex_t (x86-64: int
 * __lock; unsigned __count; int __owner). */
#define GLIBC_MUTEX_OWNER 8
/* glibc's pthread_rwlock_t (x86-64): __wrphase_futex at 8, __writers_futex
 * at 12, __cur_writer at 24. A reader waits on __wrphase_futex while a
 * writer holds it; a writer waits on __writers_futex (expecting 1 | 2,
 * "held, with waiters") while another writer holds it. */
#define RWLOCK_READER_TO_WRITER 16
#define RWLOCK_WRITER_TO_WRITER 12
#define RWLOCK_WRITERS_HELD 3

static int by_tid(const void *a, const void *b) {
  const tm_thread_state *x = a, *y = b;
  return (x->tid > y->tid) - (x->tid < y->tid);
}

/* "pid (comm) S ...": the name may hold spaces and parentheses. */
static void read_stat(pid_t pid, tm_thread_state *t) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)t->tid);
  t->state = '?';
  if (tm_read_file(path, buf, sizeof buf) < 0) return;
  char *open = strchr(buf, '('), *close = strrchr(buf, ')');
  if (!open || !close || close < open || close[1] != ' ') return;
  size_t len = (size_t)(close - open - 1);
  if (len >= sizeof t->name) len = sizeof t->name - 1;
  memcpy(t->name, open + 1, len);
  t->name[len] = 0;
  tm_printable(t->name);
  if (close[2] >= 'A' && close[2] <= 'z') t->state = close[2];
}

pid_t tm_wait_owner(pid_t pid, const tm_futex_wait *fw, tm_wait_kind kind) {
  uint32_t v = 0;
  switch (kind) {
  case TM_WAIT_MUTEX:
    if (fw->op == TM_FUTEX_LOCK_PI) {
      if (tm_remote_read(pid, fw->word, &v, sizeof v) == sizeof v) v &= FUTEX_TID_MASK;
    } else {
      int32_t owner;
      if (tm_remote_read(pid, fw->word + GLIBC_MUTEX_OWNER, &owner, sizeof owner) ==
              sizeof owner && owner > 0)
        v = (uint32_t)owner;
    }
    break;
  case TM_WAIT_RWLOCK_READ:
  case TM_WAIT_RWLOCK_WRITE: {
    bool reader = kind == TM_WAIT_RWLOCK_READ;
    if (!reader && fw->expected != RWLOCK_WRITERS_HELD) return 0; /* readers hold it */
    int32_t writer;
    uintptr_t at = fw->word + (reader ? RWLOCK_READER_TO_WRITER : RWLOCK_WRITER_TO_WRITER);
    if (tm_remote_read(pid, at, &writer, sizeof writer) == sizeof writer && writer > 0)
      v = (uint32_t)writer;
    break;
  }
  case TM_WAIT_JOIN: v = fw->expected; break;
  default: return 0;
  }
  return (pid_t)v;
}

static void find_owner(const tm_snapshot *s, tm_thread_state *t) {
  pid_t owner = tm_wait_owner(s->pid, &t->futex, t->wait.kind);
  if (owner <= 0 || owner == t->tid) return;
  if (tm_snapshot_thread(s, owner)) t->owner = owner;
  else if (t->wait.kind == TM_WAIT_MUTEX) t->owner_gone = owner;
}

static void read_wait(tm_snapshot *s, tm_thread_state *t) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)s->pid, (int)t->tid);
  if (tm_read_file(path, line, sizeof line) < 0) return;
  t->syscall_ok = true;
  if (!tm_syscall_parse(line, &t->sc) || !t->sc.in_call) return;
  t->futex = tm_futex_decode(s->pid, &t->sc);
  if (t->futex.skipped) tm_note(&s->notes, "thread %d: %s", (int)t->tid, t->futex.skipped);
  if (s->maps_ok)
    t->npcs = tm_remote_stack(s->pid, t->tid, line, &s->maps, s->cfi, t->pcs, TM_SNAPSHOT_FRAMES,
                              &t->exact);
  /* Only above frames the unwinder placed: where nothing was unwound (a
   * gcc -static program, Go: no .eh_frame_hdr) the scan starts at the PC's
   * function, often entered by a tail call from the function a call names,
   * which the filter would take for a stale frame. */
  if (t->exact >= 2 && t->npcs > t->exact && s->syms)
    t->npcs = tm_remote_chain_clean(&s->maps, s->syms, t->pcs, t->npcs, t->exact);
  if (t->futex.op != TM_FUTEX_NONE && s->syms) t->wait = tm_wait_classify(s->syms, t->pcs, t->npcs);
  else t->wait = (tm_wait_class){TM_WAIT_UNKNOWN, t->futex.op ? "futex" : "", -1};
}

bool tm_snapshot_take(pid_t pid, tm_snapshot *s) {
  memset(s, 0, sizeof *s);
  s->pid = pid;
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  DIR *d = opendir(path);
  if (!d) return false;
  size_t cap = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    long tid = strtol(e->d_name, NULL, 10);
    if (tid <= 0) continue;
    if (s->nthreads == cap) {
      cap = cap ? 2 * cap : 16;
      tm_thread_state *grown = realloc(s->threads, cap * sizeof *grown);
      if (!grown) break;
      s->threads = grown;
    }
    s->threads[s->nthreads++] = (tm_thread_state){.tid = (pid_t)tid};
  }
  closedir(d);
  qsort(s->threads, s->nthreads, sizeof *s->threads, by_tid);
  /* maps of another user's process read empty without ptrace access. */
  s->maps_ok = tm_maps_load(pid, &s->maps, &s->notes) && s->maps.nmaps > 0;
  if (s->maps_ok) {
    s->syms = tm_symtabs_new(&s->maps);
    s->cfi = tm_rcfi_new(&s->maps);
  }
  for (size_t i = 0; i < s->nthreads; i++) {
    read_stat(pid, &s->threads[i]);
    read_wait(s, &s->threads[i]);
  }
  for (size_t i = 0; i < s->nthreads; i++) find_owner(s, &s->threads[i]);
  return true;
}

void tm_snapshot_free(tm_snapshot *s) {
  tm_symtabs_free(s->syms);
  tm_rcfi_free(s->cfi);
  tm_maps_free(&s->maps);
  free(s->threads);
  memset(s, 0, sizeof *s);
}

const tm_thread_state *tm_snapshot_thread(const tm_snapshot *s, pid_t tid) {
  tm_thread_state key = {.tid = tid};
  return bsearch(&key, s->threads, s->nthreads, sizeof key, by_tid);
}
