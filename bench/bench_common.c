#include "bench_common.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t bench_thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *idle_main(void *arg) {
  (void)arg;
  for (;;)
    pause();
  return NULL;
}

void bench_start_idle_thread(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, idle_main, NULL) != 0) {
    fprintf(stderr, "cannot start the idle thread\n");
    exit(2);
  }
  pthread_detach(t);
}

int bench_pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set);
}

long bench_parse_count(const char *text, const char *what) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v <= 0) {
    fprintf(stderr, "bad %s: %s\n", what, text);
    exit(2);
  }
  return v;
}
