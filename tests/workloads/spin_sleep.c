/* spin_sleep: ground truth for on-CPU vs sleeping shares.
 *
 * Each of T threads repeats: spin X ms of its own CPU time, sleep Y ms. The
 * truth printed at exit is measured, not assumed: per thread, the CPU time
 * (CLOCK_THREAD_CPUTIME_ID) and the wall time spent in nanosleep, each as a
 * share of the thread's lifetime. On a loaded machine the rest is runnable.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wl.h"

typedef struct worker {
  pthread_t thread;
  int index;
  pid_t tid;
  double lifetime_s, cpu_s, slept_s;
} worker;

static double spin_ms = 30, sleep_ms = 70;
static int repeats = 15;

static void *work(void *arg) {
  worker *w = arg;
  wl_name_self("spinner", w->index);
  w->tid = gettid();
  double start = wl_now_s(), cpu0 = wl_thread_cpu_s();
  for (int r = 0; r < repeats; r++) {
    wl_spin_cpu_ms(spin_ms);
    w->slept_s += wl_sleep_ms(sleep_ms);
  }
  w->cpu_s = wl_thread_cpu_s() - cpu0;
  w->lifetime_s = wl_now_s() - start;
  return NULL;
}

int main(int argc, char **argv) {
  int threads = 2;
  const wl_flag flags[] = {
      {"threads", WL_INT, &threads, "number of threads"},
      {"spin-ms", WL_DOUBLE, &spin_ms, "CPU time each thread spins per round"},
      {"sleep-ms", WL_DOUBLE, &sleep_ms, "time each thread sleeps per round"},
      {"repeats", WL_INT, &repeats, "rounds per thread"},
  };
  wl_parse_flags(argc, argv, "Threads alternate spinning and sleeping; prints measured shares.",
                 flags, (int)(sizeof flags / sizeof flags[0]));
  if (threads < 1) threads = 1;
  worker *ws = calloc((size_t)threads, sizeof *ws);
  if (!ws) return 1;
  double start = wl_now_s();
  for (int i = 0; i < threads; i++) {
    ws[i].index = i;
    wl_check(pthread_create(&ws[i].thread, NULL, work, &ws[i]), "pthread_create");
  }
  for (int i = 0; i < threads; i++) wl_check(pthread_join(ws[i].thread, NULL), "pthread_join");
  printf("{\"workload\":\"spin_sleep\",\"wall_s\":%.6f,\"spin_ms\":%g,\"sleep_ms\":%g,"
         "\"repeats\":%d,\"intended_on_cpu_pct\":%.2f,\"threads\":[",
         wl_now_s() - start, spin_ms, sleep_ms, repeats, 100.0 * spin_ms / (spin_ms + sleep_ms));
  for (int i = 0; i < threads; i++) {
    const worker *w = &ws[i];
    printf("%s{\"tid\":%d,\"name\":\"spinner-%d\",\"lifetime_s\":%.6f,\"cpu_s\":%.6f,"
           "\"slept_s\":%.6f,\"on_cpu_pct\":%.2f,\"sleeping_pct\":%.2f}",
           i ? "," : "", (int)w->tid, w->index, w->lifetime_s, w->cpu_s, w->slept_s,
           100.0 * w->cpu_s / w->lifetime_s, 100.0 * w->slept_s / w->lifetime_s);
  }
  printf("]}\n");
  free(ws);
  return 0;
}
