/* A test's (or benchmark's) own thread blocked in futex(): its syscall file
 * line, as the sampler reads it, once it waits. */
#ifndef TM_FUTEX_LINE_H
#define TM_FUTEX_LINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Reads /proc/self/task/TID/syscall into line until it says futex (202),
 * for up to 2 s; false if it never did. */
static inline bool tm_wait_futex_line(uint32_t tid, char *line, size_t n) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%u/syscall", tid);
  for (int tries = 0; tries < 2000; tries++) {
    FILE *f = fopen(path, "r");
    size_t got = f ? fread(line, 1, n - 1, f) : 0;
    if (f) fclose(f);
    line[got] = 0;
    if (!strncmp(line, "202 ", 4)) return true;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return false;
}

#endif
