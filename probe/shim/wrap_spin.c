/* pthread_spin_*: BLOCKED_SPIN only after a failed trylock. The spinning
 * itself stays on the CPU; the state says what it is spinning for. */
#include <errno.h>
#include <pthread.h>

#include "observe.h"
#include "real.h"
#include "wrap.h"

__attribute__((noinline)) static int spin_contended(pthread_spinlock_t *s, const void *caller) {
  tm_thread *t = tm_self;
  if (!tm_session_active()) return tm_real.pthread_spin_lock(s);
  tm_object *o = tm_object_get((const void *)s, TM_KIND_SPIN);
  tm_wait w;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_SPIN, 0, caller);
  int rc = tm_real.pthread_spin_lock(s);
  tm_wait_end(&w, rc == 0 ? TM_ACQ_EXCLUSIVE : TM_ACQ_NONE);
  if (rc == 0) tm_hold_tick(o, (const void *)s, TM_KIND_SPIN);
  return rc;
}

__attribute__((noinline)) static int spin_general(pthread_spinlock_t *s, const void *caller) {
  if (!tm_observer()) return tm_real.pthread_spin_lock(s);
  if (tm_real.pthread_spin_trylock(s) == 0) {
    tm_count_exclusive((const void *)s, TM_KIND_SPIN);
    return 0;
  }
  return spin_contended(s, caller);
}

TM_EXPORT int pthread_spin_lock(pthread_spinlock_t *s) {
  if (TM_UNLIKELY(tm_observer_fast() == NULL)) return spin_general(s, TM_CALLER());
  if (TM_UNLIKELY(tm_real.pthread_spin_trylock(s) != 0)) return spin_contended(s, TM_CALLER());
  tm_count_exclusive((const void *)s, TM_KIND_SPIN);
  return 0;
}

__attribute__((noinline)) static int spin_trylock_general(pthread_spinlock_t *s) {
  tm_thread *t = tm_observer();
  int rc = tm_real.pthread_spin_trylock(s);
  if (t && rc == 0) tm_count_exclusive((const void *)s, TM_KIND_SPIN);
  return rc;
}

TM_EXPORT int pthread_spin_trylock(pthread_spinlock_t *s) {
  if (TM_UNLIKELY(tm_observer_fast() == NULL)) return spin_trylock_general(s);
  int rc = tm_real.pthread_spin_trylock(s);
  if (TM_UNLIKELY(rc != 0)) return rc;
  tm_count_exclusive((const void *)s, TM_KIND_SPIN);
  return 0;
}

__attribute__((noinline)) static int spin_unlock_sampled(pthread_spinlock_t *s) {
  tm_hold_end((const void *)s, TM_KIND_SPIN);
  return tm_real.pthread_spin_unlock(s);
}

TM_EXPORT int pthread_spin_unlock(pthread_spinlock_t *s) {
  if (TM_UNLIKELY(tm_hold_timing((const void *)s))) return spin_unlock_sampled(s);
  return tm_real.pthread_spin_unlock(s);
}
