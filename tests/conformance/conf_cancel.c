/* Cancellation: at each cancellation point the probe wraps (blocked in it,
 * or with the cancel already pending when it is called), not at the calls
 * that are not cancellation points, asynchronous and disabled
 * cancellation, detach while cancelling, and pthread_exit with its cleanup
 * handlers and TSD destructors. Cleanup handlers print, so their order
 * shows; joins print whether the result is PTHREAD_CANCELED. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"

static _Atomic pid_t worker_tid;
static pthread_mutex_t lock;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static sem_t sem_zero, sem_one;
static pthread_barrier_t barrier2, barrier1;
static pthread_t forever_thread;

/* What a worker with a cancel pending got to: it does not print itself,
 * since its write(2) in fflush is a cancellation point that would leave
 * the line in stdout's buffer for another thread to flush. */
static _Atomic int op_returned, op_rc, op_survived;

static void say_progress(const char *what) {
  if (!op_returned)
    say("  %s: cancelled inside the call", what);
  else
    say("  %s returned %s, then %s", what, err_name(op_rc),
        op_survived ? "was not cancelled" : "cancelled at pthread_testcancel");
  op_returned = op_rc = op_survived = 0;
}

static void cleanup_say(void *what) { say("  cleanup %s", (const char *)what); }

/* The cond wait's cleanup: glibc re-locked the mutex before unwinding. */
static void cleanup_unlock(void *m) {
  int rc = pthread_mutex_unlock(m);
  say("  cleanup unlock: %s", err_name(rc));
}

static void say_join(pthread_t th, const char *what) {
  void *ret;
  int rc = pthread_join(th, &ret);
  say("%s: join %s, %s", what, err_name(rc),
      ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "returned a value");
}

static void *blocked_forever(void *arg) {
  for (;;) pause();
  return arg;
}

static void setup(void) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_init(&lock, &a);
  sem_init(&sem_zero, 0, 0);
  sem_init(&sem_one, 0, 1);
  pthread_barrier_init(&barrier2, NULL, 2);
  pthread_barrier_init(&barrier1, NULL, 1);
  forever_thread = conf_spawn(blocked_forever, NULL);
}

/* ---- the operations: a blocking form and one that would not block ---- */

typedef struct op {
  const char *name;
  int (*call)(bool block); /* returns the call's result (errno for -1) */
} op;

static int result(int rc) { return rc == -1 ? errno : rc; }

static int op_cond_wait(bool block) {
  int rc;
  pthread_mutex_lock(&lock);
  pthread_cleanup_push(cleanup_unlock, &lock);
  /* Not blocking: a wait whose deadline has passed. */
  struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
  rc = block ? pthread_cond_wait(&cond, &lock) : pthread_cond_timedwait(&cond, &lock, &past);
  pthread_cleanup_pop(1);
  return rc;
}

static int op_cond_timedwait(bool block) {
  int rc;
  pthread_mutex_lock(&lock);
  pthread_cleanup_push(cleanup_unlock, &lock);
  struct timespec when = conf_deadline(CLOCK_REALTIME, block ? 60000 : -1000);
  rc = pthread_cond_timedwait(&cond, &lock, &when);
  pthread_cleanup_pop(1);
  return rc;
}

static int op_cond_clockwait(bool block) {
  int rc;
  pthread_mutex_lock(&lock);
  pthread_cleanup_push(cleanup_unlock, &lock);
  struct timespec when = conf_deadline(CLOCK_MONOTONIC, block ? 60000 : -1000);
  rc = pthread_cond_clockwait(&cond, &lock, CLOCK_MONOTONIC, &when);
  pthread_cleanup_pop(1);
  return rc;
}

static int op_join(bool block) {
  if (block) return pthread_join(forever_thread, NULL);
  return pthread_join(pthread_self(), NULL); /* EDEADLK, at once */
}

static int op_timedjoin(bool block) {
  struct timespec when = conf_deadline(CLOCK_REALTIME, block ? 60000 : -1000);
  return pthread_timedjoin_np(forever_thread, NULL, &when);
}

static int op_sem_wait(bool block) { return result(sem_wait(block ? &sem_zero : &sem_one)); }

static int op_sem_timedwait(bool block) {
  struct timespec when = conf_deadline(CLOCK_REALTIME, block ? 60000 : -1000);
  return result(sem_timedwait(&sem_zero, &when));
}

static int op_sem_clockwait(bool block) {
  struct timespec when = conf_deadline(CLOCK_MONOTONIC, block ? 60000 : -1000);
  return result(sem_clockwait(&sem_zero, CLOCK_MONOTONIC, &when));
}

static int op_nanosleep(bool block) {
  struct timespec ts = {block ? 60 : 0, 0};
  return result(nanosleep(&ts, NULL));
}

static int op_clock_nanosleep(bool block) {
  struct timespec ts = {block ? 60 : 0, 0};
  return clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

static int op_clock_nanosleep_abs(bool block) {
  struct timespec when = conf_deadline(CLOCK_MONOTONIC, block ? 60000 : -1000);
  return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &when, NULL);
}

static int op_usleep(bool block) { return result(usleep(block ? 60000000 : 0)); }

static int op_sleep(bool block) { return (int)sleep(block ? 60 : 0); }

/* Not cancellation points: with a cancel pending, they return. */
static int op_mutex_lock(bool block) {
  (void)block;
  int rc = pthread_mutex_lock(&lock);
  pthread_mutex_unlock(&lock);
  return rc;
}

static int op_barrier_wait(bool block) {
  (void)block;
  int rc = pthread_barrier_wait(&barrier1);
  return rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : rc;
}

static int op_sem_trywait(bool block) {
  (void)block;
  int rc = result(sem_trywait(&sem_one));
  if (rc == 0) sem_post(&sem_one);
  return rc;
}

static int op_sem_post(bool block) {
  (void)block;
  int rc = result(sem_post(&sem_zero));
  sem_trywait(&sem_zero);
  return rc;
}

static int op_sched_yield(bool block) {
  (void)block;
  return result(sched_yield());
}

static void *returns_arg(void *arg) { return arg; }

static int op_pthread_create(bool block) {
  (void)block;
  pthread_t th;
  int rc = pthread_create(&th, NULL, returns_arg, NULL);
  if (rc == 0) pthread_detach(th);
  return rc;
}

/* The child inherits the pending cancel; it ends at once with a status
 * the main thread reads after the join (waitpid is a cancellation point). */
static _Atomic pid_t forked_child;

static int op_fork(bool block) {
  (void)block;
  pid_t pid = fork();
  if (pid == 0) _exit(3);
  forked_child = pid;
  return pid < 0 ? errno : 0;
}

static int op_mutex_lock_contended(bool block) {
  (void)block;
  int rc = pthread_mutex_lock(&lock);
  pthread_mutex_unlock(&lock);
  return rc;
}

static int op_barrier_wait_second(bool block) {
  (void)block;
  int rc = pthread_barrier_wait(&barrier2);
  return rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : rc;
}

static const op ops[] = {
    {"pthread_cond_wait", op_cond_wait},
    {"pthread_cond_timedwait", op_cond_timedwait},
    {"pthread_cond_clockwait", op_cond_clockwait},
    {"pthread_join", op_join},
    {"pthread_timedjoin_np", op_timedjoin},
    {"sem_wait", op_sem_wait},
    {"sem_timedwait", op_sem_timedwait},
    {"sem_clockwait", op_sem_clockwait},
    {"nanosleep", op_nanosleep},
    {"clock_nanosleep", op_clock_nanosleep},
    {"clock_nanosleep_abs", op_clock_nanosleep_abs},
    {"usleep", op_usleep},
    {"sleep", op_sleep},
    {"pthread_mutex_lock", op_mutex_lock},
    {"pthread_barrier_wait", op_barrier_wait},
    {"sem_trywait", op_sem_trywait},
    {"sem_post", op_sem_post},
    {"sched_yield", op_sched_yield},
    {"pthread_create", op_pthread_create},
    /* The main thread holds the mutex and arrives at the barrier: these
     * block while the cancel is pending, and go through the probe's
     * contention accounting (a stack unwind) when they return. */
    {"pthread_mutex_lock (contended)", op_mutex_lock_contended},
    {"pthread_barrier_wait (blocks)", op_barrier_wait_second},
};
#define N_OPS (sizeof ops / sizeof ops[0])
#define N_BLOCKING 13 /* ops[0..12] block when asked to */

static _Atomic int go;

/* Blocks in the op with two cleanup handlers pushed. */
static void *run_blocking(void *arg) {
  const op *o = arg;
  pthread_cleanup_push(cleanup_say, "outer");
  pthread_cleanup_push(cleanup_say, "inner");
  worker_tid = conf_gettid();
  op_rc = o->call(true);
  op_returned = 1;
  pthread_cleanup_pop(0);
  pthread_cleanup_pop(0);
  return NULL;
}

/* The cancel arrives while disabled; the op runs once it is enabled again,
 * with arguments that do not block: a cancellation point acts on it, other
 * calls return and the cancel waits for pthread_testcancel. */
static void *run_pending(void *arg) {
  const op *o = arg;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
  pthread_cleanup_push(cleanup_say, "outer");
  worker_tid = conf_gettid();
  while (!atomic_load(&go)) sched_yield();
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
  op_rc = o->call(false);
  op_returned = 1;
  pthread_testcancel();
  op_survived = 1;
  pthread_cleanup_pop(0);
  return NULL;
}

static void cancel_blocked_in_each(void) {
  setup();
  for (size_t i = 0; i < N_BLOCKING; i++) {
    say("%s:", ops[i].name);
    worker_tid = 0;
    pthread_t th = conf_spawn(run_blocking, (void *)&ops[i]);
    while (!worker_tid) sched_yield();
    conf_wait_blocked(worker_tid);
    pthread_cancel(th);
    say_join(th, ops[i].name);
    say_progress(ops[i].name);
    int rc = pthread_mutex_trylock(&lock); /* the cleanup unlocked it */
    say("  mutex afterwards: trylock %s", err_name(rc));
    if (rc == 0) pthread_mutex_unlock(&lock);
  }
}

static void cancel_pending_at_each(void) {
  setup();
  for (size_t i = 0; i < N_OPS; i++) {
    say("%s:", ops[i].name);
    bool contended = ops[i].call == op_mutex_lock_contended;
    bool barrier = ops[i].call == op_barrier_wait_second;
    if (contended) pthread_mutex_lock(&lock);
    go = 0;
    worker_tid = 0;
    pthread_t th = conf_spawn(run_pending, (void *)&ops[i]);
    pthread_cancel(th);
    go = 1;
    if (contended || barrier) {
      while (!worker_tid) sched_yield();
      conf_wait_blocked(worker_tid);
    }
    if (contended) pthread_mutex_unlock(&lock);
    if (barrier) pthread_barrier_wait(&barrier2);
    say_join(th, ops[i].name);
    say_progress(ops[i].name);
  }
}

/* The mutex and the barrier are not cancellation points: a thread blocked
 * in them is cancelled only after it got through. */
static void *lock_then_testcancel(void *arg) {
  (void)arg;
  pthread_cleanup_push(cleanup_say, "lock waiter");
  worker_tid = conf_gettid();
  op_rc = pthread_mutex_lock(&lock);
  op_returned = 1;
  pthread_mutex_unlock(&lock);
  pthread_testcancel();
  op_survived = 1;
  pthread_cleanup_pop(0);
  return NULL;
}

static _Atomic int worker_barrier_rc;

static void *barrier_then_testcancel(void *arg) {
  (void)arg;
  pthread_cleanup_push(cleanup_say, "barrier waiter");
  worker_tid = conf_gettid();
  worker_barrier_rc = pthread_barrier_wait(&barrier2);
  op_returned = 1;
  pthread_testcancel();
  op_survived = 1;
  pthread_cleanup_pop(0);
  return NULL;
}

static void cancel_blocked_in_non_points(void) {
  setup();
  pthread_mutex_lock(&lock);
  worker_tid = 0;
  pthread_t th = conf_spawn(lock_then_testcancel, NULL);
  while (!worker_tid) sched_yield();
  conf_wait_blocked(worker_tid);
  pthread_cancel(th);
  conf_sleep_ms(50);
  say("mutex released");
  pthread_mutex_unlock(&lock);
  say_join(th, "pthread_mutex_lock");
  say_progress("pthread_mutex_lock");

  worker_tid = 0;
  th = conf_spawn(barrier_then_testcancel, NULL);
  while (!worker_tid) sched_yield();
  conf_wait_blocked(worker_tid);
  pthread_cancel(th);
  conf_sleep_ms(50);
  say("main arrives at the barrier");
  int rc = pthread_barrier_wait(&barrier2);
  say_join(th, "pthread_barrier_wait");
  say_progress("pthread_barrier_wait");
  int serial = (rc == PTHREAD_BARRIER_SERIAL_THREAD) +
               (worker_barrier_rc == PTHREAD_BARRIER_SERIAL_THREAD);
  say("serial threads: %d, other results: %s %s", serial,
      err_name(rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : rc),
      err_name(worker_barrier_rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : worker_barrier_rc));
}

/* A cancel pending while disabled, acted on the moment the thread turns
 * asynchronous: glibc unwinds from inside pthread_setcanceltype, outside
 * any wrapper (a landing pad bound to the wrong _Unwind_Resume crashed). */
static void *async_after_pending(void *arg) {
  (void)arg;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
  pthread_cleanup_push(cleanup_say, "async");
  while (!atomic_load(&go)) sched_yield();
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  op_survived = 1;
  pthread_cleanup_pop(0);
  return NULL;
}

static void async_cancel_pending(void) {
  for (int i = 0; i < 3; i++) {
    go = 0;
    pthread_t th = conf_spawn(async_after_pending, NULL);
    pthread_cancel(th);
    go = 1;
    say_join(th, "async after pending");
    if (op_survived) say("  survived pthread_setcanceltype");
    op_survived = 0;
  }
}

static volatile unsigned long spins;

static void *async_spinning(void *arg) {
  (void)arg;
  pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  pthread_cleanup_push(cleanup_say, "spinner");
  worker_tid = conf_gettid();
  for (;;) spins++;
  pthread_cleanup_pop(0);
  return NULL;
}

static void async_cancel_running(void) {
  worker_tid = 0;
  pthread_t th = conf_spawn(async_spinning, NULL);
  while (!worker_tid) sched_yield();
  conf_sleep_ms(20);
  pthread_cancel(th);
  say_join(th, "async spinner");
}

static void *testcancel_loop(void *arg) {
  (void)arg;
  pthread_cleanup_push(cleanup_say, "testcancel");
  worker_tid = conf_gettid();
  for (;;) {
    spins++;
    pthread_testcancel();
  }
  pthread_cleanup_pop(0);
  return NULL;
}

static void testcancel(void) {
  worker_tid = 0;
  pthread_t th = conf_spawn(testcancel_loop, NULL);
  while (!worker_tid) sched_yield();
  pthread_cancel(th);
  say_join(th, "testcancel loop");
}

static void *disabled_sleeper(void *arg) {
  (void)arg;
  int old;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  say("  disabled (was %s)", old == PTHREAD_CANCEL_ENABLE ? "enabled" : "disabled");
  worker_tid = conf_gettid();
  struct timespec ts = {0, 150000000};
  int rc = nanosleep(&ts, NULL);
  say("  nanosleep with cancel disabled returned %d", rc);
  sem_t s;
  sem_init(&s, 0, 1);
  say("  sem_wait with cancel disabled returned %d", sem_wait(&s));
  pthread_cleanup_push(cleanup_say, "enabled");
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
  say("  enabled");
  pthread_testcancel();
  pthread_cleanup_pop(0);
  return NULL;
}

static void disabled_then_enabled(void) {
  worker_tid = 0;
  pthread_t th = conf_spawn(disabled_sleeper, NULL);
  while (!worker_tid) sched_yield();
  conf_wait_blocked(worker_tid);
  int rc = pthread_cancel(th);
  say_join(th, "disabled then enabled");
  say("cancel had returned %s", err_name(rc));
}

static void cleanup_post(void *s) {
  say("  cleanup of the detached thread");
  sem_post(s);
}

static void *detached_sleeper(void *arg) {
  pthread_cleanup_push(cleanup_post, arg);
  worker_tid = conf_gettid();
  for (;;) sleep(60);
  pthread_cleanup_pop(0);
  return NULL;
}

static void detach_while_cancelling(void) {
  sem_t done;
  sem_init(&done, 0, 0);
  worker_tid = 0;
  pthread_t th = conf_spawn(detached_sleeper, &done);
  while (!worker_tid) sched_yield();
  conf_wait_blocked(worker_tid);
  int cancelled = pthread_cancel(th);
  int detached = pthread_detach(th);
  sem_wait(&done);
  say("detached thread ran its cleanup; cancel %s, detach %s", err_name(cancelled),
      err_name(detached));
}

static pthread_key_t key;

static void tsd_destructor(void *value) { say("  TSD destructor: %s", (const char *)value); }

static void nested_exit(void) {
  pthread_cleanup_push(cleanup_say, "nested");
  pthread_exit((void *)42);
  pthread_cleanup_pop(0);
}

static void *exits_with_handlers(void *arg) {
  (void)arg;
  pthread_setspecific(key, "worker's value");
  pthread_cleanup_push(cleanup_say, "outer");
  nested_exit();
  pthread_cleanup_pop(0);
  return NULL;
}

static void exit_runs_cleanup_and_tsd(void) {
  pthread_key_create(&key, tsd_destructor);
  pthread_t th = conf_spawn(exits_with_handlers, NULL);
  void *ret;
  int rc = pthread_join(th, &ret);
  say("join %s, value %ld", err_name(rc), (long)(intptr_t)ret);
}

/* main's destructors run at its pthread_exit; the worker waits for them. */
static sem_t tsd_done;

static void main_tsd_destructor(void *value) {
  say("  main's TSD destructor: %s", (const char *)value);
  sem_post(&tsd_done);
}

static void *waits_for_main_tsd(void *arg) {
  sem_wait(&tsd_done);
  say("worker saw main's destructor, returns");
  return arg;
}

static void main_exit_runs_tsd(void) {
  sem_init(&tsd_done, 0, 0);
  pthread_key_create(&key, main_tsd_destructor);
  pthread_setspecific(key, "main's value");
  conf_spawn(waits_for_main_tsd, NULL);
  pthread_cleanup_push(cleanup_say, "main");
  pthread_exit(NULL);
  pthread_cleanup_pop(0);
}

static void *self_canceller(void *arg) {
  (void)arg;
  pthread_cleanup_push(cleanup_say, "self");
  op_rc = pthread_cancel(pthread_self());
  op_returned = 1;
  pthread_testcancel();
  op_survived = 1;
  pthread_cleanup_pop(0);
  return NULL;
}

static void cancel_self(void) {
  say_join(conf_spawn(self_canceller, NULL), "self-cancelled");
  say_progress("pthread_cancel(pthread_self())");
}

/* The main thread is cancelled while it joins; the worker ends the process
 * after main's cleanup ran. */
static pthread_t main_thread;
static sem_t main_cleaned;

static void cleanup_main(void *arg) {
  (void)arg;
  say("  cleanup main");
  sem_post(&main_cleaned);
}

static void *cancels_main(void *arg) {
  conf_wait_blocked((pid_t)(intptr_t)arg);
  say("worker cancels main");
  int rc = pthread_cancel(main_thread);
  sem_wait(&main_cleaned);
  say("cancel returned %s; worker returns", err_name(rc));
  return NULL;
}

static void cancel_main_thread(void) {
  main_thread = pthread_self();
  sem_init(&main_cleaned, 0, 0);
  pthread_t th = conf_spawn(cancels_main, (void *)(intptr_t)conf_gettid());
  pthread_cleanup_push(cleanup_main, NULL);
  pthread_join(th, NULL);
  say("not reached");
  pthread_cleanup_pop(0);
}

/* fork is not a cancellation point: the child's copy of the thread has the
 * cancel pending too, and must get to its _exit(3) (the probe opens the
 * child's capture inside fork). */
static void fork_with_cancel_pending(void) {
  static const op fork_op = {"fork", op_fork};
  go = 0;
  pthread_t th = conf_spawn(run_pending, (void *)&fork_op);
  pthread_cancel(th);
  go = 1;
  say_join(th, "fork");
  say_progress("fork");
  int status;
  waitpid(forked_child, &status, 0);
  say("forked child: %s %d", WIFEXITED(status) ? "exited" : "killed by signal",
      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* exit is not a cancellation point: a thread with a cancel pending that
 * calls it ends the process with its status, unless an atexit handler
 * reaches a cancellation point: glibc then unwinds the thread out of exit
 * (the handler's line stays in stdout's buffer) and the process goes on.
 * The probe's own handler must not do that to a program that has none. */
static void *exits_with_cancel_pending(void *arg) {
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
  pthread_cleanup_push(cleanup_say, "exiting thread");
  while (!atomic_load(&go)) sched_yield();
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
  exit((int)(intptr_t)arg);
  pthread_cleanup_pop(0);
  return NULL;
}

static void say_at_exit(void) { say("atexit handler ran"); }

static void exit_with_cancel_pending(void) {
  pthread_t th = conf_spawn(exits_with_cancel_pending, (void *)3);
  pthread_cancel(th);
  go = 1;
  pthread_join(th, NULL);
  say("not reached");
}

static void *underscore_exits_with_cancel_pending(void *arg) {
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
  pthread_cleanup_push(cleanup_say, "exiting thread");
  while (!atomic_load(&go)) sched_yield();
  pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
  _exit((int)(intptr_t)arg);
  pthread_cleanup_pop(0);
  return NULL;
}

static void exit_with_cancel_pending_and_handler(void) {
  atexit(say_at_exit);
  exit_with_cancel_pending();
}

static void underscore_exit_with_cancel_pending(void) {
  pthread_t th = conf_spawn(underscore_exits_with_cancel_pending, (void *)4);
  pthread_cancel(th);
  go = 1;
  pthread_join(th, NULL);
  say("not reached");
}

static const conf_case cases[] = {
    CONF_CASE(cancel_blocked_in_each),
    {"cancel_pending_at_each", cancel_pending_at_each, 0, 5},
    {"cancel_blocked_in_non_points", cancel_blocked_in_non_points, 0, 5},
    {"async_cancel_pending", async_cancel_pending, 0, 20},
    CONF_CASE(async_cancel_running),
    CONF_CASE(testcancel),
    CONF_CASE(disabled_then_enabled),
    CONF_CASE(detach_while_cancelling),
    CONF_CASE(exit_runs_cleanup_and_tsd),
    CONF_CASE(main_exit_runs_tsd),
    CONF_CASE(cancel_self),
    CONF_CASE(cancel_main_thread),
    CONF_CASE(fork_with_cancel_pending),
    CONF_CASE(exit_with_cancel_pending),
    CONF_CASE(exit_with_cancel_pending_and_handler),
    CONF_CASE(underscore_exit_with_cancel_pending),
};

int main(int argc, char **argv) {
  return conf_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
