/* The call chain of another process's blocked thread, read from outside
 * without stopping it: the remote form of probe/stackscan.h.
 *
 * Its syscall file gives SP and PC; the stack above SP is copied with
 * process_vm_readv and the syscall file read again (unchanged: the thread
 * stayed in that call, so the copy is its stack there). The frames are the
 * PC, then every word of the copy that points into one of the target's
 * executable mappings just after a call instruction, the code before it
 * read from the target too. A scan, not an unwind: a stale return address
 * left in an unused slot may appear; the innermost frames (the library
 * call that waits, the program's function that called it) come first. */
#ifndef THREADMON_ATTACH_RSTACK_H
#define THREADMON_ATTACH_RSTACK_H

#include <stdint.h>
#include <sys/types.h>

#include "maps.h"

#define TM_RSTACK_BYTES 32768

/* Frames of thread tid of pid, blocked as syscall_line (its syscall file,
 * just read) says, into pcs[0..max): the count, 0 when it was running,
 * ran meanwhile, or its stack could not be read. */
int tm_remote_stack(pid_t pid, pid_t tid, const char *syscall_line, const tm_maps *m,
                    uintptr_t *pcs, int max);

#endif
