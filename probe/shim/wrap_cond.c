/* pthread_cond_*: glibc has two implementations of each of these names,
 * the current one (GLIBC_2.3.2, the default) and the old ABI (GLIBC_2.2.5).
 * We export both versions (libthreadmon.map) and forward each to the real
 * function of the same version: an old-ABI program must never reach the
 * new implementation with its old-layout object.
 *
 * A wait is BLOCKED_COND for the whole call, including the re-acquisition
 * of the mutex inside glibc (invisible to us). The mutex is released by the
 * wait (ends a sampled hold) and held again on return (one acquisition). */
#include <errno.h>
#include <pthread.h>

#include "observe.h"
#include "posix_calls.h"
#include "real.h"
#include "wrap.h"

#define TM_SYMVER(local, name, version) __asm__(".symver " #local ", " #name version)

TM_SYMVER(tm_cond_wait, pthread_cond_wait, "@@GLIBC_2.3.2");
TM_SYMVER(tm_cond_wait_old, pthread_cond_wait, "@GLIBC_2.2.5");
TM_SYMVER(tm_cond_timedwait, pthread_cond_timedwait, "@@GLIBC_2.3.2");
TM_SYMVER(tm_cond_timedwait_old, pthread_cond_timedwait, "@GLIBC_2.2.5");
TM_SYMVER(tm_cond_signal, pthread_cond_signal, "@@GLIBC_2.3.2");
TM_SYMVER(tm_cond_signal_old, pthread_cond_signal, "@GLIBC_2.2.5");
TM_SYMVER(tm_cond_broadcast, pthread_cond_broadcast, "@@GLIBC_2.3.2");
TM_SYMVER(tm_cond_broadcast_old, pthread_cond_broadcast, "@GLIBC_2.2.5");

enum wait_kind { WAIT, WAIT_OLD, WAIT_TIMED, WAIT_TIMED_OLD, WAIT_CLOCK };

typedef struct wait_call {
  enum wait_kind kind;
  clockid_t clk;
  const struct timespec *abstime;
} wait_call;

static int real_wait(pthread_cond_t *c, pthread_mutex_t *m, const wait_call *k) {
  switch (k->kind) {
  case WAIT_OLD: return tm_real.cond_wait_old(c, m);
  case WAIT_TIMED: return tm_real.cond_timedwait(c, m, k->abstime);
  case WAIT_TIMED_OLD: return tm_real.cond_timedwait_old(c, m, k->abstime);
  case WAIT_CLOCK: return tm_real.pthread_cond_clockwait(c, m, k->clk, k->abstime);
  default: return tm_real.cond_wait(c, m);
  }
}

static int wait_common(pthread_cond_t *c, pthread_mutex_t *m, const wait_call *k,
                       const void *caller) {
  tm_thread *t = tm_observer();
  if (!t) return real_wait(c, m, k);
  tm_hold_release(m, TM_KIND_MUTEX);
  tm_object *o = tm_object_lookup(c, TM_KIND_COND, 0);
  tm_wait w;
  int rc;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_COND, 0, caller);
  /* Cancellation: glibc re-locks the mutex, then unwinds through here. */
  pthread_cleanup_push(tm_wait_cancelled, &w);
  rc = real_wait(c, m, k);
  pthread_cleanup_pop(0);
  /* Woken: the last signaller (a spurious wake-up names it too); timed out
   * or failed: nobody. */
  if (rc == 0)
    tm_wait_released_by_object(&w);
  else
    w.releaser_tid = 0;
  tm_wait_end(&w, TM_ACQ_SHARED);
  /* Woken or timed out, the mutex is held again (EINVAL/EPERM aside): an
   * acquisition whose hold may be timed as a lock's. Counted but never timed,
   * a timed hold's weight stood for it: a lock whose holds before the wait
   * and after it differ read 0.25x and 0.56x (docs/benchmarks.md, "Holds
   * after a condition wait"). */
  if (rc == 0 || rc == ETIMEDOUT) {
    tm_object *mo = tm_object_lookup(m, TM_KIND_MUTEX, (uint32_t)m->__data.__kind & 0xffu);
    tm_count_acquire(mo, TM_ACQ_EXCLUSIVE);
    tm_hold_tick(mo, m, TM_KIND_MUTEX);
  }
  return rc;
}

TM_EXPORT int tm_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
TM_EXPORT int tm_cond_wait_old(pthread_cond_t *c, pthread_mutex_t *m);
TM_EXPORT int tm_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
TM_EXPORT int tm_cond_timedwait_old(pthread_cond_t *c, pthread_mutex_t *m,
                                    const struct timespec *t);
TM_EXPORT int tm_cond_signal(pthread_cond_t *c);
TM_EXPORT int tm_cond_signal_old(pthread_cond_t *c);
TM_EXPORT int tm_cond_broadcast(pthread_cond_t *c);
TM_EXPORT int tm_cond_broadcast_old(pthread_cond_t *c);

/* Exported only under their versioned names (.symver; the map hides tm_*). */
int tm_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
  wait_call k = {WAIT, CLOCK_REALTIME, NULL};
  return wait_common(c, m, &k, TM_CALLER());
}

int tm_cond_wait_old(pthread_cond_t *c, pthread_mutex_t *m) {
  wait_call k = {WAIT_OLD, CLOCK_REALTIME, NULL};
  return wait_common(c, m, &k, TM_CALLER());
}

int tm_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime) {
  wait_call k = {WAIT_TIMED, CLOCK_REALTIME, abstime};
  return wait_common(c, m, &k, TM_CALLER());
}

int tm_cond_timedwait_old(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime) {
  wait_call k = {WAIT_TIMED_OLD, CLOCK_REALTIME, abstime};
  return wait_common(c, m, &k, TM_CALLER());
}

/* C11's cnd_wait and cnd_timedwait (wrap_c11.c): the current
 * implementation, the caller's call site. */
int tm_cond_wait_at(pthread_cond_t *c, pthread_mutex_t *m, bool timed,
                    const struct timespec *abstime, const void *caller) {
  wait_call k = {timed ? WAIT_TIMED : WAIT, CLOCK_REALTIME, abstime};
  return wait_common(c, m, &k, caller);
}

TM_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                                     const struct timespec *abstime) {
  wait_call k = {WAIT_CLOCK, clk, abstime};
  return wait_common(c, m, &k, TM_CALLER());
}

/* Signals never block: they make the object known and name the caller as
 * the releaser of the waits they end. */
__attribute__((noinline)) static void note_cond_slow(pthread_cond_t *c) {
  tm_thread *t = tm_observer();
  if (t) tm_note_releaser(t, c, TM_KIND_COND);
}

/* A registered thread and a known cond: one compare, and a store only when
 * the releaser changes (a producer signalling a cond nobody waits on keeps
 * its line clean for the waiters' reads). */
static inline void note_cond(pthread_cond_t *c) {
  tm_thread *t = tm_observer_fast();
  tm_object *o = TM_LIKELY(t != NULL) ? tm_object_home(c) : NULL; /* mapped: t registered */
  if (TM_UNLIKELY(o == NULL)) {
    note_cond_slow(c);
    return;
  }
  if (atomic_load_explicit(&o->releaser_tid, memory_order_relaxed) != t->tid)
    atomic_store_explicit(&o->releaser_tid, t->tid, memory_order_relaxed);
}

int tm_cond_signal(pthread_cond_t *c) {
  note_cond(c);
  return tm_real.cond_signal(c);
}

int tm_cond_signal_old(pthread_cond_t *c) {
  note_cond(c);
  return tm_real.cond_signal_old(c);
}

int tm_cond_broadcast(pthread_cond_t *c) {
  note_cond(c);
  return tm_real.cond_broadcast(c);
}

int tm_cond_broadcast_old(pthread_cond_t *c) {
  note_cond(c);
  return tm_real.cond_broadcast_old(c);
}

int tm_cond_notify(pthread_cond_t *c, bool all) {
  note_cond(c);
  return all ? tm_real.cond_broadcast(c) : tm_real.cond_signal(c);
}
