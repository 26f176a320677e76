/* Call stacks of program threads: the first contention of each object,
 * and the common unwinder sites.c uses too. */
#ifndef THREADMON_UNWIND_H
#define THREADMON_UNWIND_H

#include "probe.h"

/* Fills o->first_contention_stack once per object, innermost frame first,
 * starting at caller (the return address of the interposed call, so the
 * probe's own frames are left out). At most one capture per thread per
 * millisecond. Runs under the
 * thread's guard because libunwind itself calls pthread_mutex_lock. */
TM_HIDDEN void tm_unwind_first_contention(tm_thread *t, tm_object *o, const void *caller);

/* The calling thread's return addresses, innermost first (the first is
 * into the caller). libunwind's unw_backtrace costs ~180 us on a
 * thread's first call (it maps a per-thread cache, unmapped at its exit
 * with a TLB shootdown) and ~0.2 us after; stepping costs ~5 us every time.
 * A thread steps until it has unwound TM_UNWIND_STEPPED times: a short-lived
 * thread never pays for the cache, a thread that keeps contending soon
 * gets the fast path. Call under the thread's guard. */
TM_HIDDEN int tm_backtrace(void **pcs, int max);

#endif
