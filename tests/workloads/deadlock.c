/* deadlock: two threads take two mutexes in opposite order and really
 * deadlock, then recover.
 *
 * "first" holds lock_a and wants lock_b; "second" holds lock_b and wants
 * lock_a. Both wait with pthread_mutex_timedlock: second gives up after
 * --deadlock-ms, releases lock_b and backs off, which lets first finish;
 * second then retries in the safe order. With --start-ms, main sleeps that
 * long before it starts them (a deadlock late in a run). The truth is how
 * long each waited, and when (seconds since main started) the cycle formed
 * -- both threads holding one lock and asking for the other -- and when it
 * broke.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "wl.h"

pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;
static double deadlock_ms = 400;
static double start_ms = 0;
static double main_start;

typedef struct side {
  pid_t tid;
  double asked_s; /* since main_start: when it asked for the other lock */
  double wait_s;
  int timed_out;
} side;

static side first_side, second_side;

static struct timespec deadline_after_ms(double ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts); /* timedlock's clock */
  long long ns = (long long)ts.tv_nsec + (long long)(ms * 1e6);
  ts.tv_sec += (time_t)(ns / 1000000000);
  ts.tv_nsec = (long)(ns % 1000000000);
  return ts;
}

/* Holds `mine`, waits up to timeout_ms for `other`; returns 0 or ETIMEDOUT. */
static int hold_then_want(side *s, pthread_mutex_t *mine, pthread_mutex_t *other,
                          double timeout_ms) {
  s->tid = gettid();
  pthread_mutex_lock(mine);
  pthread_barrier_wait(&both_hold);
  struct timespec deadline = deadline_after_ms(timeout_ms);
  double t0 = wl_now_s();
  s->asked_s = t0 - main_start;
  int err = pthread_mutex_timedlock(other, &deadline);
  s->wait_s = wl_now_s() - t0;
  s->timed_out = err == ETIMEDOUT;
  if (err == 0) pthread_mutex_unlock(other);
  pthread_mutex_unlock(mine);
  return err;
}

static void *first(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "first");
  /* Waits long enough that second always gives up before it does. */
  wl_check(hold_then_want(&first_side, &lock_a, &lock_b, deadlock_ms * 10), "first timedlock");
  return NULL;
}

static void *second(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "second");
  if (hold_then_want(&second_side, &lock_b, &lock_a, deadlock_ms) == ETIMEDOUT) {
    pthread_mutex_lock(&lock_a); /* recover: retry in the same order as first */
    pthread_mutex_lock(&lock_b);
    pthread_mutex_unlock(&lock_b);
    pthread_mutex_unlock(&lock_a);
  }
  return NULL;
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"deadlock-ms", WL_DOUBLE, &deadlock_ms, "how long the two threads stay deadlocked"},
      {"start-ms", WL_DOUBLE, &start_ms, "how long main sleeps before it starts them"},
  };
  wl_parse_flags(argc, argv, "Two threads deadlock on two mutexes, then recover.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  wl_check(pthread_barrier_init(&both_hold, NULL, 2), "pthread_barrier_init");
  double start = main_start = wl_now_s();
  if (start_ms > 0) wl_sleep_ms(start_ms);
  pthread_t t1, t2;
  wl_check(pthread_create(&t1, NULL, first, NULL), "pthread_create");
  wl_check(pthread_create(&t2, NULL, second, NULL), "pthread_create");
  wl_check(pthread_join(t1, NULL), "pthread_join");
  wl_check(pthread_join(t2, NULL), "pthread_join");
  /* The cycle exists from the later of the two requests until second's
   * timedlock gives up. */
  double formed_s = first_side.asked_s > second_side.asked_s ? first_side.asked_s
                                                             : second_side.asked_s;
  printf("{\"workload\":\"deadlock\",\"wall_s\":%.6f,\"deadlock_ms\":%g,"
         "\"formed_s\":%.6f,\"broken_s\":%.6f,\"locks\":[\"lock_a\",\"lock_b\"],"
         "\"first\":{\"tid\":%d,\"name\":\"first\",\"holds\":\"lock_a\",\"wants\":\"lock_b\","
         "\"wait_s\":%.6f,\"timed_out\":%s},"
         "\"second\":{\"tid\":%d,\"name\":\"second\",\"holds\":\"lock_b\",\"wants\":\"lock_a\","
         "\"wait_s\":%.6f,\"timed_out\":%s}}\n",
         wl_now_s() - start, deadlock_ms, formed_s, second_side.asked_s + second_side.wait_s,
         (int)first_side.tid, first_side.wait_s, first_side.timed_out ? "true" : "false",
         (int)second_side.tid, second_side.wait_s, second_side.timed_out ? "true" : "false");
  pthread_barrier_destroy(&both_hold);
  return 0;
}
