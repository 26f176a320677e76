/* Wait accounting and hold sampling shared by all wrappers (see wrap.h). */
#include "wrap.h"

#include "sites.h"
#include "unwind.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TM_HAVE_TSC 1
#else
#define TM_HAVE_TSC 0
#endif

/* ---- TSC clock ----
 * ns = base_ns + (tsc - base_tsc) * mult >> 32, published under a seqlock
 * by the sampler (the only writer). mult == 0: not calibrated (yet), use
 * clock_gettime. The frequency comes from a pair of samples at least
 * CAL_MIN_NS apart; the base moves to the latest sample every tick, so the
 * error stays within the frequency error over one tick, and the anchor
 * moves every CAL_REANCHOR_NS so that NTP slewing of CLOCK_MONOTONIC is
 * followed. */
#define CAL_MIN_NS 20000000u
#define CAL_REANCHOR_NS 10000000000u

__extension__ typedef unsigned __int128 tm_u128;

static struct {
  _Atomic uint32_t seq; /* odd while being written */
  _Atomic uint64_t base_tsc, base_ns, mult;
} tsc_conv;

#if TM_HAVE_TSC
static inline uint64_t tsc_read(void) { return __rdtsc(); }
#else
static inline uint64_t tsc_read(void) { return 0; } /* never calibrated: mult stays 0 */
#endif

uint64_t tm_wait_clock(void) {
  uint32_t seq = atomic_load_explicit(&tsc_conv.seq, memory_order_acquire);
  uint64_t mult = atomic_load_explicit(&tsc_conv.mult, memory_order_relaxed);
  uint64_t btsc = atomic_load_explicit(&tsc_conv.base_tsc, memory_order_relaxed);
  uint64_t bns = atomic_load_explicit(&tsc_conv.base_ns, memory_order_relaxed);
  uint64_t tsc = tsc_read();
  atomic_thread_fence(memory_order_acquire);
  if (TM_UNLIKELY(mult == 0 || (seq & 1) ||
                  atomic_load_explicit(&tsc_conv.seq, memory_order_relaxed) != seq))
    return tm_now_ns();
  /* A TSC read a little behind base (another CPU, reordering) counts as base. */
  uint64_t d = tsc > btsc ? tsc - btsc : 0;
  return bns + (uint64_t)(((tm_u128)d * mult) >> 32);
}

/* constant_tsc: fixed rate; nonstop_tsc: keeps counting in deep C-states. */
static bool tsc_invariant(void) {
  if (!TM_HAVE_TSC) return false;
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return false;
  char line[4096];
  bool ok = false;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) != 0) continue;
    ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
    break;
  }
  fclose(f);
  return ok;
}

void tm_clock_calibrate(void) {
  static int usable = -1;
  static uint64_t anchor_tsc, anchor_ns;
  if (usable < 0) usable = tsc_invariant();
  if (!usable) return;
  /* The clock read between two TSC reads: its TSC is their midpoint. */
  uint64_t t0 = tsc_read();
  uint64_t ns = tm_now_ns();
  uint64_t t1 = tsc_read();
  uint64_t tsc = t0 + (t1 - t0) / 2;
  if (anchor_tsc == 0 || tsc <= anchor_tsc || ns <= anchor_ns) {
    anchor_tsc = tsc;
    anchor_ns = ns;
    return;
  }
  uint64_t mult = atomic_load_explicit(&tsc_conv.mult, memory_order_relaxed);
  uint64_t span = ns - anchor_ns;
  if (span >= CAL_MIN_NS) mult = (uint64_t)(((tm_u128)span << 32) / (tsc - anchor_tsc));
  if (mult == 0) return;
  uint32_t seq = atomic_load_explicit(&tsc_conv.seq, memory_order_relaxed);
  atomic_store_explicit(&tsc_conv.seq, seq + 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&tsc_conv.base_tsc, tsc, memory_order_relaxed);
  atomic_store_explicit(&tsc_conv.base_ns, ns, memory_order_relaxed);
  atomic_store_explicit(&tsc_conv.mult, mult, memory_order_relaxed);
  atomic_store_explicit(&tsc_conv.seq, seq + 2, memory_order_release);
  if (span >= CAL_REANCHOR_NS) {
    anchor_tsc = tsc;
    anchor_ns = ns;
  }
}

void tm_count_acquire(tm_object *o, enum tm_acquire acq) {
  if (!o) return;
  if (acq == TM_ACQ_EXCLUSIVE) {
    o->acquisitions++;
    if (o->kind == TM_KIND_RWLOCK) o->writes++;
  } else if (acq == TM_ACQ_SHARED)
    __atomic_fetch_add(&o->acquisitions, 1, __ATOMIC_RELAXED);
}

void tm_count_shared_slow(const void *addr, uint32_t kind) {
  tm_count_acquire(tm_object_find(addr, kind, 0), TM_ACQ_SHARED);
}

void tm_count_exclusive_slow(const void *addr, uint32_t kind, uint32_t flags) {
  tm_object *o = tm_object_find(addr, kind, flags);
  if (!o) return;
  o->acquisitions++;
  if (kind == TM_KIND_RWLOCK) o->writes++;
  tm_hold_tick(o, addr, kind);
}

void tm_wait_begin(tm_wait *w, tm_thread *t, tm_object *o, uint32_t state, uint32_t holder_tid,
                   const void *caller) {
  w->t = t;
  w->o = o;
  w->site_pair = 0;
  /* Before the clock: numbering an object found unnumbered may wait. */
  uint32_t id = o ? tm_object_id(o) : 0;
  uint64_t now = tm_wait_clock();
  if (o) {
    uint64_t unwinds = tm_sites_unwinds();
    w->site_pair = tm_site_begin(t, id, now); /* unwinds with cancel off */
    /* After a call site's unwind (rarely: at most TM_SITE_RATE a second)
     * the clock again: that was the probe's time, not the wait's. Another
     * thread's unwind meanwhile only costs a read. */
    if (TM_UNLIKELY(tm_sites_unwinds() != unwinds)) now = tm_wait_clock();
  }
  w->start_ns = now;
  w->releaser_tid = holder_tid;
  tm_push_state(t, state, id, holder_tid, 0, w->start_ns);
  if (o && caller && TM_UNLIKELY(atomic_load_explicit(&o->has_stack, memory_order_relaxed) == 0)) {
    int cancel = tm_cancel_off();
    tm_unwind_first_contention(t, o, caller);
    tm_cancel_restore(cancel);
  }
}

void tm_note_releaser(tm_thread *t, const void *addr, uint32_t kind) {
  tm_object *o = tm_object_lookup(addr, kind, 0);
  if (o) atomic_store_explicit(&o->releaser_tid, t->tid, memory_order_relaxed);
}

static void wait_finish(tm_wait *w, uint32_t releaser_tid, bool exclusive) {
  uint64_t now = tm_wait_clock();
  uint64_t waited = now > w->start_ns ? now - w->start_ns : 0;
  tm_object *o = w->o;
  tm_site_end(w->site_pair, waited);
  tm_push_state(w->t, TM_STATE_RUNNING, 0, 0, releaser_tid, now);
  if (!o) return;
  if (exclusive) {
    /* Held alone: no locked instructions on a line the other waiters are
     * pulling too. (A timed-out timedlock updates with atomics outside the
     * lock; racing with this it may lose one count, never corrupt.) */
#define TM_BUMP(f, v) \
  atomic_store_explicit(&o->f, atomic_load_explicit(&o->f, memory_order_relaxed) + (v), \
                        memory_order_relaxed)
    TM_BUMP(contentions, 1);
    TM_BUMP(wait_ns, waited);
#undef TM_BUMP
    if (waited > atomic_load_explicit(&o->max_wait_ns, memory_order_relaxed))
      atomic_store_explicit(&o->max_wait_ns, waited, memory_order_relaxed);
    return;
  }
  atomic_fetch_add_explicit(&o->contentions, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&o->wait_ns, waited, memory_order_relaxed);
  uint64_t max = atomic_load_explicit(&o->max_wait_ns, memory_order_relaxed);
  while (waited > max && !atomic_compare_exchange_weak_explicit(&o->max_wait_ns, &max, waited,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed)) {
  }
}

void tm_wait_end(tm_wait *w, enum tm_acquire acq) {
  wait_finish(w, acq == TM_ACQ_NONE ? 0 : w->releaser_tid, acq == TM_ACQ_EXCLUSIVE);
  tm_count_acquire(w->o, acq);
}

void tm_wait_cancelled(void *w) { wait_finish(w, 0, false); }

TM_TLS __thread const void *tm_hold_addr[TM_HOLD_SLOTS];
static TM_TLS __thread uint64_t hold_start_ns[TM_HOLD_SLOTS], hold_weight[TM_HOLD_SLOTS];
static TM_TLS __thread uint32_t hold_rng;

/* The gap to the next timed hold after the count-th acquisition: 1..2*every-1,
 * mean every (xorshift32, per thread: no shared state). */
static uint64_t hold_gap(uint64_t count) {
  uint32_t x = hold_rng ? hold_rng : (uint32_t)tm_wait_clock() | 1u;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  hold_rng = x;
  uint32_t every = count < TM_HOLD_DENSE_UNTIL ? TM_HOLD_DENSE_EVERY : TM_HOLD_SAMPLE_EVERY;
  return 1 + x % (2 * every - 1);
}

bool tm_hold_inner(const void *addr, uint32_t kind) {
  if (kind != TM_KIND_MUTEX) return false;
  const pthread_mutex_t *m = addr;
  return (m->__data.__kind & 3) == PTHREAD_MUTEX_RECURSIVE_NP && m->__data.__count > 1;
}

/* Mutex, spin and write locks: the caller holds o, so these plain
 * read-modify-writes do not race with another begin. Returns the weight of
 * the acquisition that brought o's count to count. */
static uint64_t hold_take_turn(tm_object *o, uint64_t count) {
  uint64_t last = atomic_load_explicit(&o->hold_last, memory_order_relaxed);
  atomic_store_explicit(&o->hold_last, count, memory_order_relaxed);
  atomic_store_explicit(&o->hold_next, count < TM_HOLD_EXACT ? count + 1 : count + hold_gap(count),
                        memory_order_relaxed);
  return count > last ? count - last : 1;
}

void tm_hold_begin(tm_object *o, uint64_t count, const void *addr, uint32_t kind) {
  /* A recursive mutex taken again by its owner: the outer hold goes on, so
   * this acquisition holds it for no time of its own. Timed as a hold of 0
   * (its weight taken): skipped, its weight went to the next timed hold,
   * and a timed inner one ran from the inner lock; 5 us outer holds read
   * 0.62x (docs/benchmarks.md, "Recursive mutexes"). */
  if (tm_hold_addr[0] == addr || tm_hold_addr[1] == addr || tm_hold_inner(addr, kind)) {
    hold_take_turn(o, count);
    atomic_fetch_add_explicit(&o->hold_samples, 1, memory_order_relaxed);
    return;
  }
  int slot = tm_hold_addr[0] == NULL ? 0 : tm_hold_addr[1] == NULL ? 1 : -1;
  if (slot < 0) return; /* its weight goes to the next timed hold */
  hold_weight[slot] = hold_take_turn(o, count);
  tm_hold_addr[slot] = addr;
  hold_start_ns[slot] = tm_wait_clock();
}

void tm_hold_end(const void *addr, uint32_t kind) {
  uint64_t now = tm_wait_clock();
  int slot = tm_hold_addr[0] == addr ? 0 : 1; /* the caller saw addr timed */
  uint64_t held = now > hold_start_ns[slot] ? now - hold_start_ns[slot] : 0;
  uint64_t weight = hold_weight[slot];
  tm_hold_addr[slot] = NULL;
  tm_object *o = tm_object_get(addr, kind);
  if (!o) return;
  atomic_fetch_add_explicit(&o->hold_ns, held * weight, memory_order_relaxed);
  atomic_fetch_add_explicit(&o->hold_samples, 1, memory_order_relaxed);
}
