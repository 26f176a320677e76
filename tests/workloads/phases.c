/* phases: a program that alternates parallel and serial phases.
 *
 * T "phase" threads (default: one per CPU) repeat a round: all of them spin
 * --parallel-ms of CPU, meet at a barrier, then phase-0 alone does the
 * serial step (--serial-ms) while the others wait at a second barrier. In
 * the serial step one thread runs and the other CPUs have nothing of this
 * program to run: the ThreadMon paper's phase effect, where adding threads
 * stops helping. phase-0 times the serial steps; the truth is their share
 * of the wall time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wl.h"

/* Global, so that a tool can name them by symbol. */
pthread_barrier_t parallel_done, serial_done;

/* Phases longer than threadmon's 50 ms analysis bins, so a bin sees the
 * parallel phase fill every CPU. */
static int rounds = 8;
static double parallel_ms = 60, serial_ms = 60;

typedef struct worker {
  pthread_t thread;
  int index;
  pid_t tid;
  double serial_s, lifetime_s;
} worker;

static void *run_phases(void *arg) {
  worker *w = arg;
  wl_name_self("phase", w->index);
  w->tid = gettid();
  double start = wl_now_s();
  for (int r = 0; r < rounds; r++) {
    wl_spin_cpu_ms(parallel_ms);
    pthread_barrier_wait(&parallel_done);
    if (w->index == 0) {
      double t0 = wl_now_s();
      wl_spin_cpu_ms(serial_ms);
      w->serial_s += wl_now_s() - t0;
    }
    pthread_barrier_wait(&serial_done);
  }
  w->lifetime_s = wl_now_s() - start;
  return NULL;
}

int main(int argc, char **argv) {
  int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (threads < 2) threads = 2;
  const wl_flag flags[] = {
      {"threads", WL_INT, &threads, "threads (default: CPUs, at least 2)"},
      {"rounds", WL_INT, &rounds, "parallel + serial rounds"},
      {"parallel-ms", WL_DOUBLE, &parallel_ms, "CPU time of every thread in the parallel phase"},
      {"serial-ms", WL_DOUBLE, &serial_ms, "CPU time of phase-0 alone in the serial phase"},
  };
  wl_parse_flags(argc, argv, "Parallel phases alternating with serial ones.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  if (threads < 2 || rounds < 1) {
    fprintf(stderr, "phases: need at least two threads and one round\n");
    return 2;
  }
  wl_check(pthread_barrier_init(&parallel_done, NULL, (unsigned)threads), "pthread_barrier_init");
  wl_check(pthread_barrier_init(&serial_done, NULL, (unsigned)threads), "pthread_barrier_init");
  worker *ws = calloc((size_t)threads, sizeof *ws);
  if (!ws) return 1;
  double start = wl_now_s();
  for (int i = 0; i < threads; i++) {
    ws[i].index = i;
    wl_check(pthread_create(&ws[i].thread, NULL, run_phases, &ws[i]), "pthread_create");
  }
  for (int i = 0; i < threads; i++) wl_check(pthread_join(ws[i].thread, NULL), "pthread_join");
  double wall_s = wl_now_s() - start;
  printf("{\"workload\":\"phases\",\"wall_s\":%.6f,\"threads\":%d,\"cpus\":%ld,\"rounds\":%d,"
         "\"serial_s\":%.6f,\"serial_pct\":%.2f,\"serial_tid\":%d,\"tids\":[",
         wall_s, threads, sysconf(_SC_NPROCESSORS_ONLN), rounds, ws[0].serial_s,
         100.0 * ws[0].serial_s / wall_s, (int)ws[0].tid);
  for (int i = 0; i < threads; i++) printf("%s%d", i ? "," : "", (int)ws[i].tid);
  printf("]}\n");
  pthread_barrier_destroy(&parallel_done);
  pthread_barrier_destroy(&serial_done);
  free(ws);
  return 0;
}
