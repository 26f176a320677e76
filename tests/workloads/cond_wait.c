/* cond_wait: ground truth for condition waits.
 *
 * A "sleeper" thread waits on a condition variable; a "signaller" thread
 * sleeps D ms, then sets the predicate and signals. Repeated R times. The
 * sleeper times each pthread_cond_wait loop itself, so the truth is the
 * measured wait (and its share of the sleeper's lifetime).
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "wl.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int generation; /* bumped by the signaller, under lock */

static double delay_ms = 150;
static int repeats = 6;

static pid_t sleeper_tid;
static double sleeper_wait_s, sleeper_lifetime_s;
static int wakeups;

static void *sleeper(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "sleeper");
  sleeper_tid = gettid();
  double start = wl_now_s();
  pthread_mutex_lock(&lock);
  for (int seen = 0; seen < repeats; seen++) {
    double t0 = wl_now_s();
    while (generation == seen) wl_check(pthread_cond_wait(&ready, &lock), "pthread_cond_wait");
    sleeper_wait_s += wl_now_s() - t0;
    wakeups++;
  }
  pthread_mutex_unlock(&lock);
  sleeper_lifetime_s = wl_now_s() - start;
  return NULL;
}

static void *signaller(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "signaller");
  for (int r = 0; r < repeats; r++) {
    wl_sleep_ms(delay_ms);
    pthread_mutex_lock(&lock);
    generation++;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"delay-ms", WL_DOUBLE, &delay_ms, "how long the signaller waits before each signal"},
      {"repeats", WL_INT, &repeats, "number of signals"},
  };
  wl_parse_flags(argc, argv, "One thread waits on a condition another signals after a delay.",
                 flags, (int)(sizeof flags / sizeof flags[0]));
  double start = wl_now_s();
  pthread_t a, b;
  wl_check(pthread_create(&a, NULL, sleeper, NULL), "pthread_create");
  wl_check(pthread_create(&b, NULL, signaller, NULL), "pthread_create");
  wl_check(pthread_join(a, NULL), "pthread_join");
  wl_check(pthread_join(b, NULL), "pthread_join");
  printf("{\"workload\":\"cond_wait\",\"wall_s\":%.6f,\"delay_ms\":%g,\"signals\":%d,"
         "\"wakeups\":%d,\"sleeper_tid\":%d,\"sleeper_lifetime_s\":%.6f,\"wait_s\":%.6f,"
         "\"blocked_cond_pct\":%.2f}\n",
         wl_now_s() - start, delay_ms, repeats, wakeups, (int)sleeper_tid, sleeper_lifetime_s,
         sleeper_wait_s, 100.0 * sleeper_wait_s / sleeper_lifetime_s);
  return 0;
}
