/* matrix_mult: the ThreadMon paper's matrix multiply (section 5.3).
 *
 * T threads (default 6: more threads than this 2-CPU machine has) each
 * compute their share of the rows of C = A x B, then wait for the others at
 * a barrier; repeated for --rounds. With more threads than CPUs the kernel
 * time-slices them, so every worker is visibly runnable.
 *
 * Truth printed per worker: on_cpu_pct is its CPU clock outside
 * pthread_barrier_wait, barrier_pct the wall time inside it, runnable_pct
 * the run-queue time (schedstat run_delay) outside it: a wake-up from the
 * barrier waits for a CPU inside the call, where a profiler shows the thread
 * blocked at the barrier. stolen_pct is the rest, time the hypervisor took
 * while the thread was on a CPU (its CPU clock does not count it).
 * A worker's life starts when main asks for it: with more threads than
 * CPUs its wait for a first CPU is run-queue time too (its run_delay counts
 * from the create, at 0).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wl.h"

static int threads = 6, size = 500, rounds = 10;
static double *a, *b, *c;
static pthread_barrier_t barrier;

typedef struct worker {
  pthread_t thread;
  int index;
  pid_t tid;
  double created_s; /* main's clock before pthread_create */
  double lifetime_s, cpu_s, barrier_s;
  double runq_s;        /* run_delay outside the barrier wait */
  double blocked_cpu_s; /* CPU time inside the barrier wait */
} worker;

/* Rows [first, last) of C. */
static void multiply_rows(int first, int last) {
  for (int i = first; i < last; i++) wl_matrix_row(c, a, b, size, i);
}

static void *work(void *arg) {
  worker *w = arg;
  wl_name_self("mult", w->index);
  w->tid = gettid();
  /* A new thread's CPU clock and run_delay start at 0 at the create. */
  double start = w->created_s, delay0 = wl_run_delay_s() < 0 ? -1 : 0;
  double barrier_delay_s = 0; /* run_delay accrued inside the barrier wait */
  int first = (int)((long)size * w->index / threads);
  int last = (int)((long)size * (w->index + 1) / threads);
  for (int r = 0; r < rounds; r++) {
    multiply_rows(first, last);
    /* The schedstat reads sit inside the timed window, so a preemption
     * during them counts as barrier time on both sides of the sum. */
    double c0 = wl_thread_cpu_s(), t0 = wl_now_s(), d0 = wl_run_delay_s();
    pthread_barrier_wait(&barrier);
    barrier_delay_s += wl_run_delay_s() - d0;
    w->barrier_s += wl_now_s() - t0;
    w->blocked_cpu_s += wl_cpu_inside_s(c0);
  }
  double delay1 = wl_run_delay_s();
  w->cpu_s = wl_thread_cpu_s();
  w->lifetime_s = wl_now_s() - start;
  /* Without schedstat, fall back to what is neither CPU nor barrier. */
  w->runq_s = delay0 < 0 || delay1 < 0 ? w->lifetime_s - w->cpu_s - w->barrier_s
                                       : delay1 - delay0 - barrier_delay_s;
  return NULL;
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"threads", WL_INT, &threads, "number of threads"},
      {"size", WL_INT, &size, "matrix dimension"},
      {"rounds", WL_INT, &rounds, "multiplications, each ending at the barrier"},
  };
  wl_parse_flags(argc, argv, "Threads multiply matrices and meet at a barrier.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  if (threads < 1 || size < 1) {
    fprintf(stderr, "matrix_mult: need at least one thread and size 1\n");
    return 2;
  }
  size_t n = (size_t)size * (size_t)size;
  a = malloc(n * sizeof *a);
  b = malloc(n * sizeof *b);
  c = malloc(n * sizeof *c);
  worker *ws = calloc((size_t)threads, sizeof *ws);
  if (!a || !b || !c || !ws) return 1;
  for (size_t i = 0; i < n; i++) {
    a[i] = (double)(i % 7);
    b[i] = (double)(i % 5);
  }
  wl_check(pthread_barrier_init(&barrier, NULL, (unsigned)threads), "pthread_barrier_init");
  double start = wl_now_s();
  for (int i = 0; i < threads; i++) {
    ws[i].index = i;
    ws[i].created_s = wl_now_s();
    wl_check(pthread_create(&ws[i].thread, NULL, work, &ws[i]), "pthread_create");
  }
  for (int i = 0; i < threads; i++) wl_check(pthread_join(ws[i].thread, NULL), "pthread_join");
  double checksum = 0;
  for (size_t i = 0; i < n; i++) checksum += c[i];
  printf("{\"workload\":\"matrix_mult\",\"wall_s\":%.6f,\"threads\":%d,\"cpus\":%ld,"
         "\"size\":%d,\"rounds\":%d,\"checksum\":%.0f,\"workers\":[",
         wl_now_s() - start, threads, sysconf(_SC_NPROCESSORS_ONLN), size, rounds, checksum);
  for (int i = 0; i < threads; i++) {
    const worker *w = &ws[i];
    double on_cpu = w->cpu_s - w->blocked_cpu_s, runq = w->runq_s > 0 ? w->runq_s : 0;
    double stolen = w->lifetime_s - on_cpu - runq - w->barrier_s;
    printf("%s{\"tid\":%d,\"name\":\"mult-%d\",\"lifetime_s\":%.6f,\"cpu_s\":%.6f,"
           "\"barrier_s\":%.6f,\"runq_s\":%.6f,\"on_cpu_pct\":%.2f,\"runnable_pct\":%.2f,"
           "\"barrier_pct\":%.2f,\"stolen_pct\":%.2f}",
           i ? "," : "", (int)w->tid, w->index, w->lifetime_s, w->cpu_s, w->barrier_s, runq,
           100.0 * on_cpu / w->lifetime_s, 100.0 * runq / w->lifetime_s,
           100.0 * w->barrier_s / w->lifetime_s, 100.0 * (stolen > 0 ? stolen : 0) / w->lifetime_s);
  }
  printf("]}\n");
  pthread_barrier_destroy(&barrier);
  free(a);
  free(b);
  free(c);
  free(ws);
  return 0;
}
