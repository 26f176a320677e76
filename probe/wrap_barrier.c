/* pthread_barrier_wait: BLOCKED_BARRIER for the whole wait; every arrival
 * is one acquisition and one wait (the last arrival's is short). */
#include <pthread.h>

#include "real.h"
#include "wrap.h"

TM_EXPORT int pthread_barrier_wait(pthread_barrier_t *b) {
  tm_thread *t = tm_observer();
  if (!t) return tm_real.pthread_barrier_wait(b);
  tm_object *o = tm_object_get(b, TM_KIND_BARRIER);
  tm_wait w;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_BARRIER, 0, TM_CALLER());
  int rc = tm_real.pthread_barrier_wait(b);
  tm_wait_end(&w, TM_ACQ_SHARED);
  return rc; /* PTHREAD_BARRIER_SERIAL_THREAD for exactly one caller */
}
