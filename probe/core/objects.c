/* The sync object table: address -> tm_object, open addressing with linear
 * probing in one mapping made on first use. Insertion claims an empty slot
 * with one CAS on its address; nothing is ever removed, so a found entry
 * stays valid and its id stable for the session. Inserts stop at 7/8 of the
 * capacity so that a miss always ends at an empty slot quickly. */
#include <stddef.h>
#include <sys/mman.h>

#include "probe.h"
#include "wrap.h"

#define TM_OBJECTS_LIMIT (TM_MAX_OBJECTS / 8u * 7u)

_Atomic(tm_object *) tm_object_table;
static _Atomic uint32_t used;
static _Atomic uint32_t last_id;
static _Atomic uint64_t untracked;
/* id -> slot + 1, so the sampler visits only the objects that exist
 * (added by the sampler engineer for tm_object_by_id). */
static _Atomic uint32_t id_slot[TM_MAX_OBJECTS];

void *tm_table_map(void *_Atomic *table, size_t bytes) {
  void *t = atomic_load_explicit(table, memory_order_acquire);
  if (TM_LIKELY(t != NULL)) return t;
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return NULL;
  void *expected = NULL;
  if (!atomic_compare_exchange_strong(table, &expected, p)) {
    munmap(p, bytes);
    return expected;
  }
  return p;
}

static tm_object *objects(void) {
  return tm_table_map((void *_Atomic *)&tm_object_table,
                      (size_t)TM_MAX_OBJECTS * sizeof(tm_object));
}

_Static_assert(sizeof(tm_object) == 192, "tm_object_home scales the index by 3 << 6");
_Static_assert(offsetof(tm_object, acquisitions) < 64 && offsetof(tm_object, hold_next) < 64 &&
                   offsetof(tm_object, releaser_tid) < 64 && offsetof(tm_object, writes) < 64,
               "the uncontended paths touch the object's first line only");

bool tm_objects_map(void) { return objects() != NULL; }

uint32_t tm_objects_capacity(void) { return TM_MAX_OBJECTS; }

tm_object *tm_object_slot(uint32_t i) {
  tm_object *t = atomic_load_explicit(&tm_object_table, memory_order_acquire);
  return t && i < TM_MAX_OBJECTS ? &t[i] : NULL;
}

uint64_t tm_objects_untracked(void) { return atomic_load_explicit(&untracked, memory_order_relaxed); }

static inline uint32_t slot_of(uintptr_t key) { return tm_object_hash(key); }

/* An object's id: whoever sets it first, the adder or a thread that found
 * the object before the adder got to it. An id taken and not set is never
 * used (ids may skip; the sampler's walk skips ids without a slot). */
static uint32_t give_id(tm_object *o) {
  uint32_t want = atomic_fetch_add_explicit(&last_id, 1, memory_order_relaxed) + 1;
  uint32_t none = 0;
  if (__atomic_compare_exchange_n(&o->id, &none, want, false, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
    return want;
  return none;
}

/* The adder sets the id right after its CAS; wait for it, but never
 * unboundedly: an adder preempted there (a loaded machine) would leave the
 * caller's transitions without their object (a wait in a thread's states
 * but in no object's waits), so the caller then gives the id itself. */
static tm_object *ready(tm_object *o) {
  for (int spins = 0; spins < 4096; spins++) {
    if (TM_LIKELY(__atomic_load_n(&o->id, __ATOMIC_ACQUIRE) != 0)) return o;
    __builtin_ia32_pause();
  }
  give_id(o);
  return o;
}

uint32_t tm_object_id(tm_object *o) {
  uint32_t id = __atomic_load_n(&o->id, __ATOMIC_ACQUIRE);
  return TM_LIKELY(id != 0) ? id : __atomic_load_n(&ready(o)->id, __ATOMIC_ACQUIRE);
}

tm_object *tm_object_find(const void *addr, uint32_t kind, uint32_t flags) {
  tm_object *tab = objects();
  uintptr_t key = (uintptr_t)addr;
  if (TM_UNLIKELY(!tab || key == 0)) return NULL;
  uint32_t i = slot_of(key);
  for (uint32_t n = 0; n < TM_MAX_OBJECTS; n++, i = (i + 1) & (TM_MAX_OBJECTS - 1)) {
    tm_object *o = &tab[i];
    uintptr_t a = atomic_load_explicit(&o->address, memory_order_acquire);
    if (TM_LIKELY(a == key)) return ready(o);
    if (a != 0) continue;
    if (atomic_load_explicit(&used, memory_order_relaxed) >= TM_OBJECTS_LIMIT) break;
    if (atomic_compare_exchange_strong_explicit(&o->address, &a, key, memory_order_acq_rel,
                                                memory_order_acquire)) {
      atomic_fetch_add_explicit(&used, 1, memory_order_relaxed);
      o->kind = kind;
      o->flags = flags;
      o->first_seen_ns = tm_now_ns();
      /* Published by slot only now, kind and flags set: the sampler
       * describes the object from its slot. */
      uint32_t id = give_id(o);
      if (id <= TM_MAX_OBJECTS) atomic_store_explicit(&id_slot[id - 1], i + 1, memory_order_release);
      return o;
    }
    if (a == key) return ready(o); /* another thread added the same address */
  }
  atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
  return NULL;
}

tm_object *tm_object_get(const void *addr, uint32_t kind) { return tm_object_find(addr, kind, 0); }

tm_object *tm_object_peek(const void *addr) {
  tm_object *tab = atomic_load_explicit(&tm_object_table, memory_order_acquire);
  uintptr_t key = (uintptr_t)addr;
  if (!tab || key == 0) return NULL;
  uint32_t i = slot_of(key);
  for (uint32_t n = 0; n < TM_MAX_OBJECTS; n++, i = (i + 1) & (TM_MAX_OBJECTS - 1)) {
    uintptr_t a = atomic_load_explicit(&tab[i].address, memory_order_acquire);
    if (a == key) return ready(&tab[i]);
    if (a == 0) break; /* never removed: the first empty slot ends the search */
  }
  return NULL;
}

uint32_t tm_objects_last_id(void) { return atomic_load_explicit(&last_id, memory_order_acquire); }

tm_object *tm_object_by_id(uint32_t id) {
  tm_object *tab = atomic_load_explicit(&tm_object_table, memory_order_acquire);
  if (!tab || id == 0 || id > TM_MAX_OBJECTS) return NULL;
  uint32_t slot = atomic_load_explicit(&id_slot[id - 1], memory_order_acquire);
  return slot ? &tab[slot - 1] : NULL;
}
