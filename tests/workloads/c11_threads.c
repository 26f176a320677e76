/* c11_threads: ground truth for a program written with C11's <threads.h>.
 *
 * W "worker" threads (thrd_create) take c11_lock (an mtx_t) R times each,
 * spin H ms of their CPU time holding it, let it go and spin G ms; a
 * "sleeper" waits on c11_ready (a cnd_t) until the workers are done and the
 * main thread signals it; main thrd_joins them all. Truth, measured by the
 * program: every mtx_lock and cnd_wait (re-lock included) counted, the
 * sleeper's wall time inside cnd_wait and main's inside thrd_join, and
 * each worker's result as thrd_join returned it.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <threads.h>

#include "wl.h"

#define MAX_WORKERS 16

/* Globals, so that a tool names them by symbol. */
mtx_t c11_lock;
cnd_t c11_ready;

static int workers = 3, rounds = 100, ready;
static double hold_ms = 1, gap_ms = 1;
static atomic_long acquisitions;
static double sleeper_wait_s, sleeper_life_s;

static int worker(void *arg) {
  int index = (int)(intptr_t)arg;
  wl_name_self("worker", index);
  for (int r = 0; r < rounds; r++) {
    if (mtx_lock(&c11_lock) != thrd_success) return -1;
    atomic_fetch_add(&acquisitions, 1);
    wl_spin_cpu_ms(hold_ms);
    mtx_unlock(&c11_lock);
    wl_spin_cpu_ms(gap_ms);
  }
  return 100 + index;
}

static int sleeper(void *arg) {
  (void)arg;
  wl_name_self("sleeper", 0);
  double start = wl_now_s();
  mtx_lock(&c11_lock);
  atomic_fetch_add(&acquisitions, 1);
  while (!ready) {
    double t0 = wl_now_s();
    cnd_wait(&c11_ready, &c11_lock);
    sleeper_wait_s += wl_now_s() - t0;
    atomic_fetch_add(&acquisitions, 1); /* cnd_wait returns holding it again */
  }
  mtx_unlock(&c11_lock);
  sleeper_life_s = wl_now_s() - start;
  return 0;
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"workers", WL_INT, &workers, "threads taking c11_lock"},
      {"rounds", WL_INT, &rounds, "times each worker takes it"},
      {"hold-ms", WL_DOUBLE, &hold_ms, "CPU time holding it per round"},
      {"gap-ms", WL_DOUBLE, &gap_ms, "CPU time outside it per round"},
  };
  wl_parse_flags(argc, argv, "C11 threads: workers at an mtx_t, a sleeper on a cnd_t.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  if (workers < 1 || workers > MAX_WORKERS || rounds < 1) {
    fprintf(stderr, "c11_threads: --workers must be 1..%d and --rounds at least 1\n", MAX_WORKERS);
    return 2;
  }
  if (mtx_init(&c11_lock, mtx_plain) != thrd_success || cnd_init(&c11_ready) != thrd_success)
    return 1;
  double start = wl_now_s();
  thrd_t s, w[MAX_WORKERS];
  if (thrd_create(&s, sleeper, NULL) != thrd_success) return 1;
  for (int i = 0; i < workers; i++)
    if (thrd_create(&w[i], worker, (void *)(intptr_t)i) != thrd_success) return 1;
  double join_s = 0;
  int results[MAX_WORKERS];
  for (int i = 0; i < workers; i++) {
    double t0 = wl_now_s();
    thrd_join(w[i], &results[i]);
    join_s += wl_now_s() - t0;
  }
  mtx_lock(&c11_lock);
  atomic_fetch_add(&acquisitions, 1);
  ready = 1;
  cnd_signal(&c11_ready);
  mtx_unlock(&c11_lock);
  double t0 = wl_now_s();
  thrd_join(s, NULL);
  join_s += wl_now_s() - t0;
  double life_s = wl_now_s() - start;
  printf(
      "{\"workload\":\"c11_threads\",\"wall_s\":%.6f,\"lock_symbol\":\"c11_lock\","
      "\"cond_symbol\":\"c11_ready\",\"acquisitions\":%ld,\"sleeper_wait_s\":%.6f,"
      "\"sleeper_cond_pct\":%.2f,\"main_join_pct\":%.2f,\"results\":[",
      life_s, (long)atomic_load(&acquisitions), sleeper_wait_s,
      100.0 * sleeper_wait_s / sleeper_life_s, 100.0 * join_s / life_s);
  for (int i = 0; i < workers; i++) printf("%s%d", i ? "," : "", results[i]);
  printf("]}\n");
  return 0;
}
