/* The table of initialiser call sites (madeat.h). */
#include "madeat.h"

#include <stdatomic.h>

#include "wrap.h"

typedef struct made_entry {
  _Atomic uintptr_t address; /* key; 0 = empty */
  _Atomic uintptr_t site;    /* return address of the initialiser call */
} made_entry;

/* Inserts stop at 7/8 of the slots, so that a miss ends at an empty slot soon. */
#define MADE_AT_LIMIT (TM_MADE_AT_SLOTS / 8u * 7u)

static _Atomic(made_entry *) table;
static _Atomic uint32_t used;
static _Atomic uint64_t dropped;

static made_entry *entries(void) {
  return tm_table_map((void *_Atomic *)&table, (size_t)TM_MADE_AT_SLOTS * sizeof(made_entry));
}

/* Fibonacci hashing as in the object table (wrap.h), 17 bits. */
_Static_assert(TM_MADE_AT_SLOTS == 1u << 17, "home() yields 17 bits");
static inline uint32_t home(uintptr_t key) {
  return ((uint32_t)key * 0x9E3779B1u) >> 15;
}

void tm_made_at_note(const void *addr, const void *site) {
  uintptr_t key = (uintptr_t)addr;
  made_entry *t = key ? entries() : NULL;
  if (!t) return;
  uint32_t i = home(key);
  for (uint32_t n = 0; n < TM_MADE_AT_SLOTS; n++, i = (i + 1) & (TM_MADE_AT_SLOTS - 1)) {
    made_entry *e = &t[i];
    uintptr_t a = atomic_load_explicit(&e->address, memory_order_acquire);
    if (a == 0) {
      if (atomic_load_explicit(&used, memory_order_relaxed) >= MADE_AT_LIMIT) break;
      /* The address is claimed before its site is stored: a reader in
       * between finds no site, as before the call (the object is not in
       * use before its initialiser returns). */
      if (!atomic_compare_exchange_strong_explicit(&e->address, &a, key, memory_order_acq_rel,
                                                   memory_order_acquire)) {
        if (a != key) continue; /* another address took the slot */
      } else {
        atomic_fetch_add_explicit(&used, 1, memory_order_relaxed);
      }
    } else if (a != key) {
      continue;
    }
    atomic_store_explicit(&e->site, (uintptr_t)site, memory_order_release);
    return;
  }
  atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
}

uintptr_t tm_made_at(uintptr_t addr) {
  made_entry *t = atomic_load_explicit(&table, memory_order_acquire);
  if (!t || addr == 0) return 0;
  uint32_t i = home(addr);
  for (uint32_t n = 0; n < TM_MADE_AT_SLOTS; n++, i = (i + 1) & (TM_MADE_AT_SLOTS - 1)) {
    uintptr_t a = atomic_load_explicit(&t[i].address, memory_order_acquire);
    if (a == addr) return atomic_load_explicit(&t[i].site, memory_order_acquire);
    if (a == 0) return 0;
  }
  return 0;
}

uint64_t tm_made_at_dropped(void) {
  return atomic_load_explicit(&dropped, memory_order_relaxed);
}
