/* Call sites of contention: interned call stacks and per-(object, stack)
 * totals.
 *
 * Program threads (through tm_wait_begin and tm_wait_end) add their
 * contended waits here:
 * the stack is unwound at most TM_SITE_RATE times a second per thread (a
 * token bucket with a burst of TM_SITE_BURST); a wait that is not unwound
 * counts for the stack this thread last unwound for the same object (a
 * small per-thread cache), or for the "not unwound" stack TM_SITE_UNKNOWN
 * when there is none. Both tables are fixed arrays filled lock-free (a CAS
 * claims a slot): no malloc, no lock, nothing a program thread can block
 * on. When a table is full the wait counts for TM_SITE_UNKNOWN (stacks) or
 * for no site (pairs).
 *
 * The sampler (and hidden.c for internal locks) reads the tables by id;
 * sites_wire.c symbolises new stacks and sends them. */
#ifndef THREADMON_SITES_H
#define THREADMON_SITES_H

#include <stdbool.h>
#include <stdint.h>

#include "probe.h"

#define TM_SITE_FRAMES 12    /* frames kept per stack, the program's first */
#define TM_SITE_STACKS 4096  /* distinct stacks per session (power of two) */
#define TM_SITE_PAIRS 16384  /* distinct (object, stack) pairs (power of two) */
#define TM_SITE_RATE 1000    /* unwinds per second per thread, sustained */
#define TM_SITE_BURST 32     /* unwinds a thread may do back to back */
#define TM_SITE_UNKNOWN 1u   /* stack id of waits that were not unwound */

/* ---- program threads ---- */

/* A contended wait on object oid (numbered: tm_object_id) begins (now_ns: any monotonic ns): the
 * (object, call site) pair it will count for, 0 when the table is full. Before the wait, not after:
 * an unwind (microseconds; tens in a thread's first) must not run while the thread holds the lock
 * it waited for, other threads spinning or queueing behind it. Unwinds under t's guard (unwind.h);
 * the probe's own frames are left out: the first frame kept is the first one outside libthreadmon.
 */
TM_HIDDEN uint32_t tm_site_begin(tm_thread *t, uint32_t oid, uint64_t now_ns);
/* The wait ended after waited_ns: counted for pair (from tm_site_begin). */
TM_HIDDEN void tm_site_end(uint32_t pair, uint64_t waited_ns);

/* ---- any thread ---- */

/* The id of the stack pcs[0..n) without the probe's own frames, its first
 * TM_SITE_FRAMES, adding it when new. TM_SITE_UNKNOWN when the table is
 * full. exact_top: pcs[0] is where a signal interrupted the thread, every
 * other frame a return address. */
TM_HIDDEN uint32_t tm_site_intern(void *const *pcs, uint32_t n, bool exact_top);
/* pc is in libthreadmon's own code (never, when the probe is linked into
 * the program itself, as in unit tests). */
TM_HIDDEN bool tm_in_probe_code(const void *pc);
/* Adds to the totals of (object_id, stack_id). */
TM_HIDDEN void tm_site_add(uint32_t object_id, uint32_t stack_id, uint64_t contentions,
                           uint64_t wait_ns);

/* ---- the sampler ---- */

/* Stacks are published with ids 1, 2, 3...: ids [1, n] with n returned
 * here are complete (a later id may already be, too). */
TM_HIDDEN uint32_t tm_sites_stacks_published(void);
/* Frames of a published stack; returns its depth (0 for TM_SITE_UNKNOWN). */
TM_HIDDEN uint32_t tm_site_stack(uint32_t id, void **pcs);

TM_HIDDEN bool tm_site_stack_exact_top(uint32_t id);

/* Pairs in the order they were added: index [0, count). */
TM_HIDDEN uint32_t tm_sites_pair_count(void);
/* False while the pair at index is still being added. */
TM_HIDDEN bool tm_site_pair(uint32_t index, uint32_t *object_id, uint32_t *stack_id,
                            uint64_t *contentions, uint64_t *wait_ns);
/* Unwinds done and waits counted without one, all threads (for tests and
 * cost measurements). */
TM_HIDDEN uint64_t tm_sites_unwinds(void);

#endif
