/* pthread_mutex_*: the real trylock first, so that an uncontended
 * acquisition costs one object-table lookup and a counter bumped while
 * holding the lock; clock reads, events and stacks only when it is busy. */
#include <errno.h>
#include <pthread.h>

#include "observe.h"
#include "posix_calls.h"
#include "real.h"
#include "wrap.h"

enum lock_kind { LOCK, LOCK_TIMED, LOCK_CLOCK };

typedef struct lock_call {
  enum lock_kind kind;
  clockid_t clk;
  const struct timespec *abstime;
} lock_call;

static int real_lock(pthread_mutex_t *m, const lock_call *c) {
  switch (c->kind) {
  case LOCK_TIMED: return tm_real.pthread_mutex_timedlock(m, c->abstime);
  case LOCK_CLOCK: return tm_real.pthread_mutex_clocklock(m, c->clk, c->abstime);
  default: return tm_real.pthread_mutex_lock(m);
  }
}

static inline bool acquired(int rc) { return rc == 0 || rc == EOWNERDEAD; }

/* One acquisition, counted while holding m. The mutex type (flags of a
 * first sight) is only read when the object is not in its home slot. */
static inline void mutex_count(pthread_mutex_t *m) {
  tm_object *o = tm_object_home_slot(m);
  if (TM_LIKELY(tm_object_is(o, m))) {
    tm_hold_maybe(o, ++o->acquisitions, m, TM_KIND_MUTEX);
  } else {
    tm_count_exclusive_slow(m, TM_KIND_MUTEX, (uint32_t)m->__data.__kind & 0xffu);
  }
}

/* Blocks in the real call on m, held by owner, accounting for the wait. */
static int lock_waiting(tm_thread *t, pthread_mutex_t *m, int owner, const lock_call *c,
                        const void *caller) {
  tm_object *o = tm_object_lookup(m, TM_KIND_MUTEX, (uint32_t)m->__data.__kind & 0xffu);
  tm_wait w;
  /* The holder at arrival is the releaser (w.releaser_tid) unless the lock
   * changed hands meanwhile: recording the unlocker would cost every
   * unlock a store into the object. */
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_MUTEX, (uint32_t)owner, caller);
  int rc = real_lock(m, c);
  tm_wait_end(&w, acquired(rc) ? TM_ACQ_EXCLUSIVE : TM_ACQ_NONE);
  if (acquired(rc)) tm_hold_tick(o, m, TM_KIND_MUTEX);
  return rc;
}

/* trylock said no (rc): block in the real call and account for the wait.
 * Out of line so that the uncontended path saves no registers for it. */
__attribute__((noinline)) static int lock_contended(tm_thread *t, pthread_mutex_t *m, int rc,
                                                    const lock_call *c, const void *caller) {
  if (rc == EOWNERDEAD) { /* acquired: the caller must make it consistent */
    mutex_count(m);
    return rc;
  }
  /* Not contention: an error the blocking call reports too, or our own
   * lock (errorcheck: EDEADLK; normal: the program deadlocks as without
   * the probe); or no session to report to. */
  int owner = m->__data.__owner;
  if (rc != EBUSY || (uint32_t)owner == t->tid || !tm_session_active()) return real_lock(m, c);
  return lock_waiting(t, m, owner, c, caller);
}

/* The hot path keeps no record across its trylock: reread it here. */
__attribute__((noinline)) static int lock_contended_self(pthread_mutex_t *m, int rc,
                                                         const lock_call *c, const void *caller) {
  return lock_contended(tm_self, m, rc, c, caller);
}

/* glibc's __owner of a robust mutex abandoned without pthread_mutex_consistent. */
#define TM_MUTEX_NOTRECOVERABLE 0x7ffffffe

/* glibc's trylock on such a mutex answers ENOTRECOVERABLE but leaves the
 * lock word set to our tid; the blocking call would then wait forever
 * instead of answering ENOTRECOVERABLE itself. */
static inline bool not_recoverable(const pthread_mutex_t *m) {
  return TM_UNLIKELY(m->__data.__owner == TM_MUTEX_NOTRECOVERABLE);
}

/* glibc's kind bit of a PRIO_PROTECT mutex. Its lock refuses (EINVAL) a
 * caller whose priority it cannot raise to the ceiling where its trylock
 * takes the lock, so such a mutex is locked by the real call alone; the
 * owner read first tells whether the call will wait. */
#define TM_MUTEX_PRIO_PROTECT 0x40

static inline bool priority_protected(const pthread_mutex_t *m) {
  return TM_UNLIKELY(m->__data.__kind & TM_MUTEX_PRIO_PROTECT);
}

/* glibc's kind bit of a robust mutex, the only kind that can be not
 * recoverable: the hot path tests both bits with one instruction and
 * leaves robust and PRIO_PROTECT mutexes to lock_general. */
#define TM_MUTEX_ROBUST 0x10

static inline bool robust_or_protected(const pthread_mutex_t *m) {
  return TM_UNLIKELY(m->__data.__kind & (TM_MUTEX_ROBUST | TM_MUTEX_PRIO_PROTECT));
}

static int lock_protected(tm_thread *t, pthread_mutex_t *m, const lock_call *c,
                          const void *caller) {
  int owner = m->__data.__owner;
  if (owner && (uint32_t)owner != t->tid && tm_session_active())
    return lock_waiting(t, m, owner, c, caller);
  int rc = real_lock(m, c);
  if (acquired(rc)) mutex_count(m);
  return rc;
}

static int lock_observed(tm_thread *t, pthread_mutex_t *m, const lock_call *c,
                         const void *caller) {
  if (not_recoverable(m)) return real_lock(m, c);
  if (priority_protected(m)) return lock_protected(t, m, c, caller);
  int rc = tm_real.pthread_mutex_trylock(m);
  if (TM_LIKELY(rc == 0)) {
    mutex_count(m);
    return 0;
  }
  return lock_contended(t, m, rc, c, caller);
}

/* Everything but the common case: a thread not registered yet, probe code,
 * a robust mutex (which may be not recoverable), a priority-protected one. */
__attribute__((noinline)) static int lock_general(pthread_mutex_t *m, const lock_call *c,
                                                  const void *caller) {
  tm_thread *t = tm_observer();
  if (!t) return real_lock(m, c);
  return lock_observed(t, m, c, caller);
}

/* The hot path: the real trylock, a home-slot lookup and the hold-sampling
 * test. CALLER (the return address) is only read on the slow branches: a
 * macro, so that it is the exported function's own. Only m lives across
 * the call: one saved register, which also keeps the stack aligned. */
#define MUTEX_LOCK_FAST(m, CALLER)                                              \
  do {                                                                          \
    static const lock_call c_ = {LOCK, CLOCK_REALTIME, NULL};                   \
    if (TM_UNLIKELY(tm_observer_fast() == NULL) || robust_or_protected(m))      \
      return lock_general(m, &c_, CALLER);                                      \
    int rc_ = tm_real.pthread_mutex_trylock(m);                                 \
    if (TM_UNLIKELY(rc_ != 0)) return lock_contended_self(m, rc_, &c_, CALLER); \
    mutex_count(m);                                                             \
    return 0;                                                                   \
  } while (0)

TM_EXPORT int pthread_mutex_lock(pthread_mutex_t *m) {
  MUTEX_LOCK_FAST(m, TM_CALLER());
}

int tm_mutex_lock_at(pthread_mutex_t *m, const void *caller) {
  MUTEX_LOCK_FAST(m, caller);
}

int tm_mutex_timedlock_at(pthread_mutex_t *m, const struct timespec *abstime, const void *caller) {
  tm_thread *t = tm_observer();
  if (!t || !tm_valid_timeout(CLOCK_REALTIME, abstime))
    return tm_real.pthread_mutex_timedlock(m, abstime);
  lock_call c = {LOCK_TIMED, CLOCK_REALTIME, abstime};
  return lock_observed(t, m, &c, caller);
}

TM_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime) {
  return tm_mutex_timedlock_at(m, abstime, TM_CALLER());
}

TM_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clk,
                                      const struct timespec *abstime) {
  tm_thread *t = tm_observer();
  if (!t || !tm_valid_timeout(clk, abstime))
    return tm_real.pthread_mutex_clocklock(m, clk, abstime);
  lock_call c = {LOCK_CLOCK, clk, abstime};
  return lock_observed(t, m, &c, TM_CALLER());
}

__attribute__((noinline)) static int trylock_general(pthread_mutex_t *m) {
  tm_thread *t = tm_observer();
  int rc = tm_real.pthread_mutex_trylock(m);
  if (t && acquired(rc)) mutex_count(m);
  return rc;
}

/* Busy, an error, or acquired with its owner dead (EOWNERDEAD: counted,
 * the caller must make it consistent). A tail call, so that the hot path
 * keeps no result across the real call. */
__attribute__((noinline)) static int trylock_failed(pthread_mutex_t *m, int rc) {
  if (rc == EOWNERDEAD) mutex_count(m);
  return rc;
}

/* Like the lock's hot path: a registered thread's success returns 0, so
 * nothing but m is kept across the call. */
TM_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m) {
  if (TM_UNLIKELY(tm_observer_fast() == NULL)) return trylock_general(m);
  int rc = tm_real.pthread_mutex_trylock(m);
  if (TM_UNLIKELY(rc != 0)) return trylock_failed(m, rc);
  mutex_count(m);
  return 0;
}

/* The same functions for C11's mtx_* (wrap_c11.c), called directly. */
extern __typeof__(pthread_mutex_trylock) tm_mutex_trylock
    __attribute__((alias("pthread_mutex_trylock"), nothrow));

__attribute__((noinline)) static int unlock_sampled(pthread_mutex_t *m) {
  /* A recursive mutex's inner unlock: the outer hold goes on. */
  if (!tm_hold_inner(m, TM_KIND_MUTEX)) tm_hold_end(m, TM_KIND_MUTEX);
  return tm_real.pthread_mutex_unlock(m);
}

/* One TLS compare and a tail call through a pointer that is always valid
 * (real.c: a resolving stub until the constructor ran). The sampled-hold
 * case is out of line so that nothing is saved around it. */
TM_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m) {
  if (TM_UNLIKELY(tm_hold_timing(m))) return unlock_sampled(m);
  return tm_real.pthread_mutex_unlock(m);
}

extern __typeof__(pthread_mutex_unlock) tm_mutex_unlock
    __attribute__((alias("pthread_mutex_unlock"), nothrow));
