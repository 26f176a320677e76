/* Call-site capture for the first contention of an object. */
#ifndef THREADMON_UNWIND_H
#define THREADMON_UNWIND_H

#include "probe.h"

/* Fills o->first_contention_stack once per object, innermost frame first,
 * starting at caller (the return address of the interposed call, so the
 * probe's own frames are left out). At most one capture per thread per
 * millisecond: the first unwind in a thread costs ~30 us. Runs under the
 * thread's guard because libunwind itself calls pthread_mutex_lock. */
TM_HIDDEN void tm_unwind_first_contention(tm_thread *t, tm_object *o, const void *caller);

#endif
