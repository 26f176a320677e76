/* What the wrap_*.c files share: who is observing, wait accounting, hold
 * sampling. The accounting (wrap_account.c) only touches the registry and
 * the object table, so unit tests drive it without preloading anything. */
#ifndef THREADMON_WRAP_H
#define THREADMON_WRAP_H

#include <stdatomic.h>
#include <stdbool.h>

#include "probe.h"

#define TM_EXPORT __attribute__((visibility("default")))

/* objects.c's table, for the inlined first-probe lookup below. */
extern _Atomic(tm_object *) tm_object_table TM_HIDDEN;
#define TM_MAX_OBJECTS 65536u /* power of two */

/* Fibonacci hashing of the address's low 32 bits (one imul with an
 * immediate, no 64-bit constant to load): the top 16 bits of the 32-bit
 * product mix every bit from 3 up, so neighbouring objects spread out.
 * Addresses equal modulo 4 GiB share a home slot and probe onwards. */
static inline uint32_t tm_object_hash(uintptr_t key) {
  return ((uint32_t)key * 0x9E3779B1u) >> 16;
}
_Static_assert(TM_MAX_OBJECTS == 65536u, "tm_object_hash yields 16 bits");

/* The table *table points to, mapped zeroed (MAP_NORESERVE) by the first
 * caller when NULL; NULL when mmap failed. Lock-free: a racing mapping is
 * undone. For tables that are never freed (objects.c, madeat.c). */
TM_HIDDEN void *tm_table_map(void *_Atomic *table, size_t bytes);

/* Maps the table (idempotent); false when mmap failed. Every registered
 * thread has it mapped (threads.c maps it before handing out a record), so
 * code holding a tm_thread may use tm_object_home without a NULL check. */
TM_HIDDEN bool tm_objects_map(void);

/* The uncontended path's lookup: the object in addr's home slot, or NULL
 * (not there: the caller takes tm_object_find out of line). Only for
 * callers holding a registered tm_thread (table mapped). The id may still
 * be 0 for a few ns while its adder publishes it; counting into the object
 * is fine meanwhile, and skipping the id check saves a load. */
static inline tm_object *tm_object_home_slot(const void *addr) {
  tm_object *tab = atomic_load_explicit(&tm_object_table, memory_order_relaxed);
  return &tab[tm_object_hash((uintptr_t)addr)];
}

static inline bool tm_object_is(tm_object *o, const void *addr) {
  return atomic_load_explicit(&o->address, memory_order_relaxed) == (uintptr_t)addr;
}

static inline tm_object *tm_object_home(const void *addr) {
  tm_object *o = tm_object_home_slot(addr);
  return TM_LIKELY(tm_object_is(o, addr)) ? o : NULL;
}

/* Home slot first, then the full search (with the flags of a first sight). */
static inline tm_object *tm_object_lookup(const void *addr, uint32_t kind, uint32_t flags) {
  tm_object *o = tm_object_home(addr);
  return TM_LIKELY(o != NULL) ? o : tm_object_find(addr, kind, flags);
}
/* The program's call site of the interposed function. */
#define TM_CALLER() __builtin_return_address(0)

/* How a finished wait counts as an acquisition of its object. */
enum tm_acquire {
  TM_ACQ_NONE = 0,      /* timed out, failed, or not an acquisition */
  TM_ACQ_EXCLUSIVE = 1, /* now held exclusively: plain increment is safe */
  TM_ACQ_SHARED = 2,    /* others may count at once: atomic increment */
};

typedef struct tm_wait {
  tm_thread *t;
  tm_object *o;
  uint64_t start_ns;
  /* Put on the event that ends the wait. tm_wait_begin sets the holder at
   * arrival (the usual releaser of a mutex or rwlock, and free to know);
   * cond, sem and barrier wrappers replace it with the object's
   * releaser_tid before tm_wait_end. */
  uint32_t releaser_tid;
  uint32_t site_pair; /* the (object, call site) pair it counts for (sites.h) */
} tm_wait;

/* CLOCK_MONOTONIC ns for wait timestamps: the TSC converted with the
 * sampler's calibration when the TSC is invariant and calibrated (about 4x
 * cheaper than clock_gettime), tm_now_ns otherwise. */
TM_HIDDEN uint64_t tm_wait_clock(void);

/* Pushes state (with o's id and the holder) and, for a contended object
 * seen for the first time, captures the call stack (caller != NULL). */
TM_HIDDEN void tm_wait_begin(tm_wait *w, tm_thread *t, tm_object *o, uint32_t state,
                             uint32_t holder_tid, const void *caller);
/* Signal/broadcast, sem_post, barrier arrival: the calling thread t may
 * release waiters of the object at addr; one relaxed store into it, no lock
 * (sem_post calls it: async-signal-safe). */
TM_HIDDEN void tm_note_releaser(tm_thread *t, const void *addr, uint32_t kind);

/* For waits ended by another thread's call on the object (cond, sem,
 * barrier): the last thread that noted itself there. A thread never wakes
 * itself from a wait: its own name there is stale (it signalled or arrived
 * before an unseen releaser did), so unknown. */
static inline void tm_wait_released_by_object(tm_wait *w) {
  uint32_t r = w->o ? atomic_load_explicit(&w->o->releaser_tid, memory_order_relaxed) : 0;
  w->releaser_tid = r == w->t->tid ? 0 : r;
}

/* Pushes RUNNING (with w->releaser_tid, or 0 when the wait failed: acq ==
 * TM_ACQ_NONE) and adds the wait to o's contentions/wait/max_wait. */
TM_HIDDEN void tm_wait_end(tm_wait *w, enum tm_acquire acq);
/* pthread_cleanup handler: the thread was cancelled inside the wait. */
TM_HIDDEN void tm_wait_cancelled(void *w);

TM_HIDDEN void tm_count_acquire(tm_object *o, enum tm_acquire acq);

/* Hold time: an object's first TM_HOLD_EXACT exclusive acquisitions are
 * all timed until their release, then one in TM_HOLD_DENSE_EVERY on average
 * up to TM_HOLD_DENSE_UNTIL acquisitions, then one in TM_HOLD_SAMPLE_EVERY,
 * at random gaps (a fixed stride aliases with programs whose threads take
 * turns: it can time one thread's holds only). The dense stretch gives a lock
 * taken some thousands of times about 2,000 timed holds, enough for its
 * estimate (docs/benchmarks.md, "Behind the comments"); a hot lock soon pays
 * the sparse rate. Two measurements per thread at a time: a lock taken
 * inside another timed one is timed too (memcached's LRU maintainer holds
 * its own lock, timed on each of its few acquisitions, around every one of
 * its thousands of slabs_lock holds; with one slot those were never timed
 * and the next timed hold, an atypical 17 ms one, weighed for 2,964 of
 * them: 51 s of hold in a 5 s run). An acquisition skipped for want of a
 * slot is covered by the next timed one's weight. The fast path adds one
 * compare to the increment it does anyway; an unlock, two. */
#define TM_HOLD_EXACT 256u
#define TM_HOLD_DENSE_EVERY 8u
#define TM_HOLD_DENSE_UNTIL 16384u
#define TM_HOLD_SAMPLE_EVERY 64u
/* The locks whose holds this thread is timing, NULL for a free slot: TLS
 * words of their own so that an unlock tests them with two compares, no
 * record needed. */
#define TM_HOLD_SLOTS 2
extern TM_TLS __thread const void *tm_hold_addr[TM_HOLD_SLOTS] TM_HIDDEN;
static inline bool tm_hold_timing(const void *addr) {
  return tm_hold_addr[0] == addr || tm_hold_addr[1] == addr;
}
TM_HIDDEN void tm_hold_begin(tm_object *o, uint64_t count, const void *addr, uint32_t kind);
TM_HIDDEN void tm_hold_end(const void *addr, uint32_t kind);
/* addr, held by the caller, is a recursive mutex it has taken more than
 * once: an unlock leaves it held, an acquisition holds it for no time. */
TM_HIDDEN bool tm_hold_inner(const void *addr, uint32_t kind);

/* After the exclusive acquisition that brought o's count to count; kind is
 * what the caller knows addr to be (o's is its first sight's). */
static inline void tm_hold_maybe(tm_object *o, uint64_t count, const void *addr, uint32_t kind) {
  if (TM_UNLIKELY(count >= atomic_load_explicit(&o->hold_next, memory_order_relaxed)))
    tm_hold_begin(o, count, addr, kind);
}

/* The count a kind's holds are sampled by: a rwlock's writes, else every
 * acquisition (all exclusive). */
static inline uint64_t tm_hold_count(const tm_object *o, uint32_t kind) {
  return kind == TM_KIND_RWLOCK ? o->writes : o->acquisitions;
}

/* After an exclusive acquisition was counted into o (NULL: untracked). */
static inline void tm_hold_tick(tm_object *o, const void *addr, uint32_t kind) {
  if (o != NULL) tm_hold_maybe(o, tm_hold_count(o, kind), addr, kind);
}

/* An exclusive acquisition by the calling (registered) thread, which holds
 * the object: the home slot's counter with a plain increment, else the full
 * search out of line; then the hold sampling. */
TM_HIDDEN void tm_count_exclusive_slow(const void *addr, uint32_t kind, uint32_t flags);
static inline void tm_count_exclusive(const void *addr, uint32_t kind) {
  tm_object *o = tm_object_home_slot(addr);
  if (TM_LIKELY(tm_object_is(o, addr))) {
    tm_hold_maybe(o, ++o->acquisitions, addr, kind);
  } else {
    tm_count_exclusive_slow(addr, kind, 0);
  }
}

/* A rwlock's write acquisition (the caller holds it alone): counted as an
 * acquisition and a write, its hold sampled by the writes. */
static inline void tm_count_writer(const void *addr) {
  tm_object *o = tm_object_home_slot(addr);
  if (TM_LIKELY(tm_object_is(o, addr))) {
    o->acquisitions++;
    tm_hold_maybe(o, ++o->writes, addr, TM_KIND_RWLOCK);
  } else {
    tm_count_exclusive_slow(addr, TM_KIND_RWLOCK, 0);
  }
}

/* A shared acquisition (rwlock reader, semaphore wait): several threads
 * count at once, so a relaxed atomic add into the home slot's counter, else
 * the full search out of line. */
TM_HIDDEN void tm_count_shared_slow(const void *addr, uint32_t kind);
static inline void tm_count_shared(const void *addr, uint32_t kind) {
  tm_object *o = tm_object_home_slot(addr);
  if (TM_LIKELY(tm_object_is(o, addr)))
    __atomic_fetch_add(&o->acquisitions, 1, __ATOMIC_RELAXED);
  else
    tm_count_shared_slow(addr, kind);
}

/* Unlock paths: ends the timed hold if it is this lock's. */
static inline void tm_hold_release(const void *addr, uint32_t kind) {
  if (TM_UNLIKELY(tm_hold_timing(addr))) tm_hold_end(addr, kind);
}

/* A timeout a timed call would accept; anything else goes straight to the
 * real function so that its error (EINVAL) and its order of checks stay. */
static inline bool tm_valid_timeout(clockid_t clk, const struct timespec *ts) {
  return ts != NULL && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000 &&
         (clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC);
}

#endif
