/* tm-bench-hiddenseen: what one sighting of a thread waiting on a hidden
 * lock costs the sampler (probe/core/hidden.c), for instruction counts:
 *
 *   valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
 *     tm-bench-hiddenseen TICKS LINES
 *
 * A thread waits in futex() on a word on the heap (an internal lock: no
 * interposed object holds it); tm_hidden_seen is called for it at TICKS
 * 10 ms ticks, with its syscall line at every tick when LINES is 1 (a
 * thread that blocks anew each tick: a stack scan every TM_HIDDEN_SCAN_NS)
 * or only at the first (one long wait). The difference between two TICKS
 * divided by theirs is the cost per sighting; the scans' system calls are
 * the kernel's, which cachegrind does not count. */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "futex_line.h"
#include "hidden.h"

static _Atomic uint32_t *word;
static _Atomic uint32_t waiter_tid;

static void *waiter(void *arg) {
  (void)arg;
  atomic_store(&waiter_tid, (uint32_t)syscall(SYS_gettid));
  while (atomic_load(word) == 0) syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, NULL);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: tm-bench-hiddenseen TICKS LINES(0|1)\n");
    return 2;
  }
  int ticks = atoi(argv[1]), lines = atoi(argv[2]);
  word = calloc(16, sizeof *word);
  pthread_t th;
  if (!word || pthread_create(&th, NULL, waiter, NULL) != 0) return 1;
  uint32_t tid;
  while (!(tid = atomic_load(&waiter_tid))) sched_yield();
  char line[256];
  if (!tm_wait_futex_line(tid, line, sizeof line)) return 1;
  tm_hidden h = {0};
  const uint64_t tick_ns = 10000000u;
  int counted = 0;
  for (int i = 0; i < ticks; i++)
    counted += tm_hidden_seen(&h, tid, (uint64_t)(uintptr_t)word, i == 0 || lines ? line : NULL,
                              1000000000u + (uint64_t)i * tick_ns, tick_ns);
  printf("{\"ticks\":%d,\"counted\":%d}\n", ticks, counted);
  atomic_store(word, 1);
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL);
  pthread_join(th, NULL);
  tm_hidden_free(&h);
  return counted == ticks ? 0 : 1;
}
