/* User threads (M:N): contexts made with makecontext and switched to with
 * swapcontext/setcontext on the program's LWPs (docs/format.md, "User
 * threads"). The core that wrap_context.c forwards to; unit tests drive it
 * directly.
 *
 * A user thread is a makecontext: its id is handed out then (1, 2, 3...),
 * with the function, the stack range and the ucontext_t's address. Which
 * user thread a switch goes to is found by the target ucontext_t's address
 * (a table filled by makecontext and by every context saved through
 * swapcontext/getcontext: whatever ran when it was saved), and, for a
 * context the table does not know (a copy), by its stack pointer inside a
 * made stack. Neither: the LWP's own context, id 0. Each LWP knows which
 * user thread it runs in a thread-local word (tm_ut_cur). All of it without
 * locks, allocation or syscalls after the tables are mapped (the first
 * makecontext maps them). */
#ifndef THREADMON_USERTHREADS_H
#define THREADMON_USERTHREADS_H

#include <stdbool.h>
#include <stdint.h>

#include <stdatomic.h>

#include "probe.h"

#define TM_UT_MAX 65536u        /* user threads (makecontext calls) per session */
#define TM_UT_MAP_SLOTS 131072u /* ucontext_t address -> id, power of two */

typedef struct tm_uthread {
  uintptr_t ucp;                /* the ucontext_t it was made in */
  uintptr_t stack_lo, stack_hi; /* uc_stack at makecontext */
  void *fn;                     /* given to makecontext */
  uintptr_t link;               /* uc_link at makecontext (where it goes when done) */
  uint64_t made_ns;
  uint32_t creator_tid;
  _Atomic uint32_t ready; /* 1 once the fields above are written */
} tm_uthread;

/* The user thread this LWP runs now; 0 = its own context. */
extern TM_TLS __thread uint32_t tm_ut_cur TM_HIDDEN;

/* Maps the tables (idempotent); false when mmap failed. Keeps errno. */
TM_HIDDEN bool tm_ut_map(void);
#define TM_UT_STACK_SLOTS 4096u /* stack top -> id, direct-mapped, lossy */

/* A makecontext: a new id (0 when the table is full or unmapped).
 * retired[0]: the made user thread ucp held before (its context is
 * overwritten); retired[1]: another one last made on a stack with the same
 * top (its stack is reused: it cannot resume); each 0 when none. */
TM_HIDDEN uint32_t tm_ut_make(const void *ucp, void *fn, uintptr_t stack_lo, uintptr_t stack_hi,
                              uintptr_t link, uint32_t creator_tid, uint64_t now,
                              uint32_t retired[2]);
/* The address map: open addressing, never shrinks (entries are only
 * pointed at another id). Exposed for the inline fast paths below. */
typedef struct tm_ut_slot {
  _Atomic uintptr_t key; /* ucontext_t address, 0 = empty */
  _Atomic uint32_t id;
  uint32_t pad;
} tm_ut_slot;
extern _Atomic(tm_ut_slot *) tm_ut_table TM_HIDDEN;
extern _Atomic(tm_uthread *) tm_ut_records TM_HIDDEN; /* index id - 1 */

static inline uint32_t tm_ut_hash(uintptr_t key) {
  /* ucontext_t is 968 bytes and usually 8- or 16-aligned: mix from bit 3. */
  uint64_t h = (uint64_t)(key >> 3) * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(h >> 40) & (TM_UT_MAP_SLOTS - 1);
}

/* The record of id, NULL when unknown or still being written. */
static inline const tm_uthread *tm_ut_get(uint32_t id) {
  tm_uthread *r = atomic_load_explicit(&tm_ut_records, memory_order_acquire);
  if (!r || id == 0 || id > TM_UT_MAX) return NULL;
  tm_uthread *u = &r[id - 1];
  return atomic_load_explicit(&u->ready, memory_order_acquire) ? u : NULL;
}

static inline bool tm_ut_holds(const tm_uthread *u, uintptr_t sp) {
  return u && sp > u->stack_lo && sp <= u->stack_hi;
}

TM_HIDDEN uint32_t tm_ut_lookup_slow(const void *ucp, uintptr_t sp);
TM_HIDDEN void tm_ut_note_slow(const void *ucp, uint32_t id);

/* The user thread a switch to the context at ucp (stack pointer sp, 0 =
 * unknown) resumes: the table's entry when its stack holds sp, else the
 * made stack that holds sp, else 0. Inline when the entry is in its home
 * slot (the usual case). */
static inline uint32_t tm_ut_lookup(const void *ucp, uintptr_t sp) {
  tm_ut_slot *m = atomic_load_explicit(&tm_ut_table, memory_order_acquire);
  if (!m) return 0; /* nothing was ever made */
  tm_ut_slot *s = &m[tm_ut_hash((uintptr_t)ucp)];
  if (TM_LIKELY(atomic_load_explicit(&s->key, memory_order_acquire) == (uintptr_t)ucp)) {
    uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
    if (id == 0 || sp == 0 || tm_ut_holds(tm_ut_get(id), sp)) return id;
  }
  return tm_ut_lookup_slow(ucp, sp);
}

/* The context at ucp was saved while user thread id ran (id 0: an LWP's
 * own). Only a read when the home slot says so already. */
static inline void tm_ut_note(const void *ucp, uint32_t id) {
  tm_ut_slot *m = atomic_load_explicit(&tm_ut_table, memory_order_acquire);
  if (!m || !ucp) return;
  tm_ut_slot *s = &m[tm_ut_hash((uintptr_t)ucp)];
  if (TM_LIKELY(atomic_load_explicit(&s->key, memory_order_relaxed) == (uintptr_t)ucp &&
                atomic_load_explicit(&s->id, memory_order_relaxed) == id))
    return;
  tm_ut_note_slow(ucp, id);
}

TM_HIDDEN uint32_t tm_ut_last_id(void);

#endif
