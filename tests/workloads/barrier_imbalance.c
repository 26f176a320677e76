/* barrier_imbalance: one thread does several times the others' work before
 * every barrier.
 *
 * T threads (default: one per CPU) repeat a round: spin some CPU time, then
 * pthread_barrier_wait on round_barrier. Thread "heavy-0" spins
 * --heavy-factor times longer than the "light-N" threads, so every round the
 * light threads arrive early and wait while it finishes, and heavy-0, the
 * last to arrive, hardly waits at all. Each thread times its own barrier
 * waits; the truth is those waits and what share of the rounds they took.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wl.h"

/* Global, so that a tool can name it by symbol. */
pthread_barrier_t round_barrier;

static int rounds = 20;
static double work_ms = 10, heavy_factor = 4;

typedef struct worker {
  pthread_t thread;
  int index;
  pid_t tid;
  double barrier_s, lifetime_s, cpu_s;
} worker;

static void *run_rounds(void *arg) {
  worker *w = arg;
  wl_name_self(w->index == 0 ? "heavy" : "light", w->index);
  w->tid = gettid();
  double start = wl_now_s(), cpu0 = wl_thread_cpu_s();
  double my_ms = w->index == 0 ? work_ms * heavy_factor : work_ms;
  for (int r = 0; r < rounds; r++) {
    wl_spin_cpu_ms(my_ms);
    double t0 = wl_now_s();
    pthread_barrier_wait(&round_barrier);
    w->barrier_s += wl_now_s() - t0;
  }
  w->cpu_s = wl_thread_cpu_s() - cpu0;
  w->lifetime_s = wl_now_s() - start;
  return NULL;
}

int main(int argc, char **argv) {
  int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (threads < 2) threads = 2;
  const wl_flag flags[] = {
      {"threads", WL_INT, &threads, "threads meeting at the barrier (default: CPUs, at least 2)"},
      {"rounds", WL_INT, &rounds, "barrier rounds"},
      {"work-ms", WL_DOUBLE, &work_ms, "CPU time of a light thread per round"},
      {"heavy-factor", WL_DOUBLE, &heavy_factor, "heavy-0's work per round, in light rounds"},
  };
  wl_parse_flags(argc, argv, "One thread does more work than the others before each barrier.",
                 flags, (int)(sizeof flags / sizeof flags[0]));
  if (threads < 2 || rounds < 1) {
    fprintf(stderr, "barrier_imbalance: need at least two threads and one round\n");
    return 2;
  }
  wl_check(pthread_barrier_init(&round_barrier, NULL, (unsigned)threads), "pthread_barrier_init");
  worker *ws = calloc((size_t)threads, sizeof *ws);
  if (!ws) return 1;
  double start = wl_now_s();
  for (int i = 0; i < threads; i++) {
    ws[i].index = i;
    wl_check(pthread_create(&ws[i].thread, NULL, run_rounds, &ws[i]), "pthread_create");
  }
  for (int i = 0; i < threads; i++) wl_check(pthread_join(ws[i].thread, NULL), "pthread_join");
  double wall_s = wl_now_s() - start;
  printf("{\"workload\":\"barrier_imbalance\",\"wall_s\":%.6f,\"threads\":%d,\"rounds\":%d,"
         "\"barrier_symbol\":\"round_barrier\",\"heavy_factor\":%g,\"round_s\":%.6f,\"workers\":[",
         wall_s, threads, rounds, heavy_factor, wall_s / rounds);
  for (int i = 0; i < threads; i++) {
    const worker *w = &ws[i];
    printf("%s{\"tid\":%d,\"name\":\"%s-%d\",\"heavy\":%s,\"lifetime_s\":%.6f,\"cpu_s\":%.6f,"
           "\"barrier_s\":%.6f,\"barrier_pct\":%.2f}",
           i ? "," : "", (int)w->tid, i == 0 ? "heavy" : "light", i, i == 0 ? "true" : "false",
           w->lifetime_s, w->cpu_s, w->barrier_s, 100.0 * w->barrier_s / w->lifetime_s);
  }
  printf("]}\n");
  pthread_barrier_destroy(&round_barrier);
  free(ws);
  return 0;
}
