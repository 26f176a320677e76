/* Interned call stacks and per-(object, stack) contention totals (sites.h). */
#include "sites.h"

#include "unwind.h"

#include <errno.h>
#include <link.h>
#include <string.h>

#define UNWIND_MAX (TM_SITE_FRAMES + 8) /* room for the probe's own frames */
#define PROBE_LIMIT 64                  /* open-addressing probes before giving up */
#define CACHE_WAYS 16                   /* per-thread (object -> last pair), power of two */
#define SITE_INTERVAL_NS (1000000000u / TM_SITE_RATE)

/* ---- stacks ---- */

typedef struct stack_slot {
  _Atomic uint64_t hash; /* 0 = free; claimed by CAS */
  _Atomic uint32_t id;   /* 0 = frames being written */
  uint16_t depth;
  uint16_t exact_top; /* pcs[0] is an interrupted PC, not a return address */
  void *pcs[TM_SITE_FRAMES];
} stack_slot;

static stack_slot stacks[TM_SITE_STACKS];
/* id -> slot + 1; id 1 (TM_SITE_UNKNOWN) has no slot. */
static _Atomic uint32_t stack_by_id[TM_SITE_STACKS + 2];
static _Atomic uint32_t next_stack_id = TM_SITE_UNKNOWN + 1;
static uint32_t stacks_published = TM_SITE_UNKNOWN; /* sampler-only */

/* ---- pairs ---- */

typedef struct pair_slot {
  _Atomic uint64_t key; /* object_id << 32 | stack_id; 0 = free */
  _Atomic uint64_t contentions, wait_ns;
  uint64_t pad; /* 32 bytes: a pair never straddles two lines */
} pair_slot;

static pair_slot pairs[TM_SITE_PAIRS];
static _Atomic uint32_t pair_order[TM_SITE_PAIRS]; /* index -> slot + 1 */
static _Atomic uint32_t pair_count;
static _Atomic uint64_t unwinds;

/* ---- per thread ---- */

typedef struct site_cache {
  uint32_t object_id;
  uint32_t pair; /* slot + 1 */
} site_cache;

static TM_TLS __thread site_cache cache[CACHE_WAYS];
static TM_TLS __thread uint64_t bucket_tat; /* token bucket as GCRA: next conforming time */

/* ---- the probe's own code, whose frames a stack leaves out ---- */

typedef struct text_range {
  uintptr_t lo, hi;
} text_range;

TM_HOT static text_range self_text;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  uintptr_t me = (uintptr_t)arg;
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + p->p_vaddr;
    if (p->p_type == PT_LOAD && me >= lo && me < lo + p->p_memsz) mine = true;
  }
  if (!mine) return 0;
  /* Linked into the program itself (unit tests): its frames cannot be told
   * from ours, keep them all. */
  if (!info->dlpi_name || !info->dlpi_name[0]) return 1;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD || !(p->p_flags & PF_X)) continue;
    uintptr_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
    if (!self_text.lo || lo < self_text.lo) self_text.lo = lo;
    if (hi > self_text.hi) self_text.hi = hi;
  }
  return 1;
}

/* Before any program thread can contend: the library's constructors run
 * before the program's. */
__attribute__((constructor)) static void sites_init(void) {
  dl_iterate_phdr(find_self, (void *)&self_text);
}

bool tm_in_probe_code(const void *pc) {
  uintptr_t a = (uintptr_t)pc;
  return a >= self_text.lo && a < self_text.hi;
}

/* ---- stacks ---- */

static uint64_t hash_pcs(void *const *pcs, uint32_t n) {
  uint64_t h = 0x9E3779B97F4A7C15u ^ n;
  for (uint32_t i = 0; i < n; i++) {
    h ^= (uint64_t)(uintptr_t)pcs[i];
    h *= 0xFF51AFD7ED558CCDu;
    h ^= h >> 32;
  }
  return h ? h : 1;
}

/* The id of a slot whose frames another thread is still writing: it
 * publishes within a few hundred ns unless preempted. */
static uint32_t slot_id_wait(stack_slot *s) {
  for (int spin = 0; spin < 4096; spin++) {
    uint32_t id = atomic_load_explicit(&s->id, memory_order_acquire);
    if (id) return id;
    __builtin_ia32_pause();
  }
  return 0;
}

uint32_t tm_site_intern(void *const *pcs, uint32_t n, bool exact_top) {
  /* The probe's own frames (its wrappers, the threads' start trampoline)
   * are left out: a stack reads as it would without the probe. */
  void *kept[TM_SITE_FRAMES];
  uint32_t k = 0;
  for (uint32_t i = 0; i < n && k < TM_SITE_FRAMES; i++) {
    if (!tm_in_probe_code(pcs[i])) kept[k++] = pcs[i];
    else if (i == 0) exact_top = false;
  }
  pcs = kept;
  n = k;
  if (n == 0) return TM_SITE_UNKNOWN;
  uint64_t h = hash_pcs(pcs, n) ^ exact_top;
  h = h ? h : 2;
  for (uint32_t i = 0; i < PROBE_LIMIT; i++) {
    stack_slot *s = &stacks[(h + i) & (TM_SITE_STACKS - 1)];
    uint64_t cur = atomic_load_explicit(&s->hash, memory_order_acquire);
    if (cur == 0) {
      /* Keep the table at most 3/4 full so probe sequences stay short. */
      if (atomic_load_explicit(&next_stack_id, memory_order_relaxed) > TM_SITE_STACKS * 3 / 4)
        return TM_SITE_UNKNOWN;
      if (atomic_compare_exchange_strong_explicit(&s->hash, &cur, h, memory_order_acq_rel,
                                                  memory_order_acquire)) {
        s->depth = (uint16_t)n;
        s->exact_top = exact_top;
        memcpy(s->pcs, pcs, n * sizeof *pcs);
        uint32_t id = atomic_fetch_add_explicit(&next_stack_id, 1, memory_order_relaxed);
        atomic_store_explicit(&stack_by_id[id], (uint32_t)(s - stacks) + 1, memory_order_release);
        atomic_store_explicit(&s->id, id, memory_order_release);
        return id;
      }
    }
    if (cur != h) continue;
    uint32_t id = slot_id_wait(s);
    if (!id) return TM_SITE_UNKNOWN;
    if (s->depth == n && s->exact_top == exact_top && !memcmp(s->pcs, pcs, n * sizeof *pcs))
      return id;
  }
  return TM_SITE_UNKNOWN;
}

uint32_t tm_sites_stacks_published(void) {
  while (stacks_published + 1 < TM_SITE_STACKS + 2 &&
         atomic_load_explicit(&stack_by_id[stacks_published + 1], memory_order_acquire))
    stacks_published++;
  return stacks_published;
}

uint32_t tm_site_stack(uint32_t id, void **pcs) {
  if (id <= TM_SITE_UNKNOWN || id >= TM_SITE_STACKS + 2) return 0;
  uint32_t slot = atomic_load_explicit(&stack_by_id[id], memory_order_acquire);
  if (!slot) return 0;
  const stack_slot *s = &stacks[slot - 1];
  memcpy(pcs, s->pcs, s->depth * sizeof *pcs);
  return s->depth;
}

bool tm_site_stack_exact_top(uint32_t id) {
  if (id <= TM_SITE_UNKNOWN || id >= TM_SITE_STACKS + 2) return false;
  uint32_t slot = atomic_load_explicit(&stack_by_id[id], memory_order_acquire);
  return slot && stacks[slot - 1].exact_top;
}

/* ---- pairs ---- */

static pair_slot *pair_get(uint64_t key) {
  uint64_t h = key * 0x9E3779B97F4A7C15u;
  h ^= h >> 29;
  for (uint32_t i = 0; i < PROBE_LIMIT; i++) {
    pair_slot *p = &pairs[(h + i) & (TM_SITE_PAIRS - 1)];
    uint64_t cur = atomic_load_explicit(&p->key, memory_order_acquire);
    if (cur == key) return p;
    if (cur != 0) continue;
    if (atomic_load_explicit(&pair_count, memory_order_relaxed) >= TM_SITE_PAIRS * 3 / 4)
      return NULL;
    if (atomic_compare_exchange_strong_explicit(&p->key, &cur, key, memory_order_acq_rel,
                                                memory_order_acquire)) {
      uint32_t idx = atomic_fetch_add_explicit(&pair_count, 1, memory_order_relaxed);
      atomic_store_explicit(&pair_order[idx], (uint32_t)(p - pairs) + 1, memory_order_release);
      return p;
    }
    if (cur == key) return p; /* another thread added it first */
  }
  return NULL;
}

static void pair_add(pair_slot *p, uint64_t contentions, uint64_t wait_ns) {
  atomic_fetch_add_explicit(&p->contentions, contentions, memory_order_relaxed);
  atomic_fetch_add_explicit(&p->wait_ns, wait_ns, memory_order_relaxed);
}

void tm_site_add(uint32_t object_id, uint32_t stack_id, uint64_t contentions, uint64_t wait_ns) {
  pair_slot *p = pair_get((uint64_t)object_id << 32 | stack_id);
  if (p) pair_add(p, contentions, wait_ns);
}

uint32_t tm_sites_pair_count(void) {
  return atomic_load_explicit(&pair_count, memory_order_acquire);
}

bool tm_site_pair(uint32_t index, uint32_t *object_id, uint32_t *stack_id,
                  uint64_t *contentions, uint64_t *wait_ns) {
  if (index >= TM_SITE_PAIRS) return false;
  uint32_t slot = atomic_load_explicit(&pair_order[index], memory_order_acquire);
  if (!slot) return false;
  pair_slot *p = &pairs[slot - 1];
  uint64_t key = atomic_load_explicit(&p->key, memory_order_relaxed);
  *object_id = (uint32_t)(key >> 32);
  *stack_id = (uint32_t)key;
  *contentions = atomic_load_explicit(&p->contentions, memory_order_relaxed);
  *wait_ns = atomic_load_explicit(&p->wait_ns, memory_order_relaxed);
  return true;
}

uint64_t tm_sites_unwinds(void) { return atomic_load_explicit(&unwinds, memory_order_relaxed); }

/* ---- program threads ---- */

/* One token of TM_SITE_RATE per second, TM_SITE_BURST at most saved up. */
static bool take_token(uint64_t now) {
  uint64_t tat = bucket_tat > now ? bucket_tat : now;
  if (tat - now > (uint64_t)(TM_SITE_BURST - 1) * SITE_INTERVAL_NS) return false;
  bucket_tat = tat + SITE_INTERVAL_NS;
  return true;
}

static uint32_t unwind_stack(tm_thread *t) {
  void *pcs[UNWIND_MAX];
  int saved = errno;
  int cancel = tm_cancel_off(); /* unwind.h: the first unwind may reach a cancellation point */
  t->guard++;
  int n = tm_backtrace(pcs, UNWIND_MAX);
  t->guard--;
  tm_cancel_restore(cancel);
  errno = saved;
  atomic_fetch_add_explicit(&unwinds, 1, memory_order_relaxed);
  return tm_site_intern(pcs, (uint32_t)(n > 0 ? n : 0), false);
}

uint32_t tm_site_begin(tm_thread *t, uint32_t oid, uint64_t now_ns) {
  if (!t || !oid) return 0;
  site_cache *c = &cache[oid & (CACHE_WAYS - 1)];
  bool token = take_token(now_ns);
  if (!token && c->object_id == oid && c->pair) return c->pair;
  uint32_t stack = token ? unwind_stack(t) : TM_SITE_UNKNOWN;
  pair_slot *p = pair_get((uint64_t)oid << 32 | stack);
  if (!p) return 0;
  uint32_t pair = (uint32_t)(p - pairs) + 1;
  if (stack != TM_SITE_UNKNOWN) *c = (site_cache){oid, pair};
  return pair;
}

void tm_site_end(uint32_t pair, uint64_t waited_ns) {
  if (pair) pair_add(&pairs[pair - 1], 1, waited_ns);
}
