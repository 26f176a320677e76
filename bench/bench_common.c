#include "bench_common.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int read_text(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, size - 1, f);
  fclose(f);
  buf[n] = '\0';
  return 0;
}

uint64_t bench_probe_cpu_ns(const char *prefix, int *n) {
  uint64_t sum = 0;
  *n = 0;
  DIR *d = opendir("/proc/self/task");
  if (!d) return 0;
  struct dirent *de;
  char path[64], buf[128];
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "/proc/self/task/%.16s/comm", de->d_name);
    if (read_text(path, buf, sizeof buf) != 0 || strncmp(buf, prefix, strlen(prefix)) != 0)
      continue;
    snprintf(path, sizeof path, "/proc/self/task/%.16s/schedstat", de->d_name);
    if (read_text(path, buf, sizeof buf) == 0) {
      sum += strtoull(buf, NULL, 10);
      (*n)++;
    }
  }
  closedir(d);
  return sum;
}
