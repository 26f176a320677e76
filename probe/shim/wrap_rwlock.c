/* pthread_rwlock_*: try first like mutexes. Writers count under the lock;
 * readers count with an atomic (several hold it at once). */
#include <errno.h>
#include <pthread.h>

#include "observe.h"
#include "real.h"
#include "wrap.h"

enum rw_kind { RD, RD_TIMED, RD_CLOCK, WR, WR_TIMED, WR_CLOCK };

typedef struct rw_call {
  enum rw_kind kind;
  clockid_t clk;
  const struct timespec *abstime;
} rw_call;

static inline bool is_writer(enum rw_kind k) { return k >= WR; }

static int real_rw(pthread_rwlock_t *l, const rw_call *c) {
  switch (c->kind) {
  case RD: return tm_real.pthread_rwlock_rdlock(l);
  case RD_TIMED: return tm_real.pthread_rwlock_timedrdlock(l, c->abstime);
  case RD_CLOCK: return tm_real.pthread_rwlock_clockrdlock(l, c->clk, c->abstime);
  case WR: return tm_real.pthread_rwlock_wrlock(l);
  case WR_TIMED: return tm_real.pthread_rwlock_timedwrlock(l, c->abstime);
  default: return tm_real.pthread_rwlock_clockwrlock(l, c->clk, c->abstime);
  }
}

/* Writers hold the lock alone: a plain increment and hold sampling.
 * Readers count with an atomic (several hold it at once). */
static inline void count_fast(pthread_rwlock_t *l, bool writer) {
  if (writer) {
    tm_count_writer(l);
    return;
  }
  tm_count_shared(l, TM_KIND_RWLOCK);
}

__attribute__((noinline)) static int rw_contended(tm_thread *t, pthread_rwlock_t *l, int rc,
                                                  const rw_call *c, const void *caller) {
  bool writer = is_writer(c->kind);
  int owner = l->__data.__cur_writer;
  /* EAGAIN (reader limit) or our own write lock (EDEADLK): no contention. */
  if (rc != EBUSY || (uint32_t)owner == t->tid || !tm_session_active()) return real_rw(l, c);
  tm_object *o = tm_object_get(l, TM_KIND_RWLOCK);
  tm_wait w;
  /* Releaser: the writer seen at arrival (0 when readers held it). */
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_RWLOCK, (uint32_t)owner, caller);
  rc = real_rw(l, c);
  tm_wait_end(&w, rc != 0 ? TM_ACQ_NONE : writer ? TM_ACQ_EXCLUSIVE : TM_ACQ_SHARED);
  if (rc == 0 && writer) tm_hold_tick(o, l, TM_KIND_RWLOCK);
  return rc;
}

static inline int try_rw(pthread_rwlock_t *l, bool writer) {
  return writer ? tm_real.pthread_rwlock_trywrlock(l) : tm_real.pthread_rwlock_tryrdlock(l);
}

__attribute__((noinline)) static int rw_general(pthread_rwlock_t *l, const rw_call *c,
                                                const void *caller) {
  tm_thread *t = tm_observer();
  bool timed = c->kind != RD && c->kind != WR;
  if (!t || (timed && !tm_valid_timeout(c->clk, c->abstime))) return real_rw(l, c);
  bool writer = is_writer(c->kind);
  int rc = try_rw(l, writer);
  if (TM_LIKELY(rc == 0)) {
    count_fast(l, writer);
    return 0;
  }
  return rw_contended(t, l, rc, c, caller);
}

/* The hot path keeps no record across its trylock: reread it here. */
__attribute__((noinline)) static int rw_contended_self(pthread_rwlock_t *l, int rc,
                                                       const rw_call *c, const void *caller) {
  return rw_contended(tm_self, l, rc, c, caller);
}

/* The untimed calls' hot path, like pthread_mutex_lock's: only l lives
 * across the trylock, and the return address is read on the slow branches
 * alone (a macro, so that TM_CALLER is the exported function's). */
#define RW_LOCK_FAST(l, c, writer)                                                     \
  do {                                                                                 \
    if (TM_UNLIKELY(tm_observer_fast() == NULL)) return rw_general(l, c, TM_CALLER()); \
    int rc_ = try_rw(l, writer);                                                       \
    if (TM_UNLIKELY(rc_ != 0)) return rw_contended_self(l, rc_, c, TM_CALLER());       \
    count_fast(l, writer);                                                             \
    return 0;                                                                          \
  } while (0)

TM_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l) {
  static const rw_call c = {RD, CLOCK_REALTIME, NULL};
  RW_LOCK_FAST(l, &c, false);
}

TM_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime) {
  rw_call c = {RD_TIMED, CLOCK_REALTIME, abstime};
  return rw_general(l, &c, TM_CALLER());
}

TM_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clk,
                                         const struct timespec *abstime) {
  rw_call c = {RD_CLOCK, clk, abstime};
  return rw_general(l, &c, TM_CALLER());
}

TM_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l) {
  static const rw_call c = {WR, CLOCK_REALTIME, NULL};
  RW_LOCK_FAST(l, &c, true);
}

TM_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime) {
  rw_call c = {WR_TIMED, CLOCK_REALTIME, abstime};
  return rw_general(l, &c, TM_CALLER());
}

TM_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clk,
                                         const struct timespec *abstime) {
  rw_call c = {WR_CLOCK, clk, abstime};
  return rw_general(l, &c, TM_CALLER());
}

__attribute__((noinline)) static int try_general(pthread_rwlock_t *l, bool writer) {
  tm_thread *t = tm_observer();
  int rc = try_rw(l, writer);
  if (t && rc == 0) count_fast(l, writer);
  return rc;
}

#define RW_TRY_FAST(l, writer)                                                  \
  do {                                                                          \
    if (TM_UNLIKELY(tm_observer_fast() == NULL)) return try_general(l, writer); \
    int rc_ = try_rw(l, writer);                                                \
    if (TM_UNLIKELY(rc_ != 0)) return rc_;                                      \
    count_fast(l, writer);                                                      \
    return 0;                                                                   \
  } while (0)

TM_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l) {
  RW_TRY_FAST(l, false);
}

TM_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l) {
  RW_TRY_FAST(l, true);
}

__attribute__((noinline)) static int rw_unlock_sampled(pthread_rwlock_t *l) {
  tm_hold_end(l, TM_KIND_RWLOCK);
  return tm_real.pthread_rwlock_unlock(l);
}

TM_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l) {
  if (TM_UNLIKELY(tm_hold_timing(l))) return rw_unlock_sampled(l);
  return tm_real.pthread_rwlock_unlock(l);
}
