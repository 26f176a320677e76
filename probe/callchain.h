/* Drops stale return addresses from a scanned stack (stackscan.h).
 *
 * A scan keeps every word that looks like a return address, including ones
 * a finished call left in a slot a live frame never wrote (a varargs
 * register save area, a buffer). A thread that named itself and then
 * waited for a FILE's lock in fprintf showed the call chain ... fprintf <-
 * pthread_setname_np <- writer: the finding said the lock was reached via
 * pthread_setname_np().
 *
 * A return address's call instruction names its callee when the call is
 * direct (call rel32, through a PLT stub to the GOT) or through the GOT
 * (call *disp(%rip)); the callee must be the function of the next frame
 * inward that was kept. A frame whose callee is known and is another
 * function is stale, when it lies in the same module as that inner frame;
 * across modules it is kept (a library may reach the inner function by a
 * tail call, and the program's own frame must not be lost). Sampler thread
 * only (symbolize.h). x86-64. */
#ifndef THREADMON_CALLCHAIN_H
#define THREADMON_CALLCHAIN_H

/* pcs[0] is the exact PC, pcs[1..n) return addresses inside executable
 * segments, the first `exact` of them unwound, not scanned (as
 * tm_stack_scan gives them): those are kept as they are. Compacts pcs;
 * returns the count. */
int tm_call_chain_clean(void **pcs, int n, int exact);

#endif
