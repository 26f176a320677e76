/* pthread_barrier_wait: BLOCKED_BARRIER for the whole wait; every arrival
 * is one acquisition and one wait (the last arrival's is short). */
#include <pthread.h>

#include "observe.h"
#include "real.h"
#include "wrap.h"

TM_EXPORT int pthread_barrier_wait(pthread_barrier_t *b) {
  tm_thread *t = tm_observer();
  if (!t) return tm_real.pthread_barrier_wait(b);
  tm_object *o = tm_object_lookup(b, TM_KIND_BARRIER, 0);
  tm_wait w;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_BARRIER, 0, TM_CALLER());
  /* Every arrival names itself before entering: the last one to do so is
   * the last arrival, which releases everybody. (A fast thread already at
   * the next round can overwrite it before a slow waiter reads it.) */
  if (o) atomic_store_explicit(&o->releaser_tid, t->tid, memory_order_relaxed);
  int rc = tm_real.pthread_barrier_wait(b);
  /* glibc returns PTHREAD_BARRIER_SERIAL_THREAD to the round's last arrival
   * (the one whose arrival count is a multiple of the barrier's): it
   * released the round, its own short wait included. Read from the object,
   * a last arrival named a thread already at the next round, and a thread
   * preempted between naming itself and entering named itself. */
  if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
    w.releaser_tid = t->tid;
  else
    tm_wait_released_by_object(&w);
  tm_wait_end(&w, TM_ACQ_SHARED);
  return rc; /* PTHREAD_BARRIER_SERIAL_THREAD for exactly one caller */
}
