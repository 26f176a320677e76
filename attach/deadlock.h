/* Deadlocks in a snapshot: the wait-for graph has an edge from each thread
 * that waits for an owner (a mutex's holder, a joined thread) to it; every
 * thread has at most one, so each cycle is found by following edges. A
 * cycle is a set of threads none of which can go on. */
#ifndef THREADMON_ATTACH_DEADLOCK_H
#define THREADMON_ATTACH_DEADLOCK_H

#include <stddef.h>

#include "snapshot.h"

#define TM_CYCLE_MAX 64

typedef struct tm_cycle {
  /* Threads in wait order: members[k] waits for members[k + 1] (and the
   * last for the first), on members[k]'s futex word. */
  const tm_thread_state *members[TM_CYCLE_MAX];
  size_t n;
} tm_cycle;

/* Fills cycles[0..max); returns how many there are (may exceed max). */
size_t tm_find_deadlocks(const tm_snapshot *s, tm_cycle *cycles, size_t max);

#endif
