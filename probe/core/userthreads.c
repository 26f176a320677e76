/* User threads: the made-context table and the ucontext_t address map
 * (userthreads.h). Both are mapped once and never freed; entries of the
 * address map are never removed, only pointed at another id. */
#include "userthreads.h"

#include <errno.h>
#include <stdatomic.h>
#include <sys/mman.h>

TM_TLS __thread uint32_t tm_ut_cur;

_Atomic(tm_uthread *) tm_ut_records;
_Atomic(tm_ut_slot *) tm_ut_table;
/* Stack top -> the id last made there. Lossy (a colliding top overwrites):
 * a reuse it misses is only not seen. */
static _Atomic(_Atomic uint32_t *) stack_tops;
typedef tm_ut_slot map_slot;
static _Atomic uint32_t last_id;

static void *map_zeroed(size_t bytes) {
  int saved = errno;
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  errno = saved;
  return p == MAP_FAILED ? NULL : p;
}

/* *slot's table, mapped by the first caller (a racing loser unmaps its own). */
static bool map_once(_Atomic(void *) *slot, size_t bytes) {
  if (atomic_load_explicit(slot, memory_order_acquire)) return true;
  void *fresh = map_zeroed(bytes), *expected = NULL;
  if (!fresh) return false;
  if (!atomic_compare_exchange_strong(slot, &expected, fresh)) {
    int saved = errno;
    munmap(fresh, bytes);
    errno = saved;
  }
  return true;
}

bool tm_ut_map(void) {
  return map_once((_Atomic(void *) *)&tm_ut_records, (size_t)TM_UT_MAX * sizeof(tm_uthread)) &&
         map_once((_Atomic(void *) *)&tm_ut_table, (size_t)TM_UT_MAP_SLOTS * sizeof(map_slot)) &&
         map_once((_Atomic(void *) *)&stack_tops, (size_t)TM_UT_STACK_SLOTS * sizeof(uint32_t));
}

/* The slot of key, or (insert) the empty slot claimed for it; NULL when
 * absent (or the table is full). Linear probing, bounded. */
static map_slot *slot_of(map_slot *m, uintptr_t key, bool insert) {
  uint32_t i = tm_ut_hash(key);
  for (uint32_t n = 0; n < 64; n++, i = (i + 1) & (TM_UT_MAP_SLOTS - 1)) {
    map_slot *s = &m[i];
    uintptr_t k = atomic_load_explicit(&s->key, memory_order_acquire);
    if (k == key) return s;
    if (k == 0) {
      if (!insert) return NULL;
      uintptr_t expected = 0;
      if (atomic_compare_exchange_strong_explicit(&s->key, &expected, key, memory_order_acq_rel,
                                                  memory_order_acquire) ||
          expected == key)
        return s;
    }
  }
  return NULL;
}

uint32_t tm_ut_last_id(void) {
  uint32_t n = atomic_load_explicit(&last_id, memory_order_acquire);
  return n < TM_UT_MAX ? n : TM_UT_MAX;
}

uint32_t tm_ut_make(const void *ucp, void *fn, uintptr_t stack_lo, uintptr_t stack_hi,
                    uintptr_t link, uint32_t creator_tid, uint64_t now, uint32_t retired[2]) {
  retired[0] = retired[1] = 0;
  if (!tm_ut_map()) return 0;
  uint32_t id = atomic_fetch_add_explicit(&last_id, 1, memory_order_relaxed) + 1;
  if (id > TM_UT_MAX) {
    atomic_store_explicit(&last_id, TM_UT_MAX, memory_order_relaxed);
    return 0;
  }
  tm_uthread *u = &atomic_load_explicit(&tm_ut_records, memory_order_relaxed)[id - 1];
  u->ucp = (uintptr_t)ucp;
  u->stack_lo = stack_lo;
  u->stack_hi = stack_hi;
  u->fn = fn;
  u->link = link;
  u->made_ns = now;
  u->creator_tid = creator_tid;
  atomic_store_explicit(&u->ready, 1, memory_order_release);
  map_slot *s = slot_of(atomic_load_explicit(&tm_ut_table, memory_order_relaxed), (uintptr_t)ucp, true);
  if (s) {
    uint32_t old = atomic_exchange_explicit(&s->id, id, memory_order_acq_rel);
    if (old != 0 && old != id) retired[0] = old;
  }
  if (stack_hi) {
    _Atomic uint32_t *tops = atomic_load_explicit(&stack_tops, memory_order_relaxed);
    uint32_t old = atomic_exchange_explicit(&tops[tm_ut_hash(stack_hi) % TM_UT_STACK_SLOTS], id,
                                            memory_order_acq_rel);
    const tm_uthread *o = tm_ut_get(old);
    if (o && old != id && old != retired[0] && o->stack_hi == stack_hi) retired[1] = old;
  }
  return id;
}

uint32_t tm_ut_lookup_slow(const void *ucp, uintptr_t sp) {
  map_slot *m = atomic_load_explicit(&tm_ut_table, memory_order_acquire);
  if (!m) return 0; /* nothing was ever made */
  map_slot *s = slot_of(m, (uintptr_t)ucp, false);
  if (s) {
    uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
    /* An LWP's own context has no stack to check; a made one must hold sp
     * (the address may have been reused for another context since). */
    if (id == 0 || sp == 0 || tm_ut_holds(tm_ut_get(id), sp)) return id;
  }
  if (sp == 0) return 0;
  /* A context saved where no wrapper saw it (a copy): its stack says whose.
   * Newest first: a stack reused by a later makecontext is the later one's. */
  for (uint32_t id = tm_ut_last_id(); id > 0; id--)
    if (tm_ut_holds(tm_ut_get(id), sp)) return id;
  return 0;
}

void tm_ut_note_slow(const void *ucp, uint32_t id) {
  map_slot *m = atomic_load_explicit(&tm_ut_table, memory_order_acquire);
  if (!m || !ucp) return;
  map_slot *s = slot_of(m, (uintptr_t)ucp, true);
  /* Only written when it changes: a fiber saving into its own context on
   * every yield only reads the shared line. */
  if (s && atomic_load_explicit(&s->id, memory_order_relaxed) != id)
    atomic_store_explicit(&s->id, id, memory_order_release);
}
