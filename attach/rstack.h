/* The call chain of another process's blocked thread, read from outside
 * without stopping it: the remote form of probe/base/stackscan.h.
 *
 * Its syscall file gives SP and PC; the stack above SP is copied with
 * process_vm_readv and the syscall file read again (unchanged: the thread
 * stayed in that call, so the copy is its stack there). The frames are the
 * PC, then the frames the modules' .eh_frame unwinds exactly (probe/base/cfi.c
 * on tables copied from the target, rcfi.h), then, above the last of
 * them, every word of the copy that points into one of the target's
 * executable mappings just after a call instruction, the code before it
 * read from the target too. The scanned part may keep a stale return
 * address left in an unused slot. */
#ifndef THREADMON_ATTACH_RSTACK_H
#define THREADMON_ATTACH_RSTACK_H

#include <stdint.h>
#include <sys/types.h>

#include "maps.h"
#include "rcfi.h"

#define TM_RSTACK_BYTES 32768

/* Frames of thread tid of pid, blocked as syscall_line (its syscall file,
 * just read) says, into pcs[0..max): the count, 0 when it was running,
 * ran meanwhile, or its stack could not be read. The first *exact (may be
 * NULL) were unwound; cfi NULL: scan only. */
int tm_remote_stack(pid_t pid, pid_t tid, const char *syscall_line, const tm_maps *m,
                    tm_rcfi *cfi, uintptr_t *pcs, int max, int *exact);

#endif
