/* mutex_loop: the ThreadMon paper's mutex loop (section 5.1).
 *
 * T threads share a set of M mutexes. Each iteration picks a mutex at
 * random, locks it, loops a small fixed work, unlocks it, then loops a
 * random amount of work. Collisions should be rare, so the run time should
 * scale with CPUs -- unless the random number generator has a lock of its
 * own: with --rng rand every call goes through glibc's hidden random() lock
 * (the paper's erand48 finding); --rng rand_r keeps the state per thread.
 *
 * The defaults make that lock matter as it did in the paper: one thread
 * per CPU, 64 mutexes (rare collisions), and short work between calls, so
 * two rand() calls every few hundred nanoseconds meet on glibc's lock. On
 * a 2-CPU VM two threads then take about 3x as long with rand() as with
 * rand_r() (docs/hidden-locks.md).
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wl.h"

#define MAX_MUTEXES 1024

static pthread_mutex_t mutexes[MAX_MUTEXES];
static int nmutexes = 64, iterations = 2000000, hold_loops = 20, max_free_loops = 400;
static int use_rand_r;

typedef struct worker {
  pthread_t thread;
  int index;
  unsigned seed;
  /* Its own truth: tid, lifetime, CPU clock and run-queue time. */
  long tid;
  double life_s, cpu_s, runq_s;
} worker;

static int next_random(worker *w) { return use_rand_r ? rand_r(&w->seed) : rand(); }

static void *work(void *arg) {
  worker *w = arg;
  double born = wl_now_s();
  w->tid = syscall(SYS_gettid);
  wl_name_self("looper", w->index);
  for (int i = 0; i < iterations; i++) {
    pthread_mutex_t *m = &mutexes[next_random(w) % nmutexes];
    wl_check(pthread_mutex_lock(m), "pthread_mutex_lock");
    wl_busy_loop((uint64_t)hold_loops);
    pthread_mutex_unlock(m);
    wl_busy_loop((uint64_t)(next_random(w) % (max_free_loops + 1)));
  }
  w->cpu_s = wl_thread_cpu_s();
  w->runq_s = wl_run_delay_s();
  w->life_s = wl_now_s() - born;
  return NULL;
}

int main(int argc, char **argv) {
  int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (threads < 2) threads = 2;
  const char *rng = "rand";
  const wl_flag flags[] = {
      {"threads", WL_INT, &threads, "number of threads (one per CPU, at least 2)"},
      {"mutexes", WL_INT, &nmutexes, "size of the mutex set"},
      {"iterations", WL_INT, &iterations, "iterations per thread"},
      {"hold-loops", WL_INT, &hold_loops, "work loops while holding a mutex"},
      {"max-free-loops", WL_INT, &max_free_loops, "upper bound of the random work between locks"},
      {"rng", WL_STRING, &rng, "random number generator: rand (hidden lock) or rand_r"},
  };
  wl_parse_flags(argc, argv, "The ThreadMon paper's mutex loop.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  if (strcmp(rng, "rand") != 0 && strcmp(rng, "rand_r") != 0) {
    fprintf(stderr, "mutex_loop: --rng must be rand or rand_r, not %s\n", rng);
    return 2;
  }
  use_rand_r = strcmp(rng, "rand_r") == 0;
  if (nmutexes < 1 || nmutexes > MAX_MUTEXES || threads < 1) {
    fprintf(stderr, "mutex_loop: need 1..%d mutexes and at least one thread\n", MAX_MUTEXES);
    return 2;
  }
  for (int i = 0; i < nmutexes; i++) wl_check(pthread_mutex_init(&mutexes[i], NULL), "mutex init");
  worker *ws = calloc((size_t)threads, sizeof *ws);
  if (!ws) return 1;
  srand(1);
  double start = wl_now_s();
  for (int i = 0; i < threads; i++) {
    ws[i].index = i;
    ws[i].seed = (unsigned)i + 1;
    wl_check(pthread_create(&ws[i].thread, NULL, work, &ws[i]), "pthread_create");
  }
  for (int i = 0; i < threads; i++) wl_check(pthread_join(ws[i].thread, NULL), "pthread_join");
  printf("{\"workload\":\"mutex_loop\",\"wall_s\":%.6f,\"rng\":\"%s\",\"threads\":%d,"
         "\"mutexes\":%d,\"iterations\":%d,\"acquisitions\":%ld,\"loopers\":[",
         wl_now_s() - start, rng, threads, nmutexes, iterations, (long)threads * iterations);
  for (int i = 0; i < threads; i++) {
    const worker *w = &ws[i];
    double life = w->life_s > 0 ? w->life_s : 1;
    printf("%s{\"tid\":%ld,\"life_s\":%.6f,\"on_cpu_pct\":%.2f,\"runnable_pct\":%.2f}",
           i ? "," : "", w->tid, w->life_s, 100.0 * w->cpu_s / life,
           w->runq_s >= 0 ? 100.0 * w->runq_s / life : -1.0);
  }
  printf("]}\n");
  free(ws);
  return 0;
}
