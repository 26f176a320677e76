/* barrier_fine / barrier_coarse: the M-to-N study's appendix workload.
 *
 * Each thread repeatedly increments its own NUM_ROWS x NUM_COLS matrix (the
 * simulated work), then meets the others at a barrier built from a mutex and
 * a condition variable (the appendix's code, plus a generation count so a
 * spurious wakeup cannot release a thread early). --pthread-barrier uses
 * pthread_barrier_wait instead. The fine-grained build (2 x 2) synchronises
 * constantly; the coarse-grained one (500 x 500) rarely. Defaults come from
 * the build (BARRIER_ROWS, BARRIER_ITERATIONS).
 *
 * Truth printed per worker: on_cpu_pct is CPU time running its own code
 * (its CPU clock minus the CPU time spent inside pthread_barrier_wait or
 * pthread_cond_wait, which a profiler shows as blocked), barrier_pct and
 * cond_wait_pct wall time inside the barrier and the cond wait.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wl.h"

#ifndef BARRIER_ROWS
#error "build with -DBARRIER_ROWS=n -DBARRIER_ITERATIONS=n -DBARRIER_NAME=\"...\""
#endif

static pthread_mutex_t barrier_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t barrier_cond = PTHREAD_COND_INITIALIZER;
static int count, generation;
static pthread_barrier_t pbarrier;

static int threads = 4, rows = BARRIER_ROWS, iterations = BARRIER_ITERATIONS, use_pbarrier;

typedef struct worker {
  pthread_t thread;
  int index;
  pid_t tid;
  int *mat;
  long locks;      /* barrier_mtx acquisitions, counting cond_wait's re-lock */
  double hold_s;   /* wall time holding barrier_mtx: from each acquisition (the
                      lock's or cond_wait's return) to the unlock or cond_wait call */
  double wait_s;   /* wall time in the barrier */
  double cond_s;   /* wall time inside pthread_cond_wait */
  double cpu_s, lifetime_s;
  double blocked_cpu_s; /* CPU time inside the blocking calls (not running program code) */
} worker;

static void cond_barrier(worker *w) {
  pthread_mutex_lock(&barrier_mtx);
  double held = wl_now_s();
  w->locks++;
  if (++count == threads) {
    count = 0;
    generation++;
    pthread_cond_broadcast(&barrier_cond);
  } else {
    int gen = generation;
    while (gen == generation) {
      /* The CPU clock is a system call: read outside the timed window. */
      double c0 = wl_thread_cpu_s(), t0 = wl_now_s();
      w->hold_s += t0 - held;
      pthread_cond_wait(&barrier_cond, &barrier_mtx);
      held = wl_now_s();
      w->cond_s += held - t0;
      w->blocked_cpu_s += wl_cpu_inside_s(c0);
      w->locks++; /* pthread_cond_wait returns holding the mutex again */
    }
  }
  w->hold_s += wl_now_s() - held;
  pthread_mutex_unlock(&barrier_mtx);
}

static void *work(void *arg) {
  worker *w = arg;
  wl_name_self("worker", w->index);
  w->tid = gettid();
  double start = wl_now_s(), cpu0 = wl_thread_cpu_s();
  for (int iter = 0; iter < iterations; iter++) {
    for (int i = 0; i < rows; i++)
      for (int j = 0; j < rows; j++) ((volatile int *)w->mat)[i * rows + j]++;
    double c0 = use_pbarrier ? wl_thread_cpu_s() : 0, t0 = wl_now_s();
    if (use_pbarrier) {
      pthread_barrier_wait(&pbarrier);
    } else {
      cond_barrier(w);
    }
    w->wait_s += wl_now_s() - t0;
    if (use_pbarrier) w->blocked_cpu_s += wl_cpu_inside_s(c0);
  }
  w->cpu_s = wl_thread_cpu_s() - cpu0;
  w->lifetime_s = wl_now_s() - start;
  return NULL;
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"threads", WL_INT, &threads, "number of threads"},
      {"rows", WL_INT, &rows, "NUM_ROWS = NUM_COLS of each thread's matrix"},
      {"iterations", WL_INT, &iterations, "barrier rounds"},
      {"pthread-barrier", WL_BOOL, &use_pbarrier, "use pthread_barrier_wait instead of mutex+cond"},
  };
  wl_parse_flags(argc, argv, "Work then meet at a barrier (M-to-N study appendix).", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  if (threads < 1 || rows < 1) {
    fprintf(stderr, "%s: need at least one thread and one row\n", BARRIER_NAME);
    return 2;
  }
  if (use_pbarrier) wl_check(pthread_barrier_init(&pbarrier, NULL, (unsigned)threads), "barrier");
  worker *ws = calloc((size_t)threads, sizeof *ws);
  if (!ws) return 1;
  double start = wl_now_s();
  for (int i = 0; i < threads; i++) {
    ws[i].index = i;
    ws[i].mat = calloc((size_t)rows * (size_t)rows, sizeof(int));
    if (!ws[i].mat) return 1;
    wl_check(pthread_create(&ws[i].thread, NULL, work, &ws[i]), "pthread_create");
  }
  long locks = 0;
  double hold_s = 0;
  for (int i = 0; i < threads; i++) {
    wl_check(pthread_join(ws[i].thread, NULL), "pthread_join");
    locks += ws[i].locks;
    hold_s += ws[i].hold_s;
  }
  printf(
      "{\"workload\":\"%s\",\"wall_s\":%.6f,\"barrier\":\"%s\",\"threads\":%d,\"rows\":%d,"
      "\"iterations\":%d,\"mutex_acquisitions\":%ld,\"mutex_hold_s\":%.6f,\"workers\":[",
      BARRIER_NAME, wl_now_s() - start, use_pbarrier ? "pthread_barrier" : "mutex_cond", threads,
      rows, iterations, locks, hold_s);
  for (int i = 0; i < threads; i++) {
    const worker *w = &ws[i];
    printf("%s{\"tid\":%d,\"lifetime_s\":%.6f,\"cpu_s\":%.6f,\"barrier_wait_s\":%.6f,"
           "\"on_cpu_pct\":%.2f,\"barrier_pct\":%.2f,\"cond_wait_pct\":%.2f}",
           i ? "," : "", (int)w->tid, w->lifetime_s, w->cpu_s, w->wait_s,
           100.0 * (w->cpu_s - w->blocked_cpu_s) / w->lifetime_s, 100.0 * w->wait_s / w->lifetime_s,
           100.0 * w->cond_s / w->lifetime_s);
    free(ws[i].mat);
  }
  printf("]}\n");
  free(ws);
  if (use_pbarrier) pthread_barrier_destroy(&pbarrier);
  return 0;
}
