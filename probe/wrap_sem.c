/* sem_*: BLOCKED_SEM only when sem_trywait would fail. sem_post must stay
 * async-signal-safe: it only looks the object up (lock-free, no malloc). */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

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

static int sem_wait_common(sem_t *s, const sem_call *c, const void *caller) {
  tm_thread *t = tm_observer();
  if (!t || (c->kind != SEM_WAIT && !tm_valid_timeout(c->clk, c->abstime)))
    return real_sem_wait(s, c);
  int saved = errno;
  /* glibc acts on a pending cancellation before even a free semaphore. */
  pthread_testcancel();
  if (tm_real.sem_trywait(s) == 0) {
    tm_count_acquire(tm_object_get(s, TM_KIND_SEM), TM_ACQ_SHARED);
    return 0;
  }
  if (errno != EAGAIN) {
    errno = saved;
    return real_sem_wait(s, c); /* EINVAL and the like: its own answer */
  }
  errno = saved; /* a wait that succeeds must not leave trywait's EAGAIN */
  tm_object *o = tm_object_get(s, TM_KIND_SEM);
  tm_wait w;
  int rc;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_SEM, 0, caller);
  pthread_cleanup_push(tm_wait_cancelled, &w);
  rc = real_sem_wait(s, c);
  pthread_cleanup_pop(0);
  int err = errno;
  tm_wait_end(&w, rc == 0 ? TM_ACQ_SHARED : TM_ACQ_NONE);
  errno = err;
  return rc;
}

TM_EXPORT int sem_wait(sem_t *s) {
  sem_call c = {SEM_WAIT, CLOCK_REALTIME, NULL};
  return sem_wait_common(s, &c, TM_CALLER());
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
  tm_thread *t = tm_observer();
  int rc = tm_real.sem_trywait(s);
  if (t && rc == 0) tm_count_acquire(tm_object_get(s, TM_KIND_SEM), TM_ACQ_SHARED);
  return rc;
}

/* Async-signal-safe: no registration, no lock, no allocation; the object
 * table is lock-free and mapped with mmap. */
TM_EXPORT int sem_post(sem_t *s) {
  tm_real_ensure();
  tm_thread *t = tm_self;
  if (t && t->guard == 0 && atomic_load_explicit(&tm_active, memory_order_relaxed)) {
    int saved = errno;
    tm_object_get(s, TM_KIND_SEM);
    errno = saved;
  }
  return tm_real.sem_post(s);
}
