/* pthread_mutex_*: the real trylock first, so that an uncontended
 * acquisition costs one object-table lookup and a counter bumped while
 * holding the lock; clock reads, events and stacks only when it is busy. */
#include <errno.h>
#include <pthread.h>

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

static inline tm_object *mutex_object(pthread_mutex_t *m) {
  return tm_object_lookup(m, TM_KIND_MUTEX, (uint32_t)m->__data.__kind & 0xffu);
}

/* trylock said no (rc): block in the real call and account for the wait. */
__attribute__((noinline)) static int lock_contended(tm_thread *t, pthread_mutex_t *m, int rc,
                                                    const lock_call *c, const void *caller) {
  /* Not contention: an error the blocking call reports too, or our own
   * lock (errorcheck: EDEADLK; normal: the program deadlocks as without
   * the probe). */
  int owner = m->__data.__owner;
  if (rc != EBUSY || (uint32_t)owner == t->tid) return real_lock(m, c);
  tm_object *o = mutex_object(m);
  tm_wait w;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_MUTEX, (uint32_t)owner, caller);
  rc = real_lock(m, c);
  tm_wait_end(&w, acquired(rc) ? TM_ACQ_EXCLUSIVE : TM_ACQ_NONE);
  if (acquired(rc)) tm_hold_tick(t, m);
  return rc;
}

/* glibc's __owner of a robust mutex abandoned without pthread_mutex_consistent. */
#define TM_MUTEX_NOTRECOVERABLE 0x7ffffffe

static inline int lock_observed(tm_thread *t, pthread_mutex_t *m, const lock_call *c,
                                const void *caller) {
  /* glibc's trylock on such a mutex answers ENOTRECOVERABLE but leaves the
   * lock word set to our tid; the blocking call would then wait forever
   * instead of answering ENOTRECOVERABLE itself. */
  if (TM_UNLIKELY(m->__data.__owner == TM_MUTEX_NOTRECOVERABLE)) return real_lock(m, c);
  int rc = tm_real.pthread_mutex_trylock(m);
  if (TM_LIKELY(acquired(rc))) {
    tm_object *o = mutex_object(m);
    if (TM_LIKELY(o != NULL)) o->acquisitions++;
    tm_hold_tick(t, m);
    return rc; /* EOWNERDEAD: acquired, the caller must make it consistent */
  }
  return lock_contended(t, m, rc, c, caller);
}

TM_EXPORT int pthread_mutex_lock(pthread_mutex_t *m) {
  tm_thread *t = tm_observer();
  if (TM_UNLIKELY(!t)) return tm_real.pthread_mutex_lock(m);
  static const lock_call c = {LOCK, CLOCK_REALTIME, NULL};
  return lock_observed(t, m, &c, TM_CALLER());
}

TM_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime) {
  tm_thread *t = tm_observer();
  if (!t || !tm_valid_timeout(CLOCK_REALTIME, abstime))
    return tm_real.pthread_mutex_timedlock(m, abstime);
  lock_call c = {LOCK_TIMED, CLOCK_REALTIME, abstime};
  return lock_observed(t, m, &c, TM_CALLER());
}

TM_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clk,
                                      const struct timespec *abstime) {
  tm_thread *t = tm_observer();
  if (!t || !tm_valid_timeout(clk, abstime))
    return tm_real.pthread_mutex_clocklock(m, clk, abstime);
  lock_call c = {LOCK_CLOCK, clk, abstime};
  return lock_observed(t, m, &c, TM_CALLER());
}

TM_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m) {
  tm_thread *t = tm_observer();
  int rc = tm_real.pthread_mutex_trylock(m);
  if (t && acquired(rc)) {
    tm_object *o = mutex_object(m);
    if (o) o->acquisitions++;
    tm_hold_tick(t, m);
  }
  return rc;
}

TM_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m) {
  tm_hold_release(tm_self, m, TM_KIND_MUTEX);
  tm_real_ensure();
  return tm_real.pthread_mutex_unlock(m);
}
