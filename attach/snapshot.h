/* One look at a running process from outside: every thread's state, and
 * for each one blocked in a futex wait, the word, the kind of wait, the
 * owner when the word names one, and its call chain. Nothing is stopped,
 * signalled or written: /proc files and process_vm_readv only.
 *
 * Owners: a glibc pthread_mutex_t keeps its owner's tid in __data.__owner
 * (the word + 8); a PI mutex's word holds it (FUTEX_TID_MASK); a glibc
 * rwlock held for writing keeps its writer in __cur_writer; a joining
 * thread sleeps on the joined thread's tid, which is also the value it
 * expected. A mutex owner that is no thread of the target any more ended
 * while holding it (owner_gone): a common way for a server to hang. */
#ifndef THREADMON_ATTACH_SNAPSHOT_H
#define THREADMON_ATTACH_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "elfsyms.h"
#include "futexwait.h"
#include "maps.h"
#include "notes.h"
#include "rcfi.h"
#include "waitkind.h"

#define TM_SNAPSHOT_FRAMES 32

typedef struct tm_thread_state {
  pid_t tid;
  char name[17];
  char state;       /* /proc stat: R, S, D, T, t, Z ... */
  bool syscall_ok;  /* its syscall file could be read (needs ptrace access) */
  tm_syscall sc;
  tm_futex_wait futex;
  tm_wait_class wait;
  pid_t owner;      /* thread it waits for, 0 when unknown or none */
  pid_t owner_gone; /* a mutex's owner that has ended, 0 when none */
  uintptr_t pcs[TM_SNAPSHOT_FRAMES];
  int npcs, exact; /* frames, the first `exact` of them unwound (rstack.h) */
} tm_thread_state;

typedef struct tm_snapshot {
  pid_t pid;
  tm_maps maps;
  tm_symtabs *syms;
  tm_rcfi *cfi;
  tm_thread_state *threads;
  size_t nthreads;
  bool maps_ok; /* its memory map could be read (needs ptrace access) */
  tm_notes notes; /* what was skipped as making no sense, one line each */
} tm_snapshot;

/* The tid of the thread that a wait of this kind on fw waits for, read
 * from the target's word (0 when the word names none). */
pid_t tm_wait_owner(pid_t pid, const tm_futex_wait *fw, tm_wait_kind kind);

/* Reads the whole state; false (errno set) when the process is gone. */
bool tm_snapshot_take(pid_t pid, tm_snapshot *s);
void tm_snapshot_free(tm_snapshot *s);

/* The thread with that tid, NULL when none. */
const tm_thread_state *tm_snapshot_thread(const tm_snapshot *s, pid_t tid);

#endif
