/* Call stacks of program threads: the first contention of each object,
 * and the common unwinder sites.c uses too. */
#ifndef THREADMON_UNWIND_H
#define THREADMON_UNWIND_H

#include <pthread.h>

#include "probe.h"

/* Fills o->first_contention_stack once per object, innermost frame first,
 * starting at caller (the return address of the interposed call, so the
 * probe's own frames are left out). At most one capture per thread per
 * millisecond. Runs under the thread's guard (glibc's pthread_getattr_np,
 * which finds the thread's stack at its first unwind, may lock). */
TM_HIDDEN void tm_unwind_first_contention(tm_thread *t, tm_object *o, const void *caller);

/* The calling thread's return addresses, innermost first (the first is
 * into the caller), by the modules' .eh_frame (cfi.h); the walk ends at a
 * frame they do not describe (JIT code, a signal frame). On the thread's
 * own stack it reads that stack in place (bounded by the stack
 * pthread_getattr_np gave at its first unwind: on the main thread a read of
 * /proc/self/maps, a cancellation point), and so on the stack makecontext
 * gave the user thread it runs; any other stack is first copied with
 * process_vm_readv, which never faults. Returns 0 while another thread
 * is unwinding a foreign stack. Call under the thread's guard. */
TM_HIDDEN int tm_backtrace(void **pcs, int max);

/* A thread's first stack unwind may read /proc/self/maps (above): a
 * cancellation point. A thread with a cancel pending (libunwind, used
 * before, validated addresses by read(2) and write(2)) was unwound out of
 * pthread_barrier_wait or a contended pthread_mutex_lock, which are not.
 * Cancellation is off around every unwind a program thread makes, and only
 * there: setting the state is a compare-and-swap in glibc, twice per wait
 * when every wait paid it. Turning a deferred cancel back on does not act
 * on it. */
static inline int tm_cancel_off(void) {
  int old;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  return old;
}

static inline void tm_cancel_restore(int old) { pthread_setcancelstate(old, NULL); }

#endif
