/* pthread_spin_*: BLOCKED_SPIN only after a failed trylock. The spinning
 * itself stays on the CPU; the state says what it is spinning for. */
#include <errno.h>
#include <pthread.h>

#include "real.h"
#include "wrap.h"

static inline void count_fast(tm_thread *t, pthread_spinlock_t *s) {
  tm_object *o = tm_object_lookup((const void *)s, TM_KIND_SPIN, 0);
  if (TM_LIKELY(o != NULL)) o->acquisitions++; /* held: plain increment */
  tm_hold_tick(t, (const void *)s);
}

__attribute__((noinline)) static int spin_contended(tm_thread *t, pthread_spinlock_t *s,
                                                    const void *caller) {
  tm_object *o = tm_object_get((const void *)s, TM_KIND_SPIN);
  tm_wait w;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_SPIN, 0, caller);
  int rc = tm_real.pthread_spin_lock(s);
  tm_wait_end(&w, rc == 0 ? TM_ACQ_EXCLUSIVE : TM_ACQ_NONE);
  if (rc == 0) tm_hold_tick(t, (const void *)s);
  return rc;
}

TM_EXPORT int pthread_spin_lock(pthread_spinlock_t *s) {
  tm_thread *t = tm_observer();
  if (TM_UNLIKELY(!t)) return tm_real.pthread_spin_lock(s);
  if (TM_LIKELY(tm_real.pthread_spin_trylock(s) == 0)) {
    count_fast(t, s);
    return 0;
  }
  return spin_contended(t, s, TM_CALLER());
}

TM_EXPORT int pthread_spin_trylock(pthread_spinlock_t *s) {
  tm_thread *t = tm_observer();
  int rc = tm_real.pthread_spin_trylock(s);
  if (t && rc == 0) count_fast(t, s);
  return rc;
}

TM_EXPORT int pthread_spin_unlock(pthread_spinlock_t *s) {
  tm_hold_release(tm_self, (const void *)s, TM_KIND_SPIN);
  tm_real_ensure();
  return tm_real.pthread_spin_unlock(s);
}
