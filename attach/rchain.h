/* Stale return addresses out of another process's scanned stacks: the
 * probe's filter (probe/base/callchain.h: a call whose callee is known must
 * lead to the frame inside it) on the target's code, read with
 * process_vm_readv, and its modules' symbols. */
#ifndef THREADMON_ATTACH_RCHAIN_H
#define THREADMON_ATTACH_RCHAIN_H

#include <stdint.h>

#include "elfsyms.h"
#include "maps.h"

/* pcs[0..n) as tm_remote_stack gives them, the first `exact` unwound.
 * Compacts pcs; returns the count. */
int tm_remote_chain_clean(const tm_maps *m, tm_symtabs *syms, uintptr_t *pcs, int n, int exact);

#endif
