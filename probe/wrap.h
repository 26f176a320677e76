/* What the wrap_*.c files share: who is observing, wait accounting, hold
 * sampling. The accounting (wrap_account.c) only touches the registry and
 * the object table, so unit tests drive it without preloading anything. */
#ifndef THREADMON_WRAP_H
#define THREADMON_WRAP_H

#include <stdatomic.h>
#include <stdbool.h>

#include "probe.h"

#define TM_EXPORT __attribute__((visibility("default")))

/* objects.c's table, for the inlined first-probe lookup below. */
extern _Atomic(tm_object *) tm_object_table TM_HIDDEN;
#define TM_MAX_OBJECTS 65536u /* power of two */

static inline uint32_t tm_object_hash(uintptr_t key) {
  return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15u) >> 48) & (TM_MAX_OBJECTS - 1);
}

/* The uncontended path's lookup: a known object in its home slot costs a
 * multiply and two loads; anything else takes the full tm_object_find. */
static inline tm_object *tm_object_lookup(const void *addr, uint32_t kind, uint32_t flags) {
  tm_object *tab = atomic_load_explicit(&tm_object_table, memory_order_acquire);
  if (TM_LIKELY(tab != NULL)) {
    tm_object *o = &tab[tm_object_hash((uintptr_t)addr)];
    if (TM_LIKELY(atomic_load_explicit(&o->address, memory_order_acquire) == (uintptr_t)addr &&
                  __atomic_load_n(&o->id, __ATOMIC_ACQUIRE) != 0))
      return o;
  }
  return tm_object_find(addr, kind, flags);
}
/* The program's call site of the interposed function. */
#define TM_CALLER() __builtin_return_address(0)

/* How a finished wait counts as an acquisition of its object. */
enum tm_acquire {
  TM_ACQ_NONE = 0,      /* timed out, failed, or not an acquisition */
  TM_ACQ_EXCLUSIVE = 1, /* now held exclusively: plain increment is safe */
  TM_ACQ_SHARED = 2,    /* others may count at once: atomic increment */
};

typedef struct tm_wait {
  tm_thread *t;
  tm_object *o;
  uint64_t start_ns;
} tm_wait;

/* Pushes state (with o's id and the holder) and, for a contended object
 * seen for the first time, captures the call stack (caller != NULL). */
TM_HIDDEN void tm_wait_begin(tm_wait *w, tm_thread *t, tm_object *o, uint32_t state,
                             uint32_t holder_tid, const void *caller);
/* Pushes RUNNING and adds the wait to o's contentions/wait/max_wait. */
TM_HIDDEN void tm_wait_end(tm_wait *w, enum tm_acquire acq);
/* pthread_cleanup handler: the thread was cancelled inside the wait. */
TM_HIDDEN void tm_wait_cancelled(void *w);

TM_HIDDEN void tm_count_acquire(tm_object *o, enum tm_acquire acq);

/* Hold time: one acquisition in 64 per thread is timed until its release. */
TM_HIDDEN void tm_hold_begin(tm_thread *t, const void *addr);
TM_HIDDEN void tm_hold_end(tm_thread *t, const void *addr, uint32_t kind);

static inline void tm_hold_tick(tm_thread *t, const void *addr) {
  if (TM_UNLIKELY(--t->hold_countdown == 0)) tm_hold_begin(t, addr);
}

static inline void tm_hold_release(tm_thread *t, const void *addr, uint32_t kind) {
  if (TM_UNLIKELY(t != NULL && t->hold_object == addr)) tm_hold_end(t, addr, kind);
}

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

/* A timeout a timed call would accept; anything else goes straight to the
 * real function so that its error (EINVAL) and its order of checks stay. */
static inline bool tm_valid_timeout(clockid_t clk, const struct timespec *ts) {
  return ts != NULL && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000 &&
         (clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC);
}

#endif
