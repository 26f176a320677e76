/* Whether a wrapper observes this call: the session's switch (tm_active,
 * life/session.c) and the calling thread's record (core/threads.c). Shim
 * only: core's wrap.h has what the accounting below the wrappers needs. */
#ifndef THREADMON_OBSERVE_H
#define THREADMON_OBSERVE_H

#include "wrap.h"

/* Wrappers only (needs the session): the calling thread's record when this
 * call should be observed, NULL to pass it straight through (session not
 * active, inside probe code, registry full, thread already exited). Also
 * makes sure the real functions are resolved. */
TM_HIDDEN tm_thread *tm_observer_slow(void);

static inline tm_thread *tm_observer(void) {
  tm_thread *t = tm_self;
  if (TM_LIKELY(t != NULL && t->guard == 0 &&
                atomic_load_explicit(&tm_active, memory_order_relaxed)))
    return t;
  return tm_observer_slow();
}

/* The uncontended paths' test: the calling thread's record when it is
 * registered and not inside probe code, else NULL (take the general path,
 * which registers or passes through). tm_active is not checked here, to save
 * a load and a branch: a registered thread of an inactive session (after
 * shutdown, or a fork child not followed) only bumps counters nobody reads;
 * everything that blocks, reads a clock or pushes an event checks it. */
static inline tm_thread *tm_observer_fast(void) {
  tm_thread *t = tm_self;
  return TM_LIKELY(t != NULL && t->guard == 0) ? t : NULL;
}

static inline bool tm_session_active(void) {
  return atomic_load_explicit(&tm_active, memory_order_relaxed) != 0;
}

#endif
