/* The call chain of a thread blocked in a system call, read without
 * stopping or signalling it.
 *
 * Its syscall file gives the user stack pointer and PC of the blocked call.
 * The stack above that pointer is copied with process_vm_readv (a stack
 * that went away gives EFAULT, never a fault in the sampler), and the
 * syscall file is read again: unchanged means the thread did not run in
 * between, so the copy is its stack at that call. Changed (it woke in
 * those microseconds, more when the sampler lost its CPU; the only sighting
 * of a lock on a loaded machine was lost so), the frames unwound from the
 * copy that are one chain of calls into the blocked PC's function are
 * still that call's (callchain.h: tm_call_chain_linked). The frames are the PC
 * and then the words of the copy that are return addresses: they point
 * into an executable segment of a loaded module, just after a call
 * instruction. Scanning, unlike unwinding, needs no registers but may keep
 * a stale return address a frame left in an unused slot; the program's own
 * function and the library call that led to the wait come first, which is
 * what call sites of hidden locks need.
 *
 * Costs one copy of up to 32 KiB, a second small /proc read and dl_iterate_phdr:
 * a few microseconds. Sampler thread only. */
#ifndef THREADMON_STACKSCAN_H
#define THREADMON_STACKSCAN_H

#include <stdint.h>
#include <sys/types.h>

/* Frames of thread tid, blocked as syscall_line (its syscall file, just
 * read) says, into pcs[0..max). Returns the count, 0 when nothing could be
 * read, or when it was not blocked any more and fewer than two frames were
 * linked. The first *exact (may be NULL) were unwound by the modules' call
 * frame information (cfi.h), the rest found by scanning above them. */
int tm_stack_scan(uint32_t tid, const char *syscall_line, void **pcs, int max, int *exact);

/* Copies up to len bytes (at most 32 KiB) of this process's memory from sp
 * up, stopping at the first page that is not mapped; returns the bytes
 * copied or -1. A system call but not a cancellation point, and never a
 * fault, whatever sp is. */
ssize_t tm_copy_stack(uintptr_t sp, unsigned char *buf, size_t len);

/* Exposed for tests: is ret a return address (code just before it is a
 * call instruction)? Only for addresses inside executable segments. */
int tm_after_call(const unsigned char *ret);

#endif
