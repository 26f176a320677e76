/* threadmon-attach-peek PID: what every thread of a running process waits
 * on, and any deadlock, read from outside in one pass (nothing is stopped,
 * signalled or written). Exit status: 0, 2 when a deadlock was found, 1 on
 * bad usage or a process that cannot be seen. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "access.h"
#include "deadlock.h"
#include "goruntime.h"
#include "readablename.h"
#include "snapshot.h"

#define SHOWN_FRAMES 6
#define CYCLES_SHOWN 16

/* Blocking calls a hung server is usually found in (x86-64 numbers). */
static const char *syscall_name(long nr) {
  switch (nr) {
  case 0: return "read";
  case 1: return "write";
  case 7: return "poll";
  case 23: return "select";
  case 34: return "pause";
  case 35: return "nanosleep";
  case 43: return "accept";
  case 45: return "recvfrom";
  case 47: return "recvmsg";
  case 61: return "wait4";
  case 202: return "futex";
  case 230: return "clock_nanosleep";
  case 232: return "epoll_wait";
  case 270: return "pselect6";
  case 271: return "ppoll";
  case 281: return "epoll_pwait";
  case 288: return "accept4";
  case 449: return "futex_waitv";
  default: return NULL;
  }
}

/* " [M3 sysmon]", " [M0 running G1]", " [M4 locked to G7]": a Go
 * runtime's name for the thread. */
static void print_go_m(const tm_go_runtime *go, pid_t tid) {
  const tm_go_m *m = tm_go_m_of(go, tid);
  if (!m) return;
  const char *role = tm_go_m_role(m);
  printf(" [M%lld", (long long)m->id);
  if (role) printf(" %s", role);
  if (m->goid) printf(" running G%llu", (unsigned long long)m->goid);
  if (m->locked_goid && m->locked_goid != m->goid)
    printf(" locked to G%llu", (unsigned long long)m->locked_goid);
  printf("]");
}

static void print_thread(tm_snapshot *s, const tm_go_runtime *go, const tm_thread_state *t) {
  printf("%7d %-16s %c", (int)t->tid, t->name, t->state);
  print_go_m(go, t->tid);
  if (!t->syscall_ok) {
    printf("\n");
    return;
  }
  if (!t->sc.in_call) {
    printf("  %s\n", t->sc.nr < 0 ? "(blocked outside a system call)" : "running");
    return;
  }
  if (t->futex.op != TM_FUTEX_NONE) {
    char word[160];
    tm_symtabs_format(s->syms, t->futex.word, false, word, sizeof word);
    printf("  waits: %s (%s) on 0x%lx %s [%s", tm_wait_kind_name(t->wait.kind), t->wait.what,
           (unsigned long)t->futex.word, word, tm_futex_op_name(t->futex.op));
    if (t->futex.op == TM_FUTEX_WAITV) printf(" on %u words, the first", t->futex.nwords);
    if (t->futex.op != TM_FUTEX_LOCK_PI) printf(" expects %u", t->futex.expected);
    printf("]");
    if (t->owner) {
      const tm_thread_state *o = tm_snapshot_thread(s, t->owner);
      printf(" %s %d (%s)", t->wait.kind == TM_WAIT_JOIN ? "for thread" : "held by", (int)t->owner,
             o ? o->name : "?");
    }
    if (t->owner_gone)
      printf(" held by %d, which has ended: it exited holding the lock", (int)t->owner_gone);
    printf("\n");
  } else {
    const char *name = syscall_name(t->sc.nr);
    if (name) printf("  in %s\n", name);
    else printf("  in system call %ld\n", t->sc.nr);
  }
  for (int k = 0; k < t->npcs && k < SHOWN_FRAMES; k++) {
    char frame[320];
    tm_symtabs_format(s->syms, t->pcs[k], k > 0, frame, sizeof frame);
    tm_readable_frame(frame, sizeof frame);
    printf("%s%s", k ? " <- " : "          at ", frame);
  }
  if (t->npcs) printf("\n");
}

static void print_cycle(tm_snapshot *s, const tm_cycle *c) {
  printf("deadlock:");
  for (size_t k = 0; k < c->n; k++) {
    const tm_thread_state *t = c->members[k], *next = c->members[(k + 1) % c->n];
    char word[160];
    tm_symtabs_format(s->syms, t->futex.word, false, word, sizeof word);
    printf("%s %d (%s) waits for %s 0x%lx %s held by %d (%s)", k ? ";" : "", (int)t->tid, t->name,
           tm_wait_kind_name(t->wait.kind), (unsigned long)t->futex.word, word, (int)next->tid,
           next->name);
  }
  printf("\n");
}

static const char help_text[] =
    "usage: threadmon-attach-peek PID\n"
    "\n"
    "One look at a running process from outside, without stopping it, signalling it or\n"
    "loading anything into it: every thread's state, the system call or lock it waits in,\n"
    "the lock's owner where the lock records one, its call stack, a Go program's threads\n"
    "named from its runtime, and any deadlock (a cycle of threads waiting for each other).\n"
    "Reading another user's process needs root (or CAP_SYS_PTRACE).\n"
    "\n"
    "Exit status: 0, 2 when a deadlock was found, 1 on bad usage or a process that\n"
    "cannot be seen.\n";

int main(int argc, char **argv) {
  if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    fputs(help_text, stdout);
    return 0;
  }
  char *end;
  long pid = argc == 2 ? strtol(argv[1], &end, 10) : 0;
  if (argc != 2 || *end || pid <= 0) {
    fprintf(stderr, "usage: threadmon-attach-peek PID (--help: what it shows)\n");
    return 1;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  tm_access a;
  tm_access_check((pid_t)pid, &a);
  if (!a.visible) {
    fprintf(stderr, "threadmon-attach-peek: %s\n", a.refusals[0]);
    return 1;
  }
  tm_snapshot s;
  if (!tm_snapshot_take((pid_t)pid, &s)) {
    fprintf(stderr, "threadmon-attach-peek: PID %ld: %s\n", pid, strerror(errno));
    return 1;
  }
  tm_go_runtime go = {0};
  if (s.maps_ok) tm_go_runtime_read((pid_t)pid, &s.maps, s.syms, &go);
  tm_cycle cycles[CYCLES_SHOWN];
  size_t ncycles = tm_find_deadlocks(&s, cycles, CYCLES_SHOWN);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;

  printf("PID %ld: %zu threads, read in %.1f ms\n", pid, s.nthreads, ms);
  for (int i = 0; i < a.nrefusals; i++) printf("%s\n", a.refusals[i]);
  printf("%s\n", a.mode);
  for (int i = 0; i < s.notes.n; i++) printf("skipped: %s\n", s.notes.line[i]);
  if (s.notes.more) printf("skipped: %u more\n", s.notes.more);
  if (go.read)
    printf("go: %zu threads (Ms) named from runtime.allm\n", go.nms);
  else if (go.found)
    printf("go: %s\n", go.why);
  for (size_t i = 0; i < s.nthreads; i++) print_thread(&s, &go, &s.threads[i]);
  for (size_t i = 0; i < ncycles && i < CYCLES_SHOWN; i++) print_cycle(&s, &cycles[i]);
  if (ncycles == 0 && a.ptrace) printf("no deadlock among lock owners this tool can read\n");
  tm_go_runtime_free(&go);
  tm_snapshot_free(&s);
  return ncycles ? 2 : 0;
}
