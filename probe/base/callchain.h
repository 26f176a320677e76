/* Drops stale return addresses from a scanned stack (stackscan.h), and
 * tells which unwound frames of a copy are one chain of calls.
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
 * only (symbolize.h). x86-64. The filter (callchain.c) reads code and
 * symbols through a tm_code_view: this process's (callchain_local.c) or
 * another's (attach/rchain.c). */
#ifndef THREADMON_CALLCHAIN_H
#define THREADMON_CALLCHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Frames looked at; more are dropped. */
#define TM_CHAIN_MAX 64

/* pcs[0] is the exact PC, pcs[1..n) return addresses inside executable
 * segments, the first `exact` of them unwound, not scanned (as
 * tm_stack_scan gives them): those are kept as they are. Compacts pcs;
 * returns the count. This process's stacks. */
int tm_call_chain_clean(void **pcs, int n, int exact);

/* The code and symbols of the process the stack belongs to: this one
 * (tm_call_chain_clean), or another read from outside (attach/rchain.c). */
typedef struct tm_code_view {
  /* Copies len bytes at a into out when they lie in one module segment
   * having every PF_* bit of flags; false otherwise. */
  bool (*read)(void *arg, uintptr_t a, void *out, size_t len, unsigned flags);
  /* The function holding a: its module's name (module[0] = 0 when a is in
   * none), its name ("" when unknown) and where it starts. */
  void (*function_at)(void *arg, uintptr_t a, char *module, size_t module_len, char *name,
                      size_t name_len, uintptr_t *start);
  void *arg;
} tm_code_view;

int tm_call_chain_clean_in(const tm_code_view *v, uintptr_t *pcs, int n, int exact);

/* How many leading frames of pcs[0..n) (pcs[0] the exact PC, the rest
 * return addresses, innermost first) are one chain of calls: each return
 * address's call, direct or through the PLT or GOT, leads to the function
 * of the frame inside it, or (a tail call between, as fprintf's into
 * buffered_vfprintf) the next frame's call leads to its own function. The
 * first return address's call must lead to the PC's function. 1 when it
 * does not (or is indirect, or a function has no symbol): such a link
 * cannot be told from a word a later call left in that slot. This
 * process's stacks; tm_call_chain_linked_in: any process's. */
int tm_call_chain_linked(void *const *pcs, int n);
int tm_call_chain_linked_in(const tm_code_view *v, const uintptr_t *pcs, int n);

#endif
