/* Results and errno of wrapped calls in their error cases, and errno left
 * alone by the ones that succeed (the wrappers call trylock first, read
 * clocks and files: none of that may leak into the program's errno). Each
 * line shows the return value and errno after the call; errno is set to
 * 1234 before each call so that a change shows. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static sem_t held_released;
static _Atomic pid_t worker_tid;

/* Holds `held` (and a robust mutex, when given) until told, or dies with
 * it (robust). */
static void *holder(void *arg) {
  pthread_mutex_lock(arg ? (pthread_mutex_t *)arg : &held);
  if (arg) return NULL; /* ends owning the robust mutex */
  worker_tid = conf_gettid();
  sem_wait(&held_released);
  pthread_mutex_unlock(&held);
  return NULL;
}

static pthread_t hold_in_thread(void) {
  sem_init(&held_released, 0, 0);
  worker_tid = 0;
  pthread_t th = conf_spawn(holder, NULL);
  while (!worker_tid) sched_yield();
  return th;
}

static void release_holder(pthread_t th) {
  sem_post(&held_released);
  pthread_join(th, NULL);
}

static void mutex_errors(void) {
  pthread_mutexattr_t a;
  pthread_mutex_t ec;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_init(&ec, &a);
  CONF_SHOW(pthread_mutex_lock(&ec));
  CONF_SHOW(pthread_mutex_lock(&ec));
  CONF_SHOW(pthread_mutex_trylock(&ec));
  struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(pthread_mutex_timedlock(&ec, &past));
  CONF_SHOW(pthread_mutex_unlock(&ec));
  CONF_SHOW(pthread_mutex_unlock(&ec));

  pthread_mutex_t rec;
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&rec, &a);
  CONF_SHOW(pthread_mutex_lock(&rec));
  CONF_SHOW(pthread_mutex_lock(&rec));
  CONF_SHOW(pthread_mutex_trylock(&rec));
  CONF_SHOW(pthread_mutex_unlock(&rec));
  CONF_SHOW(pthread_mutex_unlock(&rec));
  CONF_SHOW(pthread_mutex_unlock(&rec));
  CONF_SHOW(pthread_mutex_unlock(&rec));

  pthread_t th = hold_in_thread();
  CONF_SHOW(pthread_mutex_trylock(&held));
  past = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(pthread_mutex_timedlock(&held, &past));
  struct timespec soon = conf_deadline(CLOCK_REALTIME, 30);
  CONF_SHOW(pthread_mutex_timedlock(&held, &soon));
  struct timespec bad = {0, 1000000000};
  CONF_SHOW(pthread_mutex_timedlock(&held, &bad));
  struct timespec mono_past = conf_deadline(CLOCK_MONOTONIC, -1000);
  CONF_SHOW(pthread_mutex_clocklock(&held, CLOCK_MONOTONIC, &mono_past));
  CONF_SHOW(pthread_mutex_clocklock(&held, CLOCK_PROCESS_CPUTIME_ID, &mono_past));
  release_holder(th);
  /* A free mutex with an invalid deadline: glibc locks without looking. */
  CONF_SHOW(pthread_mutex_timedlock(&held, &bad));
  CONF_SHOW(pthread_mutex_unlock(&held));
}

static void robust_mutex(void) {
  pthread_mutexattr_t a;
  pthread_mutex_t m;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&m, &a);
  pthread_join(conf_spawn(holder, &m), NULL);
  CONF_SHOW(pthread_mutex_lock(&m));
  CONF_SHOW(pthread_mutex_consistent(&m));
  CONF_SHOW(pthread_mutex_unlock(&m));
  CONF_SHOW(pthread_mutex_lock(&m));
  CONF_SHOW(pthread_mutex_unlock(&m));

  /* Abandoned twice, the second time not made consistent. */
  pthread_join(conf_spawn(holder, &m), NULL);
  CONF_SHOW(pthread_mutex_trylock(&m));
  CONF_SHOW(pthread_mutex_unlock(&m));
  CONF_SHOW(pthread_mutex_lock(&m));
  CONF_SHOW(pthread_mutex_trylock(&m));
  struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(pthread_mutex_timedlock(&m, &past));

  /* Robust and errorcheck: the owner dies, a timed lock gets it. */
  pthread_mutex_t m2;
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_init(&m2, &a);
  pthread_join(conf_spawn(holder, &m2), NULL);
  struct timespec later = conf_deadline(CLOCK_REALTIME, 1000);
  CONF_SHOW(pthread_mutex_timedlock(&m2, &later));
  CONF_SHOW(pthread_mutex_lock(&m2));
  CONF_SHOW(pthread_mutex_consistent(&m2));
  CONF_SHOW(pthread_mutex_unlock(&m2));
}

static void *blocked_in_pause(void *arg) {
  worker_tid = conf_gettid();
  for (;;) pause();
  return arg;
}

static void *returns_at_once(void *arg) { return arg; }

static void join_errors(void) {
  CONF_SHOW(pthread_join(pthread_self(), NULL));
  worker_tid = 0;
  pthread_t th = conf_spawn(blocked_in_pause, NULL);
  while (!worker_tid) sched_yield();
  CONF_SHOW(pthread_tryjoin_np(th, NULL));
  struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(pthread_timedjoin_np(th, NULL, &past));
  struct timespec soon = conf_deadline(CLOCK_REALTIME, 30);
  CONF_SHOW(pthread_timedjoin_np(th, NULL, &soon));
  struct timespec mono_soon = conf_deadline(CLOCK_MONOTONIC, 30);
  CONF_SHOW(pthread_clockjoin_np(th, NULL, CLOCK_MONOTONIC, &mono_soon));
  CONF_SHOW(pthread_clockjoin_np(th, NULL, CLOCK_PROCESS_CPUTIME_ID, &mono_soon)); /* EINVAL */
  CONF_SHOW(pthread_detach(th));
  CONF_SHOW(pthread_join(th, NULL));  /* detached, still running */
  CONF_SHOW(pthread_detach(th));      /* twice */
  CONF_SHOW(pthread_kill(th, 0));
  pthread_t done = conf_spawn(returns_at_once, (void *)7);
  void *ret = NULL;
  CONF_SHOW(pthread_join(done, &ret));
  say("joined value %ld", (long)(intptr_t)ret);
  done = conf_spawn(returns_at_once, (void *)8);
  struct timespec later = conf_deadline(CLOCK_MONOTONIC, 5000);
  CONF_SHOW(pthread_clockjoin_np(done, &ret, CLOCK_MONOTONIC, &later));
  say("clock-joined value %ld", (long)(intptr_t)ret);
}

static void sem_errors(void) {
  sem_t s;
  sem_init(&s, 0, 0);
  CONF_SHOW(sem_trywait(&s));
  struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(sem_timedwait(&s, &past));
  struct timespec soon = conf_deadline(CLOCK_REALTIME, 30);
  CONF_SHOW(sem_timedwait(&s, &soon));
  struct timespec bad = {0, 1000000000};
  CONF_SHOW(sem_timedwait(&s, &bad));
  struct timespec mono = conf_deadline(CLOCK_MONOTONIC, -1000);
  CONF_SHOW(sem_clockwait(&s, CLOCK_MONOTONIC, &mono));
  CONF_SHOW(sem_clockwait(&s, CLOCK_THREAD_CPUTIME_ID, &mono));
  CONF_SHOW(sem_post(&s));
  CONF_SHOW(sem_timedwait(&s, &bad)); /* available: no look at the deadline */
  CONF_SHOW(sem_post(&s));
  CONF_SHOW(sem_trywait(&s));
  int v = -1;
  sem_getvalue(&s, &v);
  say("value %d", v);
  sem_t big;
  CONF_SHOW(sem_init(&big, 0, (unsigned)SEM_VALUE_MAX + 1u));
}

static void cond_errors(void) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t c = PTHREAD_COND_INITIALIZER;
  pthread_mutex_lock(&m);
  struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(pthread_cond_timedwait(&c, &m, &past));
  struct timespec soon = conf_deadline(CLOCK_REALTIME, 30);
  CONF_SHOW(pthread_cond_timedwait(&c, &m, &soon));
  struct timespec bad = {0, 1000000000};
  CONF_SHOW(pthread_cond_timedwait(&c, &m, &bad));
  struct timespec mono = conf_deadline(CLOCK_MONOTONIC, 20);
  CONF_SHOW(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &mono));
  CONF_SHOW(pthread_cond_clockwait(&c, &m, CLOCK_PROCESS_CPUTIME_ID, &mono));
  CONF_SHOW(pthread_mutex_trylock(&m)); /* still held after each wait */
  CONF_SHOW(pthread_mutex_unlock(&m));

  /* The monotonic-clock condattr. */
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_t cm;
  pthread_cond_init(&cm, &ca);
  pthread_mutex_lock(&m);
  mono = conf_deadline(CLOCK_MONOTONIC, -1000);
  CONF_SHOW(pthread_cond_timedwait(&cm, &m, &mono));
  pthread_mutex_unlock(&m);

  /* Errorcheck mutex not held by the waiter. */
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_t ec;
  pthread_mutex_init(&ec, &a);
  CONF_SHOW(pthread_cond_timedwait(&c, &ec, &past));
  CONF_SHOW(pthread_cond_signal(&c));
  CONF_SHOW(pthread_cond_broadcast(&c));
}

static pthread_rwlock_t rw_other = PTHREAD_RWLOCK_INITIALIZER;

static void *write_holder(void *arg) {
  pthread_rwlock_wrlock(&rw_other);
  worker_tid = conf_gettid();
  sem_wait(&held_released);
  pthread_rwlock_unlock(&rw_other);
  return arg;
}

static void rwlock_errors(void) {
  sem_init(&held_released, 0, 0);
  worker_tid = 0;
  pthread_t th = conf_spawn(write_holder, NULL);
  while (!worker_tid) sched_yield();
  struct timespec past_other = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(pthread_rwlock_tryrdlock(&rw_other));
  CONF_SHOW(pthread_rwlock_trywrlock(&rw_other));
  CONF_SHOW(pthread_rwlock_timedrdlock(&rw_other, &past_other));
  CONF_SHOW(pthread_rwlock_timedwrlock(&rw_other, &past_other));
  struct timespec soon = conf_deadline(CLOCK_REALTIME, 30);
  CONF_SHOW(pthread_rwlock_timedrdlock(&rw_other, &soon));
  release_holder(th);

  pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
  struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(pthread_rwlock_rdlock(&rw));
  CONF_SHOW(pthread_rwlock_trywrlock(&rw));
  CONF_SHOW(pthread_rwlock_timedwrlock(&rw, &past));
  CONF_SHOW(pthread_rwlock_tryrdlock(&rw));
  CONF_SHOW(pthread_rwlock_unlock(&rw));
  CONF_SHOW(pthread_rwlock_unlock(&rw));
  CONF_SHOW(pthread_rwlock_wrlock(&rw));
  CONF_SHOW(pthread_rwlock_tryrdlock(&rw));
  CONF_SHOW(pthread_rwlock_trywrlock(&rw));
  CONF_SHOW(pthread_rwlock_rdlock(&rw)); /* own write lock: EDEADLK */
  CONF_SHOW(pthread_rwlock_wrlock(&rw));
  CONF_SHOW(pthread_rwlock_timedrdlock(&rw, &past));
  struct timespec mono = conf_deadline(CLOCK_MONOTONIC, -1000);
  CONF_SHOW(pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &mono));
  struct timespec bad = {0, -5};
  CONF_SHOW(pthread_rwlock_timedrdlock(&rw, &bad));
  CONF_SHOW(pthread_rwlock_unlock(&rw));
  CONF_SHOW(pthread_rwlock_unlock(&rw));
}

static void spin_errors(void) {
  pthread_spinlock_t sp;
  CONF_SHOW(pthread_spin_init(&sp, PTHREAD_PROCESS_PRIVATE));
  CONF_SHOW(pthread_spin_trylock(&sp));
  CONF_SHOW(pthread_spin_trylock(&sp));
  CONF_SHOW(pthread_spin_unlock(&sp));
  CONF_SHOW(pthread_spin_lock(&sp));
  CONF_SHOW(pthread_spin_unlock(&sp));
}

#define BARRIER_THREADS 4
#define BARRIER_ROUNDS 5
static pthread_barrier_t barrier;
static _Atomic int serials, zeros, others;

static void *barrier_worker(void *arg) {
  for (int r = 0; r < BARRIER_ROUNDS; r++) {
    int rc = pthread_barrier_wait(&barrier);
    if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
      serials++;
    else if (rc == 0)
      zeros++;
    else
      others++;
  }
  return arg;
}

static void barrier_serial(void) {
  CONF_SHOW(pthread_barrier_init(&barrier, NULL, 0));
  CONF_SHOW(pthread_barrier_init(&barrier, NULL, BARRIER_THREADS));
  pthread_t th[BARRIER_THREADS];
  for (int i = 0; i < BARRIER_THREADS; i++) th[i] = conf_spawn(barrier_worker, NULL);
  for (int i = 0; i < BARRIER_THREADS; i++) pthread_join(th[i], NULL);
  say("%d rounds of %d: %d serial, %d zero, %d other", BARRIER_ROUNDS, BARRIER_THREADS,
      (int)serials, (int)zeros, (int)others);
  CONF_SHOW(pthread_barrier_destroy(&barrier));
  pthread_barrier_t one;
  pthread_barrier_init(&one, NULL, 1);
  int rc = pthread_barrier_wait(&one);
  say("barrier of one: %s", rc == PTHREAD_BARRIER_SERIAL_THREAD ? "SERIAL" : err_name(rc));
}

static void sched_errors(void) {
  cpu_set_t empty, one;
  CPU_ZERO(&empty);
  CONF_SHOW(sched_setaffinity(0, sizeof empty, &empty));
  CONF_SHOW(pthread_setaffinity_np(pthread_self(), sizeof empty, &empty));
  CONF_SHOW(sched_setaffinity(0, 0, &empty));
  CONF_SHOW(sched_setaffinity(-5, sizeof empty, &empty));
  CONF_SHOW(sched_getaffinity(0, sizeof one, &one));
  CONF_SHOW(sched_setaffinity(0, sizeof one, &one));
  CONF_SHOW(pthread_setaffinity_np(pthread_self(), sizeof one, &one));
  struct sched_param p = {.sched_priority = 50};
  CONF_SHOW(pthread_setschedparam(pthread_self(), SCHED_OTHER, &p));
  CONF_SHOW(sched_setscheduler(0, 12345, &p));
  CONF_SHOW(sched_setparam(-3, &p));
  p.sched_priority = 0;
  CONF_SHOW(pthread_setschedparam(pthread_self(), SCHED_OTHER, &p));
  CONF_SHOW(pthread_setname_np(pthread_self(), "a-name-longer-than-sixteen"));
  CONF_SHOW(pthread_setname_np(pthread_self(), "fifteen-chars-x"));
  char name[32] = "";
  CONF_SHOW(pthread_getname_np(pthread_self(), name, 4));
  CONF_SHOW(pthread_getname_np(pthread_self(), name, sizeof name));
  say("name %s", name);
  CONF_SHOW(pthread_setconcurrency(-1));
  CONF_SHOW(pthread_setconcurrency(3));
  say("concurrency %d", pthread_getconcurrency());
  CONF_SHOW(sched_yield());
}

static void on_signal(int sig) { (void)sig; }

static pthread_t sleeper_thread;

/* Interrupts the main thread's sleep once it sleeps. */
static void *interrupter(void *arg) {
  conf_wait_blocked((pid_t)(intptr_t)arg);
  pthread_kill(sleeper_thread, SIGUSR1);
  return NULL;
}

static void interrupt_me_soon(void) {
  sleeper_thread = pthread_self();
  pthread_detach(conf_spawn(interrupter, (void *)(intptr_t)conf_gettid()));
}

static void sleep_errors(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal; /* no SA_RESTART */
  sigaction(SIGUSR1, &sa, NULL);

  struct timespec req = {5, 0}, rem = {0, 0};
  interrupt_me_soon();
  CONF_SHOW(nanosleep(&req, &rem));
  say("nanosleep remaining: %s", rem.tv_sec < 5 && (rem.tv_sec > 0 || rem.tv_nsec > 0)
                                     ? "between 0 and 5 s" : "wrong");
  rem.tv_sec = rem.tv_nsec = 0;
  interrupt_me_soon();
  CONF_SHOW(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem));
  say("clock_nanosleep remaining: %s", rem.tv_sec < 5 && (rem.tv_sec > 0 || rem.tv_nsec > 0)
                                           ? "between 0 and 5 s" : "wrong");
  struct timespec abs_time = conf_deadline(CLOCK_MONOTONIC, 5000);
  rem.tv_sec = 77;
  interrupt_me_soon();
  CONF_SHOW(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &abs_time, &rem));
  say("absolute sleep leaves rem alone: %s", rem.tv_sec == 77 ? "yes" : "no");
  interrupt_me_soon();
  CONF_SHOW(usleep(5000000));
  interrupt_me_soon();
  unsigned left = sleep(5);
  say("sleep interrupted: %s", left >= 4 && left <= 5 ? "4 or 5 s left" : "wrong");

  struct timespec bad = {0, 1000000000}, neg = {-1, 0};
  CONF_SHOW(nanosleep(&bad, NULL));
  CONF_SHOW(nanosleep(&neg, NULL));
  CONF_SHOW(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL));
  CONF_SHOW(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &req, NULL));
  CONF_SHOW(clock_nanosleep(12345, 0, &req, NULL));
  struct timespec zero = {0, 0};
  CONF_SHOW(nanosleep(&zero, NULL));
  CONF_SHOW(clock_nanosleep(CLOCK_REALTIME, 0, &zero, NULL));
  struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &past, NULL));
  CONF_SHOW(usleep(0));
  CONF_SHOW(sleep(0));
}

/* Every success path of a wrapped call, contended or not: errno stays. */
static sem_t posted_later;

static void *post_after_block(void *arg) {
  conf_wait_blocked((pid_t)(intptr_t)arg);
  sem_post(&posted_later);
  return NULL;
}

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int cv_ready;

static void *signal_after_block(void *arg) {
  conf_wait_blocked((pid_t)(intptr_t)arg);
  pthread_mutex_lock(&cm);
  cv_ready = 1;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&cm);
  return NULL;
}

static void *unlock_after_block(void *arg) {
  conf_wait_blocked((pid_t)(intptr_t)arg);
  sem_post(&held_released);
  return NULL;
}

static void *sleep_a_little(void *arg) {
  conf_sleep_ms(30);
  return arg;
}

static int wait_for_cv(void) {
  int rc = 0;
  while (!cv_ready && rc == 0) rc = pthread_cond_wait(&cv, &cm);
  return rc;
}

static void errno_kept(void) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  CONF_SHOW(pthread_mutex_lock(&m));
  CONF_SHOW(pthread_mutex_unlock(&m));
  CONF_SHOW(pthread_mutex_trylock(&m));
  CONF_SHOW(pthread_mutex_unlock(&m));
  struct timespec later = conf_deadline(CLOCK_REALTIME, 5000);
  CONF_SHOW(pthread_mutex_timedlock(&m, &later));
  CONF_SHOW(pthread_mutex_unlock(&m));

  /* Contended: the wrapper's trylock said EBUSY first. */
  pthread_t th = hold_in_thread();
  pthread_detach(conf_spawn(unlock_after_block, (void *)(intptr_t)conf_gettid()));
  CONF_SHOW(pthread_mutex_lock(&held));
  CONF_SHOW(pthread_mutex_unlock(&held));
  pthread_join(th, NULL);

  sem_init(&posted_later, 0, 1);
  CONF_SHOW(sem_wait(&posted_later));
  CONF_SHOW(sem_post(&posted_later));
  CONF_SHOW(sem_trywait(&posted_later));
  CONF_SHOW(sem_post(&posted_later));
  CONF_SHOW(sem_timedwait(&posted_later, &later));
  /* Blocked: the wrapper's sem_trywait failed with EAGAIN first. */
  pthread_detach(conf_spawn(post_after_block, (void *)(intptr_t)conf_gettid()));
  CONF_SHOW(sem_wait(&posted_later));
  pthread_detach(conf_spawn(post_after_block, (void *)(intptr_t)conf_gettid()));
  later = conf_deadline(CLOCK_REALTIME, 5000);
  CONF_SHOW(sem_timedwait(&posted_later, &later));

  pthread_mutex_lock(&cm);
  pthread_detach(conf_spawn(signal_after_block, (void *)(intptr_t)conf_gettid()));
  CONF_SHOW(wait_for_cv());
  pthread_mutex_unlock(&cm);
  CONF_SHOW(pthread_cond_signal(&cv));
  CONF_SHOW(pthread_cond_broadcast(&cv));

  pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
  CONF_SHOW(pthread_rwlock_rdlock(&rw));
  CONF_SHOW(pthread_rwlock_unlock(&rw));
  CONF_SHOW(pthread_rwlock_wrlock(&rw));
  CONF_SHOW(pthread_rwlock_unlock(&rw));
  pthread_spinlock_t sp;
  pthread_spin_init(&sp, 0);
  CONF_SHOW(pthread_spin_lock(&sp));
  CONF_SHOW(pthread_spin_unlock(&sp));
  pthread_barrier_t one;
  pthread_barrier_init(&one, NULL, 1);
  CONF_SHOW(pthread_barrier_wait(&one) == PTHREAD_BARRIER_SERIAL_THREAD);

  pthread_t worker;
  CONF_SHOW(pthread_create(&worker, NULL, sleep_a_little, NULL));
  CONF_SHOW(pthread_join(worker, NULL));
  CONF_SHOW(pthread_create(&worker, NULL, sleep_a_little, NULL));
  CONF_SHOW(pthread_detach(worker));
  struct timespec ms = {0, 1000000};
  CONF_SHOW(nanosleep(&ms, NULL));
  CONF_SHOW(clock_nanosleep(CLOCK_MONOTONIC, 0, &ms, NULL));
  CONF_SHOW(usleep(1000));
  CONF_SHOW(sched_yield());
  CONF_SHOW(pthread_setname_np(pthread_self(), "kept"));
  cpu_set_t set;
  sched_getaffinity(0, sizeof set, &set);
  CONF_SHOW(sched_setaffinity(0, sizeof set, &set));
  CONF_SHOW(pthread_setaffinity_np(pthread_self(), sizeof set, &set));
}

static const conf_case cases[] = {
    CONF_CASE(mutex_errors), CONF_CASE(robust_mutex), CONF_CASE(join_errors),
    CONF_CASE(sem_errors),   CONF_CASE(cond_errors),  CONF_CASE(rwlock_errors),
    CONF_CASE(spin_errors),  CONF_CASE(barrier_serial), CONF_CASE(sched_errors),
    CONF_CASE(sleep_errors), CONF_CASE(errno_kept),
};

int main(int argc, char **argv) {
  return conf_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
