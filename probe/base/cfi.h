/* One step of unwinding by a module's DWARF call frame information, on a
 * copy of a stack (x86-64).
 *
 * A stack scan (stackscan.h) keeps every word that looks like a return
 * address, stale ones included: a finished call's return address left in
 * a buffer or a varargs save area of a live frame. Those can even chain
 * consistently (a thread that called snprintf while naming itself left
 * vsnprintf -> vfprintf inside the frame fprintf later used), so the
 * frames a hidden lock is reached through came out wrong. Where the
 * module's .eh_frame (found through PT_GNU_EH_FRAME) describes a frame,
 * its canonical frame address says exactly where the caller's return
 * address lies: glibc and most libraries are described everywhere, a
 * program built with frame pointers needs RBP, known once a frame below
 * saved it.
 *
 * Reads only loaded modules' segments (or copies of another process's,
 * tm_cfi_step_with), bounds-checked, and the given stack copy. Anything not understood (a 64-bit length, an expression
 * rule, indirect pointer encodings) ends the step with false. */
#ifndef THREADMON_CFI_H
#define THREADMON_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tm_cfi_regs {
  uintptr_t ip, sp, bp;
  bool bp_known;
} tm_cfi_regs;

typedef struct tm_stack_copy {
  uintptr_t base; /* address of bytes[0] in the thread's stack */
  const uint8_t *bytes;
  size_t len;
} tm_stack_copy;

/* Another process's module (attach/rcfi.c): a local copy of the segment
 * that holds its .eh_frame_hdr and .eh_frame; delta = the target's address
 * of a byte minus the copy's. */
typedef struct tm_cfi_tables {
  const uint8_t *hdr, *lo, *hi;
  intptr_t delta;
} tm_cfi_tables;

/* The last module one walk found, so that consecutive frames in one module
 * cost one dl_iterate_phdr, not one each. Zero it before a walk; valid for
 * that walk only (a module may be unloaded between walks). */
typedef struct tm_cfi_walk {
  uintptr_t text_lo, text_hi;
  tm_cfi_tables tables;
  bool rows_checked; /* the thread's row cache was checked against dlopen/dlclose */
} tm_cfi_walk;

/* From a frame's registers to its caller's. ip_is_return: ip is a return
 * address (its call is at ip - 1), not the exact PC of the innermost frame.
 * walk may be NULL. With a walk, the rows found are kept per thread by
 * address (2 KiB of TLS), emptied when a module was loaded or unloaded
 * since the thread's last walk: a thread that waits at the same call
 * sites again (a server's locks) unwinds without searching .eh_frame. */
bool tm_cfi_step(tm_cfi_regs *r, bool ip_is_return, const tm_stack_copy *stack, tm_cfi_walk *walk);
typedef bool (*tm_cfi_find)(void *arg, uintptr_t ip, tm_cfi_tables *out);

/* tm_cfi_step with the tables of ip's module found by find. */
bool tm_cfi_step_with(tm_cfi_regs *r, bool ip_is_return, const tm_stack_copy *stack,
                      tm_cfi_find find, void *arg);

#endif
