/* sem_*: BLOCKED_SEM only when sem_trywait would fail. sem_post must stay
 * async-signal-safe: it only looks the object up (lock-free, no malloc). */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include "observe.h"
#include "real.h"
#include "wrap.h"

enum sem_kind { SEM_WAIT, SEM_TIMED, SEM_CLOCK };

typedef struct sem_call {
  enum sem_kind kind;
  clockid_t clk;
  const struct timespec *abstime;
} sem_call;

static int real_sem_wait(sem_t *s, const sem_call *c) {
  switch (c->kind) {
  case SEM_TIMED: return tm_real.sem_timedwait(s, c->abstime);
  case SEM_CLOCK: return tm_real.sem_clockwait(s, c->clk, c->abstime);
  default: return tm_real.sem_wait(s);
  }
}

static inline tm_thread *sem_observer(void) {
  tm_thread *t = tm_observer_fast();
  return TM_LIKELY(t != NULL) ? t : tm_observer();
}

/* A successful wait or trywait: readers of a semaphore are many, so the
 * count is atomic. */
static inline void sem_count(sem_t *s) {
  tm_count_shared(s, TM_KIND_SEM);
}

__attribute__((noinline)) static int sem_blocking(tm_thread *t, sem_t *s, const sem_call *c,
                                                  const void *caller) {
  if (!tm_session_active()) return real_sem_wait(s, c);
  tm_object *o = tm_object_get(s, TM_KIND_SEM);
  tm_wait w;
  int rc;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_SEM, 0, caller);
  pthread_cleanup_push(tm_wait_cancelled, &w);
  rc = real_sem_wait(s, c);
  pthread_cleanup_pop(0);
  int err = errno;
  tm_wait_released_by_object(&w); /* the last poster; 0 on failure (tm_wait_end) */
  tm_wait_end(&w, rc == 0 ? TM_ACQ_SHARED : TM_ACQ_NONE);
  errno = err;
  return rc;
}

/* trywait failed (errno set by it; saved = the caller's errno). */
__attribute__((noinline)) static int sem_try_failed(tm_thread *t, sem_t *s, const sem_call *c,
                                                    int saved, const void *caller) {
  if (errno != EAGAIN) {
    errno = saved;
    return real_sem_wait(s, c); /* EINVAL and the like: its own answer */
  }
  errno = saved; /* a wait that succeeds must not leave trywait's EAGAIN */
  return sem_blocking(t, s, c, caller);
}

static int sem_wait_common(sem_t *s, const sem_call *c, const void *caller) {
  tm_thread *t = sem_observer();
  if (!t || (c->kind != SEM_WAIT && !tm_valid_timeout(c->clk, c->abstime)))
    return real_sem_wait(s, c);
  int saved = errno;
  /* glibc acts on a pending cancellation before even a free semaphore. */
  pthread_testcancel();
  if (TM_LIKELY(tm_real.sem_trywait(s) == 0)) {
    sem_count(s);
    return 0;
  }
  return sem_try_failed(t, s, c, saved, caller);
}

/* The hot path of sem_wait: what sem_wait_common does for a registered
 * thread, with the slow branches out of line. */
TM_EXPORT int sem_wait(sem_t *s) {
  static const sem_call c = {SEM_WAIT, CLOCK_REALTIME, NULL};
  tm_thread *t = tm_observer_fast();
  if (TM_UNLIKELY(t == NULL)) return sem_wait_common(s, &c, TM_CALLER());
  int saved = errno;
  pthread_testcancel();
  if (TM_LIKELY(tm_real.sem_trywait(s) == 0)) {
    sem_count(s);
    return 0;
  }
  return sem_try_failed(t, s, &c, saved, TM_CALLER());
}

TM_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime) {
  sem_call c = {SEM_TIMED, CLOCK_REALTIME, abstime};
  return sem_wait_common(s, &c, TM_CALLER());
}

TM_EXPORT int sem_clockwait(sem_t *s, clockid_t clk, const struct timespec *abstime) {
  sem_call c = {SEM_CLOCK, clk, abstime};
  return sem_wait_common(s, &c, TM_CALLER());
}

TM_EXPORT int sem_trywait(sem_t *s) {
  tm_thread *t = sem_observer();
  int rc = tm_real.sem_trywait(s);
  if (t && rc == 0) sem_count(s);
  return rc;
}

__attribute__((noinline)) static void post_note_slow(tm_thread *t, sem_t *s) {
  int saved = errno;
  tm_note_releaser(t, s, TM_KIND_SEM);
  errno = saved;
}

/* Async-signal-safe: no registration, no lock, no allocation (the object
 * table is lock-free and mapped with mmap). The poster names itself as the
 * releaser of the wait it ends: one relaxed store. */
TM_EXPORT int sem_post(sem_t *s) {
  tm_thread *t = tm_observer_fast();
  if (TM_LIKELY(t != NULL)) {
    tm_object *o = tm_object_home(s);
    if (TM_LIKELY(o != NULL))
      atomic_store_explicit(&o->releaser_tid, t->tid, memory_order_relaxed);
    else
      post_note_slow(t, s);
  }
  return tm_real.sem_post(s);
}
