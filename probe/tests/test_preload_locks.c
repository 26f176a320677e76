/* Under the probe, mutex/rwlock/spin/barrier calls keep glibc's exact
 * results: EBUSY, EDEADLK, EPERM, recursion, robust EOWNERDEAD, PI,
 * timeouts, invalid arguments, static initialisers, errno untouched, and
 * mutual exclusion under contention. */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "preload_check.h"

static struct timespec in_ms(long ms) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += ms * 1000000L;
  ts.tv_sec += ts.tv_nsec / 1000000000L;
  ts.tv_nsec %= 1000000000L;
  return ts;
}

static pthread_mutex_t m_static = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m_rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t m_err = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;

static void *try_from_other(void *m) { return (void *)(long)pthread_mutex_trylock(m); }
static void *unlock_from_other(void *m) { return (void *)(long)pthread_mutex_unlock(m); }

static long in_thread(void *(*fn)(void *), void *arg) {
  pthread_t th;
  void *ret;
  CHECK_EQ(pthread_create(&th, NULL, fn, arg), 0);
  CHECK_EQ(pthread_join(th, &ret), 0);
  return (long)ret;
}

static void test_mutex_errors(void) {
  errno = 4321;
  CHECK_EQ(pthread_mutex_lock(&m_static), 0);
  CHECK_EQ(pthread_mutex_trylock(&m_static), EBUSY);
  CHECK_EQ(in_thread(try_from_other, &m_static), EBUSY);
  struct timespec soon = in_ms(20);
  CHECK_EQ(pthread_mutex_timedlock(&m_static, &soon), ETIMEDOUT); /* normal: self-wait times out */
  CHECK_EQ(pthread_mutex_unlock(&m_static), 0);
  CHECK_EQ(errno, 4321); /* pthread calls report errors by value */

  CHECK_EQ(pthread_mutex_lock(&m_err), 0);
  CHECK_EQ(pthread_mutex_lock(&m_err), EDEADLK);
  CHECK_EQ(in_thread(unlock_from_other, &m_err), EPERM);
  CHECK_EQ(pthread_mutex_unlock(&m_err), 0);
  CHECK_EQ(pthread_mutex_unlock(&m_err), EPERM);

  for (int i = 0; i < 5; i++) CHECK_EQ(pthread_mutex_lock(&m_rec), 0);
  CHECK_EQ(pthread_mutex_trylock(&m_rec), 0);
  CHECK_EQ(in_thread(try_from_other, &m_rec), EBUSY);
  for (int i = 0; i < 6; i++) CHECK_EQ(pthread_mutex_unlock(&m_rec), 0);
  CHECK_EQ(in_thread(try_from_other, &m_rec), 0); /* free again: the thread took it */

  /* Invalid timeouts and clocks: glibc's own answers. */
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  struct timespec bad = {0, 2000000000L};
  CHECK_EQ(pthread_mutex_lock(&m), 0);
  CHECK_EQ(in_thread(try_from_other, &m), EBUSY);
  CHECK_EQ(pthread_mutex_timedlock(&m, &bad), EINVAL);
  struct timespec ok = in_ms(10);
  CHECK_EQ(pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &ok), EINVAL);
  CHECK_EQ(pthread_mutex_unlock(&m), 0);
}

static pthread_mutex_t robust;
static void *die_holding(void *arg) {
  CHECK_EQ(pthread_mutex_lock(&robust), 0);
  return arg; /* exits with the robust mutex held */
}

static void test_robust_and_pi(void) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  CHECK_EQ(pthread_mutex_init(&robust, &a), 0);
  in_thread(die_holding, NULL);
  CHECK_EQ(pthread_mutex_lock(&robust), EOWNERDEAD); /* owned now, inconsistent */
  CHECK_EQ(pthread_mutex_consistent(&robust), 0);
  CHECK_EQ(pthread_mutex_unlock(&robust), 0);
  in_thread(die_holding, NULL);
  CHECK_EQ(pthread_mutex_trylock(&robust), EOWNERDEAD);
  CHECK_EQ(pthread_mutex_unlock(&robust), 0); /* not made consistent */
  CHECK_EQ(pthread_mutex_lock(&robust), ENOTRECOVERABLE);

  pthread_mutexattr_t pa;
  pthread_mutex_t pi;
  pthread_mutexattr_init(&pa);
  CHECK_EQ(pthread_mutexattr_setprotocol(&pa, PTHREAD_PRIO_INHERIT), 0);
  CHECK_EQ(pthread_mutex_init(&pi, &pa), 0);
  CHECK_EQ(pthread_mutex_lock(&pi), 0);
  CHECK_EQ(in_thread(try_from_other, &pi), EBUSY);
  CHECK_EQ(pthread_mutex_unlock(&pi), 0);
  CHECK_EQ(in_thread(try_from_other, &pi), 0);
}

#define WORKERS 4
#define ROUNDS 20000
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t counter_rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t counter_spin;
static long counter_m, counter_w, counter_s;

static void *hammer(void *arg) {
  for (int i = 0; i < ROUNDS; i++) {
    CHECK_EQ(pthread_mutex_lock(&counter_lock), 0);
    counter_m++;
    CHECK_EQ(pthread_mutex_unlock(&counter_lock), 0);
    CHECK_EQ(pthread_rwlock_wrlock(&counter_rw), 0);
    counter_w++;
    CHECK_EQ(pthread_rwlock_unlock(&counter_rw), 0);
    CHECK_EQ(pthread_rwlock_rdlock(&counter_rw), 0);
    CHECK_EQ(pthread_rwlock_unlock(&counter_rw), 0);
    CHECK_EQ(pthread_spin_lock(&counter_spin), 0);
    counter_s++;
    CHECK_EQ(pthread_spin_unlock(&counter_spin), 0);
  }
  return arg;
}

static void test_exclusion(void) {
  pthread_t th[WORKERS];
  CHECK_EQ(pthread_spin_init(&counter_spin, PTHREAD_PROCESS_PRIVATE), 0);
  for (int i = 0; i < WORKERS; i++) CHECK_EQ(pthread_create(&th[i], NULL, hammer, NULL), 0);
  for (int i = 0; i < WORKERS; i++) CHECK_EQ(pthread_join(th[i], NULL), 0);
  CHECK_EQ(counter_m, WORKERS * ROUNDS);
  CHECK_EQ(counter_w, WORKERS * ROUNDS);
  CHECK_EQ(counter_s, WORKERS * ROUNDS);
}

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static void *try_write(void *arg) { return (void *)(long)pthread_rwlock_trywrlock(arg); }
static void *try_read(void *arg) { return (void *)(long)pthread_rwlock_tryrdlock(arg); }
static void *timed_write(void *arg) {
  struct timespec soon = in_ms(20);
  return (void *)(long)pthread_rwlock_timedwrlock(arg, &soon);
}

static void test_rwlock_spin(void) {
  CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
  CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
  CHECK_EQ(in_thread(try_write, &rw), EBUSY);
  CHECK_EQ(in_thread(timed_write, &rw), ETIMEDOUT);
  CHECK_EQ(in_thread(try_read, &rw), 0); /* shared; that thread exits holding it */
  CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
  CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
  CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
  CHECK_EQ(pthread_rwlock_wrlock(&rw), 0);
  CHECK_EQ(pthread_rwlock_wrlock(&rw), EDEADLK);
  CHECK_EQ(pthread_rwlock_rdlock(&rw), EDEADLK);
  CHECK_EQ(in_thread(try_read, &rw), EBUSY);
  struct timespec bad = {0, -1};
  CHECK_EQ(pthread_rwlock_timedrdlock(&rw, &bad), EINVAL);
  CHECK_EQ(pthread_rwlock_unlock(&rw), 0);
  struct timespec ok = in_ms(10);
  CHECK_EQ(pthread_rwlock_clockwrlock(&rw, CLOCK_PROCESS_CPUTIME_ID, &ok), EINVAL);

  pthread_spinlock_t s;
  CHECK_EQ(pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE), 0);
  CHECK_EQ(pthread_spin_lock(&s), 0);
  CHECK_EQ(pthread_spin_trylock(&s), EBUSY);
  CHECK_EQ(pthread_spin_unlock(&s), 0);
  CHECK_EQ(pthread_spin_trylock(&s), 0);
  CHECK_EQ(pthread_spin_unlock(&s), 0);
}

static pthread_barrier_t barrier;
static _Atomic int serial_count;
static void *barrier_worker(void *arg) {
  for (int round = 0; round < 50; round++) {
    int rc = pthread_barrier_wait(&barrier);
    CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    if (rc == PTHREAD_BARRIER_SERIAL_THREAD) serial_count++;
  }
  return arg;
}

static void test_barrier(void) {
  pthread_t th[3];
  CHECK_EQ(pthread_barrier_init(&barrier, NULL, 3), 0);
  for (int i = 0; i < 3; i++) CHECK_EQ(pthread_create(&th[i], NULL, barrier_worker, NULL), 0);
  for (int i = 0; i < 3; i++) CHECK_EQ(pthread_join(th[i], NULL), 0);
  CHECK_EQ(serial_count, 50); /* exactly one per round */
}

int main(void) {
  CHECK_INTERPOSED(pthread_mutex_lock);
  CHECK_INTERPOSED(pthread_rwlock_wrlock);
  CHECK_INTERPOSED(pthread_spin_lock);
  CHECK_INTERPOSED(pthread_barrier_wait);
  test_mutex_errors();
  test_robust_and_pi();
  test_exclusion();
  test_rwlock_spin();
  test_barrier();
  return 0;
}
