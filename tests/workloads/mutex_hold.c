/* mutex_hold: ground truth for mutex waits.
 *
 * One "holder" thread takes big_lock and keeps it H ms (sleeping inside),
 * releases it for G ms, and repeats. W "waiter" threads loop: lock, unlock,
 * pause G ms, so they spend most of their life blocked on big_lock. Every
 * thread times its own pthread_mutex_lock calls and how long it then keeps
 * the lock; the truth printed at exit is those measured waits and holds, the
 * exact acquisition count and each waiter's blocked share of its lifetime.
 * --nested makes big_lock recursive and the holder take it again at the
 * start of each hold and release that inner hold at once (an acquisition
 * counted, held inside the outer hold).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wl.h"

/* Statically initialised and global, so that a tool can name it by symbol. */
pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct thread_truth {
  pthread_t thread;
  int index;
  pid_t tid;
  long acquisitions;
  double wait_s, max_wait_s, hold_s, lifetime_s;
  double locked_at; /* when the lock it holds was acquired */
} thread_truth;

static double hold_ms = 20, gap_ms = 5;
static int rounds = 40, nested;
static atomic_int done;

/* The line of the call that waits: its call site's source line. */
static const int lock_line = __LINE__ + 5;

/* Locks big_lock and accounts the time it took. */
static void timed_lock(thread_truth *t) {
  double t0 = wl_now_s();
  wl_check(pthread_mutex_lock(&big_lock), "pthread_mutex_lock");
  double waited = wl_now_s() - t0;
  t->wait_s += waited;
  if (waited > t->max_wait_s) t->max_wait_s = waited;
  t->acquisitions++;
  t->locked_at = t0 + waited;
}

static void timed_unlock(thread_truth *t) {
  t->hold_s += wl_now_s() - t->locked_at;
  pthread_mutex_unlock(&big_lock);
}

static void *holder(void *arg) {
  thread_truth *t = arg;
  pthread_setname_np(pthread_self(), "holder");
  t->tid = gettid();
  double start = wl_now_s();
  for (int r = 0; r < rounds; r++) {
    timed_lock(t);
    if (nested) {
      wl_check(pthread_mutex_lock(&big_lock), "pthread_mutex_lock (nested)");
      t->acquisitions++;
      wl_check(pthread_mutex_unlock(&big_lock), "pthread_mutex_unlock (nested)");
    }
    wl_sleep_ms(hold_ms);
    if (r == rounds - 1) atomic_store(&done, 1);
    timed_unlock(t);
    wl_sleep_ms(gap_ms);
  }
  t->lifetime_s = wl_now_s() - start;
  return NULL;
}

static void *waiter(void *arg) {
  thread_truth *t = arg;
  wl_name_self("waiter", t->index);
  t->tid = gettid();
  double start = wl_now_s();
  while (!atomic_load(&done)) {
    timed_lock(t);
    timed_unlock(t);
    wl_sleep_ms(gap_ms);
  }
  t->lifetime_s = wl_now_s() - start;
  return NULL;
}

int main(int argc, char **argv) {
  int waiters = 2;
  const wl_flag flags[] = {
      {"waiters", WL_INT, &waiters, "threads that wait for the lock"},
      {"hold-ms", WL_DOUBLE, &hold_ms, "how long the holder keeps the lock each round"},
      {"gap-ms", WL_DOUBLE, &gap_ms, "pause after each release"},
      {"rounds", WL_INT, &rounds, "holder rounds"},
      {"nested", WL_BOOL, &nested, "recursive big_lock, taken again inside each hold"},
  };
  wl_parse_flags(argc, argv, "One thread holds big_lock while others wait for it.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  if (rounds < 1) rounds = 1;
  if (nested) {
    pthread_mutexattr_t a;
    wl_check(pthread_mutexattr_init(&a), "pthread_mutexattr_init");
    wl_check(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), "pthread_mutexattr_settype");
    wl_check(pthread_mutex_init(&big_lock, &a), "pthread_mutex_init");
    pthread_mutexattr_destroy(&a);
  }
  thread_truth *ts = calloc((size_t)waiters + 1, sizeof *ts);
  if (!ts) return 1;
  double start = wl_now_s();
  wl_check(pthread_create(&ts[0].thread, NULL, holder, &ts[0]), "pthread_create");
  for (int i = 1; i <= waiters; i++) {
    ts[i].index = i - 1;
    wl_check(pthread_create(&ts[i].thread, NULL, waiter, &ts[i]), "pthread_create");
  }
  long acquisitions = 0;
  double wait_s = 0, max_wait_s = 0, hold_s = 0;
  for (int i = 0; i <= waiters; i++) {
    wl_check(pthread_join(ts[i].thread, NULL), "pthread_join");
    acquisitions += ts[i].acquisitions;
    wait_s += ts[i].wait_s;
    hold_s += ts[i].hold_s;
    if (ts[i].max_wait_s > max_wait_s) max_wait_s = ts[i].max_wait_s;
  }
  printf("{\"workload\":\"mutex_hold\",\"wall_s\":%.6f,\"hold_ms\":%g,\"rounds\":%d,"
         "\"lock_symbol\":\"big_lock\",\"lock_line\":%d,\"acquisitions\":%ld,\"wait_s\":%.6f,"
         "\"max_wait_s\":%.6f,\"hold_s\":%.6f,\"holder_tid\":%d,\"waiters\":[",
         wl_now_s() - start, hold_ms, rounds, lock_line, acquisitions, wait_s, max_wait_s, hold_s,
         (int)ts[0].tid);
  for (int i = 1; i <= waiters; i++) {
    const thread_truth *t = &ts[i];
    printf("%s{\"tid\":%d,\"name\":\"waiter-%d\",\"lifetime_s\":%.6f,\"acquisitions\":%ld,"
           "\"wait_s\":%.6f,\"blocked_mutex_pct\":%.2f}",
           i > 1 ? "," : "", (int)t->tid, t->index, t->lifetime_s, t->acquisitions, t->wait_s,
           100.0 * t->wait_s / t->lifetime_s);
  }
  printf("]}\n");
  free(ts);
  return 0;
}
