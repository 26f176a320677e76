/* Thread life: create (through a trampoline that registers the child),
 * exit, join, detach, cancel; fork; and the process ends: __libc_start_main (a
 * return from main is never seen as an exit() call: libc calls its own exit
 * internally), exit and _exit. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "observe.h"
#include "posix_calls.h"
#include "real.h"
#include "session.h"
#include "wrap.h"

/* This thread runs under tm_trampoline, whose cleanup marks its exit. */
static TM_TLS __thread bool in_trampoline;

tm_thread *tm_observer_slow(void) {
  tm_real_ensure();
  if (!atomic_load_explicit(&tm_active, memory_order_relaxed)) return NULL;
  tm_thread *t = tm_self;
  if (!t) t = tm_thread_register_lazy();
  return t && t->guard == 0 ? t : NULL;
}

static void trampoline_exit(void *arg) {
  tm_thread *t = arg;
  /* Locks still held at exit: drop those samples. */
  tm_hold_addr[0] = tm_hold_addr[1] = NULL;
  tm_thread_mark_exited(t);
}

static void *tm_trampoline(void *arg) {
  tm_thread *t = arg;
  void *(*routine)(void *);
  void *routine_arg = t->start_arg;
  __builtin_memcpy(&routine, &t->start_routine, sizeof routine);
  in_trampoline = true;
  tm_thread_attach(t);
  void *ret;
  /* Runs on return, on pthread_exit and on cancellation (forced unwind). */
  pthread_cleanup_push(trampoline_exit, t);
  ret = routine(routine_arg);
  pthread_cleanup_pop(1);
  return ret;
}

/* A C11 thread's (thrd_create): its function returns an int, which
 * thrd_join reads back from the pointer as glibc's own start does. */
static void *tm_trampoline_c11(void *arg) {
  tm_thread *t = arg;
  int (*routine)(void *);
  void *routine_arg = t->start_arg;
  __builtin_memcpy(&routine, &t->start_routine, sizeof routine);
  in_trampoline = true;
  tm_thread_attach(t);
  int ret;
  pthread_cleanup_push(trampoline_exit, t);
  ret = routine(routine_arg);
  pthread_cleanup_pop(1);
  return (void *)(uintptr_t)ret;
}

int tm_thread_create(pthread_t *th, const pthread_attr_t *attr, void *routine_ptr, void *arg,
                     bool c11) {
  atomic_store_explicit(&tm_program_created_thread, 1, memory_order_relaxed);
  tm_session_before_create();
  tm_thread *self = tm_observer();
  tm_thread *child = self ? tm_thread_claim(routine_ptr, arg, self->tid) : NULL;
  if (!child) {
    if (c11) {
      int (*start)(void *);
      __builtin_memcpy(&start, &routine_ptr, sizeof start);
      return tm_real.thrd_create((thrd_t *)th, start, arg);
    }
    void *(*routine)(void *);
    __builtin_memcpy(&routine, &routine_ptr, sizeof routine);
    return tm_real.pthread_create(th, attr, routine, arg);
  }
  tm_thread_inherit(child, self, attr);
  int rc = tm_real.pthread_create(th, attr, c11 ? tm_trampoline_c11 : tm_trampoline, child);
  if (rc != 0) {
    tm_thread_unclaim(child);
    return rc;
  }
  /* So that pthread_setname_np(*th) right after create finds the child
   * even before it ran. The child stores the same value itself. */
  tm_thread_set_handle(child, (uintptr_t)*th);
  return 0;
}

TM_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*routine)(void *),
                             void *arg) {
  void *routine_ptr;
  __builtin_memcpy(&routine_ptr, &routine, sizeof routine_ptr);
  return tm_thread_create(th, attr, routine_ptr, arg, false);
}

void tm_thread_exit(void *ret) {
  tm_real_ensure();
  tm_thread *t = tm_self;
  /* Trampoline threads are marked by the unwind through the trampoline;
   * the main thread and threads created inside libc are marked here. */
  if (t && !in_trampoline) tm_thread_mark_exited(t);
  tm_real.pthread_exit(ret);
}

TM_EXPORT void pthread_exit(void *ret) {
  tm_thread_exit(ret);
}

/* The thread's record if it is registered, for the holder field of a join. */
static uint32_t tid_of(pthread_t th) {
  tm_thread *t = tm_thread_by_handle((uintptr_t)th);
  return t ? t->tid : 0;
}

enum join_kind { JOIN, JOIN_TIMED, JOIN_CLOCK };

static int real_join(enum join_kind kind, pthread_t th, void **ret, clockid_t clk,
                     const struct timespec *abstime) {
  switch (kind) {
    case JOIN_TIMED:
      return tm_real.pthread_timedjoin_np(th, ret, abstime);
    case JOIN_CLOCK:
      return tm_real.pthread_clockjoin_np(th, ret, clk, abstime);
    default:
      return tm_real.pthread_join(th, ret);
  }
}

static int join_observed(tm_thread *self, enum join_kind kind, pthread_t th, void **ret,
                         clockid_t clk, const struct timespec *abstime) {
  tm_wait w;
  int rc;
  tm_wait_begin(&w, self, NULL, TM_STATE_BLOCKED_JOIN, tid_of(th), NULL);
  pthread_cleanup_push(tm_wait_cancelled, &w);
  rc = real_join(kind, th, ret, clk, abstime);
  pthread_cleanup_pop(0);
  /* Joined: the thread whose exit ended the wait released it (no object,
   * so nothing is counted either way); failed or timed out: nobody. */
  tm_wait_end(&w, rc == 0 ? TM_ACQ_SHARED : TM_ACQ_NONE);
  return rc;
}

int tm_thread_join(pthread_t th, void **ret) {
  tm_thread *self = tm_observer();
  if (!self) return tm_real.pthread_join(th, ret);
  return join_observed(self, JOIN, th, ret, CLOCK_REALTIME, NULL);
}

TM_EXPORT int pthread_join(pthread_t th, void **ret) {
  return tm_thread_join(th, ret);
}

TM_EXPORT int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime) {
  tm_thread *self = tm_observer();
  if (!self) return tm_real.pthread_timedjoin_np(th, ret, abstime);
  return join_observed(self, JOIN_TIMED, th, ret, CLOCK_REALTIME, abstime);
}

/* glibc 2.31's: the deadline on a clock of the caller's choosing. */
TM_EXPORT int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clk,
                                   const struct timespec *abstime) {
  tm_thread *self = tm_observer();
  if (!self) return tm_real.pthread_clockjoin_np(th, ret, clk, abstime);
  return join_observed(self, JOIN_CLOCK, th, ret, clk, abstime);
}

/* Never blocks: registers the caller, nothing to account. */
TM_EXPORT int pthread_tryjoin_np(pthread_t th, void **ret) {
  tm_observer();
  return tm_real.pthread_tryjoin_np(th, ret);
}

TM_EXPORT int pthread_detach(pthread_t th) {
  tm_observer();
  return tm_real.pthread_detach(th);
}

TM_EXPORT int pthread_cancel(pthread_t th) {
  tm_observer();
  return tm_real.pthread_cancel(th);
}

TM_HOT static tm_main_fn program_main;

static int tm_main(int argc, char **argv, char **envp) {
  tm_session_start();
  if (tm_session_active()) tm_observer(); /* register the main thread before the program runs */
  int status = program_main(argc, argv, envp);
  tm_note_exit_status(status);
  return status;
}

int __libc_start_main(tm_main_fn main_fn, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

TM_EXPORT int __libc_start_main(tm_main_fn main_fn, int argc, char **argv, void (*init)(void),
                                void (*fini)(void), void (*rtld_fini)(void), void *stack_end) {
  tm_real_need(&tm_real.__libc_start_main, "__libc_start_main");
  program_main = main_fn;
  return tm_real.__libc_start_main(tm_main, argc, argv, init, fini, rtld_fini, stack_end);
}

TM_EXPORT pid_t fork(void) {
  tm_real_ensure();
  return tm_session_fork(tm_real.fork);
}

TM_EXPORT TM_NORETURN void exit(int status) {
  tm_real_need(&tm_real.exit, "exit");
  tm_note_exit_status(status);
  tm_real.exit(status);
}

TM_EXPORT TM_NORETURN void _exit(int status) {
  tm_real_need(&tm_real._exit, "_exit");
  tm_note_exit_status(status);
  tm_session_end_for__exit(status);
  tm_real._exit(status);
}
