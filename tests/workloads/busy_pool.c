/* busy_pool: a server's thread pool under load, for attaching to while it
 * runs (threadmon record -p PID --duration S).
 *
 * A producer queues jobs at a fixed rate under pool_lock and signals
 * pool_ready; W workers wait on pool_ready for a job, take it under
 * pool_lock and run it (spinning --job-us of CPU), so they spend their life
 * in the mutex, the condition variable and on a CPU. P spinners burn CPU all
 * the time. The pool runs --warm-s before it writes "ready" on stderr (so
 * that an attach comes after its threads have used seconds of CPU and waited
 * seconds on both objects: what an attacher must not count), then --seconds
 * more. At exit the truth line has every thread's CPU time and life, and the
 * same between the "ready" line and the end (its own clocks).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wl.h"

pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t pool_ready = PTHREAD_COND_INITIALIZER;

typedef struct thread_truth {
  pthread_t thread;
  const char *role;
  int index;
  pid_t tid;
  double cpu_s, life_s, cpu_after_ready_s;
} thread_truth;

static int workers = 8, spinners = 2;
static double job_us = 200, jobs_per_s = 4000, warm_s = 1.5, seconds = 4;
static long queued;
static atomic_int stop;
static _Atomic double ready_at; /* 0 until "ready" */

/* The thread's CPU time as the "ready" line went out, read by itself at its
 * first loop after it. */
static void note_ready(thread_truth *t, double *cpu_at_ready) {
  if (*cpu_at_ready < 0 && ready_at > 0 && wl_now_s() >= ready_at)
    *cpu_at_ready = wl_thread_cpu_s();
  (void)t;
}

static void finish(thread_truth *t, double start, double cpu_at_ready) {
  t->cpu_s = wl_thread_cpu_s();
  t->life_s = wl_now_s() - start;
  t->cpu_after_ready_s = cpu_at_ready >= 0 ? t->cpu_s - cpu_at_ready : t->cpu_s;
}

static void *worker(void *arg) {
  thread_truth *t = arg;
  wl_name_self("pool", t->index);
  t->tid = gettid();
  double start = wl_now_s(), at_ready = -1;
  for (;;) {
    wl_check(pthread_mutex_lock(&pool_lock), "pthread_mutex_lock");
    while (!queued && !atomic_load(&stop)) pthread_cond_wait(&pool_ready, &pool_lock);
    if (!queued) {
      pthread_mutex_unlock(&pool_lock);
      break;
    }
    queued--;
    pthread_mutex_unlock(&pool_lock);
    wl_spin_cpu_ms(job_us / 1000);
    note_ready(t, &at_ready);
  }
  finish(t, start, at_ready);
  return NULL;
}

static void *spinner(void *arg) {
  thread_truth *t = arg;
  wl_name_self("spin", t->index);
  t->tid = gettid();
  double start = wl_now_s(), at_ready = -1;
  while (!atomic_load(&stop)) {
    wl_spin_cpu_ms(1);
    note_ready(t, &at_ready);
  }
  finish(t, start, at_ready);
  return NULL;
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"workers", WL_INT, &workers, "pool threads"},
      {"spinners", WL_INT, &spinners, "threads that only burn CPU"},
      {"job-us", WL_DOUBLE, &job_us, "CPU a job takes, us"},
      {"jobs-per-s", WL_DOUBLE, &jobs_per_s, "jobs queued a second"},
      {"warm-s", WL_DOUBLE, &warm_s, "seconds before \"ready\" on stderr"},
      {"seconds", WL_DOUBLE, &seconds, "seconds after it"},
  };
  wl_parse_flags(argc, argv, "a loaded thread pool to attach to", flags, 6);
  int n = workers + spinners;
  thread_truth *th = calloc((size_t)n, sizeof *th);
  for (int i = 0; i < n; i++) {
    th[i].index = i < workers ? i : i - workers;
    th[i].role = i < workers ? "worker" : "spinner";
    wl_check(pthread_create(&th[i].thread, NULL, i < workers ? worker : spinner, &th[i]),
             "pthread_create");
  }
  double start = wl_now_s(), end = start + warm_s + seconds;
  double gap = 1.0 / jobs_per_s, next = start;
  while (wl_now_s() < end) {
    if (!ready_at && wl_now_s() >= start + warm_s) {
      ready_at = wl_now_s();
      fprintf(stderr, "ready\n");
      fflush(stderr);
    }
    /* A batch of the jobs due, then a sleep: a millisecond's worth at once. */
    long due = 0;
    for (double now = wl_now_s(); next <= now; next += gap) due++;
    if (due) {
      pthread_mutex_lock(&pool_lock);
      queued += due;
      pthread_cond_broadcast(&pool_ready);
      pthread_mutex_unlock(&pool_lock);
    }
    wl_sleep_ms(1);
  }
  pthread_mutex_lock(&pool_lock);
  atomic_store(&stop, 1);
  queued = 0;
  pthread_cond_broadcast(&pool_ready);
  pthread_mutex_unlock(&pool_lock);
  for (int i = 0; i < n; i++) pthread_join(th[i].thread, NULL);
  double after = wl_now_s() - ready_at;
  printf("{\"workload\":\"busy_pool\",\"pid\":%d,\"after_ready_s\":%.6f,\"threads\":[",
         (int)getpid(), after);
  for (int i = 0; i < n; i++)
    printf("%s{\"tid\":%d,\"role\":\"%s\",\"cpu_s\":%.6f,\"life_s\":%.6f,"
           "\"cpu_after_ready_s\":%.6f}",
           i ? "," : "", (int)th[i].tid, th[i].role, th[i].cpu_s, th[i].life_s,
           th[i].cpu_after_ready_s);
  printf("]}\n");
  free(th);
  return 0;
}
