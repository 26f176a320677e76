/* tm-bench-swarm: N threads that mostly sleep, block or fight over locks, for
 * measuring what a sampling probe costs as the thread count grows.
 *
 *   tm-bench-swarm MODE THREADS SECONDS [PROBE_COMM_PREFIX]
 *
 * MODE: idle  (every thread blocked in pthread_cond_wait)
 *       light (a little work, then a 100 ms sleep: a mostly idle server)
 *       busy  (short critical sections on 4 shared mutexes, 1 ms naps)
 *       burst (sched_yield in a loop for the first 250 ms, then light: a
 *             switch storm at start-up, then a mostly idle server; the
 *             window starts after the storm)
 *       server (a server's pools, named: 75% "worker-N" that take a shared
 *              queue lock, work and nap 20 ms, one in 97 of them stuck
 *              behind a "stall" thread's lock instead; 20% "io-N" sleeping
 *              50 ms at a time; 5% "conn-N" waiting on a condvar: what the
 *              display's pools are shown on)
 *       ticker (threads named "tm-ticker" that wake every 10 ms on absolute
 *              deadlines and do nothing else: what waking like a 10 ms
 *              sampler costs on this machine, the floor under any sampler)
 *
 * After all threads exist and a short settling time, it measures a window of
 * SECONDS and prints one JSON line with the CPU time that the threads whose
 * name starts with PROBE_COMM_PREFIX (default "threadmon") used in it, read
 * from /proc/self/task/TID/schedstat (nanoseconds, unlike stat's ticks). */
#include "bench_common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum swarm_mode { MODE_IDLE, MODE_LIGHT, MODE_BUSY, MODE_TICKER, MODE_BURST, MODE_SERVER };

static enum swarm_mode mode;
static atomic_int stopping;
static pthread_mutex_t idle_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t busy_mutexes[4] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};

static void nap_ns(long ns) {
  struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
  nanosleep(&ts, NULL);
}

/* A few microseconds of arithmetic the compiler cannot drop. */
static unsigned spin_work(unsigned seed, int rounds) {
  volatile unsigned x = seed;
  for (int i = 0; i < rounds; i++)
    x = x * 1103515245u + 12345u;
  return x;
}

static pthread_mutex_t queue_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t stall_mutex = PTHREAD_MUTEX_INITIALIZER;

static void *server_worker(void *arg) {
  unsigned i = (unsigned)(uintptr_t)arg, seed = i;
  char name[16];
  snprintf(name, sizeof name, "worker-%u", i);
  pthread_setname_np(pthread_self(), name);
  const int stuck = i % 97 == 0;
  while (!atomic_load(&stopping)) {
    pthread_mutex_t *m = stuck ? &stall_mutex : &queue_mutex;
    pthread_mutex_lock(m);
    seed = spin_work(seed, 200);
    pthread_mutex_unlock(m);
    seed = spin_work(seed, 2000);
    nap_ns(20 * 1000000L);
  }
  return NULL;
}

static void *server_io(void *arg) {
  char name[16];
  snprintf(name, sizeof name, "io-%u", (unsigned)(uintptr_t)arg);
  pthread_setname_np(pthread_self(), name);
  while (!atomic_load(&stopping))
    nap_ns(50 * 1000000L);
  return NULL;
}

static void *server_conn(void *arg) {
  char name[16];
  snprintf(name, sizeof name, "conn-%u", (unsigned)(uintptr_t)arg);
  pthread_setname_np(pthread_self(), name);
  pthread_mutex_lock(&idle_mutex);
  while (!atomic_load(&stopping))
    pthread_cond_wait(&idle_cond, &idle_mutex);
  pthread_mutex_unlock(&idle_mutex);
  return NULL;
}

/* Holds the lock the stuck workers want, letting go for a moment every 300 ms. */
static void *server_stall(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "stall");
  while (!atomic_load(&stopping)) {
    pthread_mutex_lock(&stall_mutex);
    nap_ns(300 * 1000000L);
    pthread_mutex_unlock(&stall_mutex);
    nap_ns(1000000L);
  }
  return NULL;
}

static void *(*server_routine(long i))(void *) {
  if (i == 0)
    return server_stall;
  switch (i % 20) {
  case 15: case 16: case 17: case 18: return server_io;
  case 19: return server_conn;
  default: return server_worker;
  }
}

static void *swarm_worker(void *arg) {
  unsigned seed = (unsigned)(uintptr_t)arg;
  switch (mode) {
  case MODE_IDLE:
    pthread_mutex_lock(&idle_mutex);
    while (!atomic_load(&stopping))
      pthread_cond_wait(&idle_cond, &idle_mutex);
    pthread_mutex_unlock(&idle_mutex);
    break;
  case MODE_BURST: {
    uint64_t until = bench_now_ns() + 250 * 1000000ull;
    while (bench_now_ns() < until) sched_yield();
  }
  /* fall through */
  case MODE_LIGHT:
    while (!atomic_load(&stopping)) {
      seed = spin_work(seed, 500);
      nap_ns(100 * 1000000L);
    }
    break;
  case MODE_SERVER: /* runs server_routine()'s threads instead */
    break;
  case MODE_TICKER: {
    pthread_setname_np(pthread_self(), "tm-ticker");
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&stopping)) {
      next.tv_nsec += 10 * 1000000L;
      if (next.tv_nsec >= 1000000000L) {
        next.tv_nsec -= 1000000000L;
        next.tv_sec++;
      }
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    break;
  }
  case MODE_BUSY:
    for (unsigned i = 0; !atomic_load(&stopping); i++) {
      pthread_mutex_t *m = &busy_mutexes[(seed + i) % 4];
      pthread_mutex_lock(m);
      seed = spin_work(seed, 300);
      pthread_mutex_unlock(m);
      if (i % 50 == 49)
        nap_ns(1000000L);
    }
    break;
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: tm-bench-swarm idle|light|busy|server|ticker|burst THREADS SECONDS [PROBE_COMM_PREFIX]\n");
    return 2;
  }
  if (strcmp(argv[1], "idle") == 0)
    mode = MODE_IDLE;
  else if (strcmp(argv[1], "light") == 0)
    mode = MODE_LIGHT;
  else if (strcmp(argv[1], "busy") == 0)
    mode = MODE_BUSY;
  else if (strcmp(argv[1], "ticker") == 0)
    mode = MODE_TICKER;
  else if (strcmp(argv[1], "burst") == 0)
    mode = MODE_BURST;
  else if (strcmp(argv[1], "server") == 0)
    mode = MODE_SERVER;
  else {
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
  }
  long nthreads = bench_parse_count(argv[2], "THREADS");
  double seconds = atof(argv[3]);
  const char *prefix = argc > 4 ? argv[4] : "threadmon";

  pthread_t *threads = calloc((size_t)nthreads, sizeof *threads);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024); /* 5,000 threads fit easily */
  for (long i = 0; i < nthreads; i++)
    if (pthread_create(&threads[i], &attr, mode == MODE_SERVER ? server_routine(i) : swarm_worker,
                       (void *)(uintptr_t)(i + 1)) != 0) {
      fprintf(stderr, "pthread_create failed at thread %ld\n", i);
      return 2;
    }

  nap_ns(300 * 1000000L); /* let the probe discover every thread first */
  int probe_threads = 0;
  uint64_t cpu0 = bench_probe_cpu_ns(prefix, &probe_threads);
  uint64_t t0 = bench_now_ns();
  nap_ns((long)(seconds * 1e9));
  uint64_t cpu1 = bench_probe_cpu_ns(prefix, &probe_threads);
  uint64_t t1 = bench_now_ns();

  atomic_store(&stopping, 1);
  pthread_mutex_lock(&idle_mutex);
  pthread_cond_broadcast(&idle_cond);
  pthread_mutex_unlock(&idle_mutex);
  for (long i = 0; i < nthreads; i++)
    pthread_join(threads[i], NULL);
  free(threads);

  printf("{\"mode\":\"%s\",\"threads\":%ld,\"window_ns\":%llu,\"probe_threads\":%d,"
         "\"probe_cpu_ns\":%llu}\n",
         argv[1], nthreads, (unsigned long long)(t1 - t0), probe_threads, (unsigned long long)(cpu1 - cpu0));
  return 0;
}
