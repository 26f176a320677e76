/* What a test target says about itself, for test_attach to compare with
 * what it reads from outside. One line each on stdout:
 *   truth TID KIND ADDR SIZE OWNER   thread TID waits as KIND (waitkind.h's
 *                                    name) on a futex word inside
 *                                    [ADDR, ADDR + SIZE), held by OWNER
 *                                    (0: none to check; -TID: TID,
 *                                    which has ended holding it)
 *   cycle TID TID                    the two threads deadlock
 *   ready                            every thread above is asleep in it */
#ifndef THREADMON_ATTACH_TARGET_TRUTH_H
#define THREADMON_ATTACH_TARGET_TRUTH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* Waits until thread tid sleeps in a futex call (x86-64: 202, or
 * futex_waitv 449): its syscall file names the call. */
static inline void truth_wait_asleep(pid_t tid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
  for (int tries = 0; tries < 5000; tries++) {
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(line, 1, sizeof line - 1, f) : 0;
    if (f) fclose(f);
    line[n] = 0;
    if (!strncmp(line, "202 ", 4) || !strncmp(line, "449 ", 4)) return;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  fprintf(stderr, "target: thread %d never slept in a futex wait\n", (int)tid);
  exit(1);
}

#endif
