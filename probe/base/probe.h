/* The probe's internal contract: what the wrappers (program threads) and the
 * sampler (the probe's own thread) share.
 *
 * Program threads only ever touch their own tm_thread record and the object
 * table; they never lock, allocate or make a syscall on the uncontended
 * path. Everything that leaves the process is built and sent by the sampler.
 *
 *   wrap_*.c     interposed functions, forward to the real ones (real.h)
 *   threads.c    the thread registry: slots, per-thread event rings
 *   objects.c    the sync object table (address -> object, stats)
 *   sampler.c    the probe thread: drains rings, samples /proc and perf,
 *                encodes frames, hands them to transport.c
 *   session.c    start-up, Hello/Goodbye, fork/exec, shutdown
 */
#ifndef THREADMON_PROBE_H
#define THREADMON_PROBE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rawsyscall.h"

#define TM_HIDDEN __attribute__((visibility("hidden")))
#define TM_LIKELY(x) __builtin_expect(!!(x), 1)
#define TM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TM_TLS __attribute__((tls_model("initial-exec")))
/* A small static that every image touches at its start, even one that
 * ends without a thread (a shell's /bin/true): kept in .data, whose page
 * the loader's relocations have already faulted in, instead of somewhere
 * in 3 MB of .bss (a read then a write fault per page: about ten per exec
 * before). */
#define TM_HOT __attribute__((section(".data.tm_hot")))

/* threadmon.proto's ThreadState and SyncKind, made from proto/states.def
 * (encode.c checks each against the proto). TM_STATE_UNKNOWN: events were
 * lost from here to the next event. */
enum tm_state {
#define TM_WIRE_STATE(name, number) TM_STATE_##name = (number),
#include "states.def"
};

enum tm_kind {
#define TM_SYNC_KIND(name, number, text, held) TM_KIND_##name = (number),
#include "states.def"
};

/* Folded time per wire state, indexed by its number (states.def numbers
 * them 0..n-1; encode.c asserts it). */
enum {
  TM_FOLD_STATES = 0
#define TM_WIRE_STATE(name, number) +1
#include "states.def"
};

static inline uint64_t tm_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The probe's own pauses are raw system calls (rawsyscall.h): nanosleep
 * and sched_yield are names it exports. */
static inline void tm_sleep_ns(long ns) {
  struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
  tm_syscall(SYS_nanosleep, &ts, NULL);
}
static inline void tm_yield(void) { tm_syscall(SYS_sched_yield); }

/* TSC -> CLOCK_MONOTONIC calibration for the wrappers' wait timestamps
 * (wrap_account.c). The sampler calls it every tick; the first call checks
 * /proc/cpuinfo for an invariant TSC, so it must not run in a wrapper. */
TM_HIDDEN void tm_clock_calibrate(void);

/* ---- events: one per state change, written by the thread itself ---- */

typedef struct tm_event {
  uint64_t time_ns;
  uint32_t state;      /* enum tm_state */
  uint32_t object_id;  /* 0 = none */
  uint32_t holder_tid; /* owner when the wait began, 0 = unknown */
  uint32_t releaser_tid; /* on the event ending a wait: who released it, 0 = unknown */
} tm_event;

#define TM_RING_EVENTS 1024 /* power of two */

/* Single-producer (the thread) single-consumer (the sampler) ring. Its
 * indices sit in the thread's record, its events in an array of their own
 * (threads.c): the records stay small and dense, and the sampler's visit
 * of a thread that woke touches its record's few lines and the events it
 * drains, not three pages of a 25 KB record (each a TLB miss: most of
 * what a visit cost at 10,000 threads). */
typedef struct tm_ring {
  _Atomic uint64_t head; /* next write, producer-owned */
  char pad1[56];
  _Atomic uint64_t tail; /* next read, consumer-owned */
  _Atomic uint64_t dropped;
  /* mask + 1 events: the slot's TM_RING_EVENTS (set when it is claimed),
   * or a larger ring the sampler offered (grow) and the thread took while
   * its ring was empty. The next head it publishes publishes the change:
   * a reader loads ev and mask after the head. */
  _Atomic(tm_event *) ev;
  _Atomic uint64_t mask;
  _Atomic(tm_event *) grow;
  char pad2[24];
} tm_ring;

/* The events a thread's ring holds now. */
static inline uint64_t tm_ring_capacity(tm_ring *r) {
  return atomic_load_explicit(&r->mask, memory_order_relaxed) + 1;
}

/* User-thread switches (M:N) come far faster than state changes (a fiber
 * program switches millions of times a second): they have a ring of their
 * own per LWP, mapped by the thread on its first switch, the same layout
 * with 16 times the room (about 1.6 million switches a second at 10 ms
 * ticks; 384 KiB of address space, touched as it fills). */
#define TM_URING_EVENTS 16384 /* power of two */
typedef struct tm_uring {
  _Atomic uint64_t head;
  char pad1[56];
  _Atomic uint64_t tail;
  _Atomic uint64_t dropped;
  char pad2[48];
  tm_event ev[TM_URING_EVENTS];
} tm_uring;

/* ---- threads ---- */

enum tm_slot_state {
  TM_SLOT_FREE = 0,
  TM_SLOT_CLAIMED = 1, /* being filled in */
  TM_SLOT_LIVE = 2,
  TM_SLOT_EXITED = 3, /* thread gone; sampler still has to drain and report */
  TM_SLOT_SEALED = 4, /* sampler reporting its end: no more renames */
};

#define TM_NAME_BYTES 16
#define TM_ROUTINE_BYTES 160

/* Line-aligned: a thread's record shares no cache line with the next
 * one's, which another thread writes. */
typedef struct tm_thread {
  _Alignas(64) _Atomic int slot_state; /* enum tm_slot_state */
  uint32_t tid;
  uint32_t creator_tid;
  bool is_probe, is_main;
  bool attrs_known; /* name, policy, priority, nice, affinity set by the creator */
  uint64_t start_ns;
  _Atomic uint64_t end_ns;
  _Atomic uint64_t end_cpu_ns; /* its CPU clock then, read by itself; 0 unknown */
  void *start_routine; /* symbolised by the sampler */
  char name[TM_NAME_BYTES];
  _Atomic uint32_t attr_version; /* bumped when name/policy/affinity change */
  int policy, priority, nice;
  uint64_t affinity[4];  /* first 256 CPUs; all ones = unrestricted */
  uint32_t cur_state;    /* last state pushed, thread-owned */
  int guard;             /* >0 while inside probe code on this thread */
  void *start_arg;            /* handed from pthread_create to the child */
  _Atomic uintptr_t handle;   /* pthread_t, to find the record from pthread_* calls */
  _Atomic int renaming;       /* a rename of this ended thread is being written */
  uint64_t yields;            /* sched_yield calls, thread-owned */
  /* Folding: while its ring is full (the sampler starved of a CPU) a
   * thread adds the time of each state it leaves to fold_ns[state]
   * instead of dropping the change, so its totals stay exact; the ring's
   * last slot says where the gap begins (TM_STATE_UNKNOWN), and the first
   * change that fits again ends it. Written by the thread (relaxed
   * stores, one writer), read by the sampler. */
  _Atomic uint64_t fold_ns[TM_FOLD_STATES];
  _Atomic uint64_t folded;    /* state changes folded */
  _Atomic uint64_t fold_from; /* start of the folded state still open; 0 = none */
  _Atomic uint32_t fold_state;
  /* User-thread switches (NULL until its first); kept with the slot. */
  _Atomic(tm_uring *) uring;
  /* Sampler-private (fds, last counters): thread_state.h. */
  struct tm_sampler_thread *sampler;
  tm_ring ring;
} tm_thread;

/* The calling thread's record, or NULL before it is registered. */
extern TM_TLS __thread tm_thread *tm_self TM_HIDDEN;

TM_HIDDEN tm_thread *tm_thread_register_self(void *start_routine, uint32_t creator_tid);
TM_HIDDEN void tm_thread_mark_exited(tm_thread *t);
/* Registers a thread the sampler found in /proc/self/task but never saw. */
TM_HIDDEN tm_thread *tm_thread_register_foreign(uint32_t tid);
/* The probe thread registers itself, sets is_probe and keeps guard > 0 so
 * that every wrapper passes its calls straight through. */

/* pthread_create: the parent claims the child's slot (CLAIMED, no malloc),
 * the child attaches to it; unclaim when the create failed. */
TM_HIDDEN tm_thread *tm_thread_claim(void *start_routine, void *start_arg,
                                     uint32_t creator_tid);
TM_HIDDEN void tm_thread_attach(tm_thread *t);
/* The attributes a child of creator starts with, where the creator's
 * record and attr (NULL: the defaults) tell them (threads.c). */
TM_HIDDEN void tm_thread_inherit(tm_thread *child, const tm_thread *creator,
                                 const pthread_attr_t *attr);
TM_HIDDEN void tm_thread_unclaim(tm_thread *t);
/* Registration of a thread first seen in a wrapper (main thread, threads
 * made inside libc); NULL after the thread was marked exited or when full. */
TM_HIDDEN tm_thread *tm_thread_register_lazy(void);
/* LIVE/CLAIMED record of a pthread_t or tid, NULL if unknown (O(slots)). */
TM_HIDDEN tm_thread *tm_thread_by_handle(uintptr_t handle);
/* Records the pthread_t of t's thread (its creator may know it first). */
TM_HIDDEN void tm_thread_set_handle(tm_thread *t, uintptr_t handle);
TM_HIDDEN tm_thread *tm_thread_by_tid(uint32_t tid);
/* Threads claimed so far (created through the wrapper, or registered). */
TM_HIDDEN uint64_t tm_threads_claimed(void);
/* Threads not tracked because all slots were in use. */
TM_HIDDEN uint64_t tm_threads_untracked(void);
/* Registered with pthread_atfork by threads.c before any session code
 * (constructor priority 101): in the child only the forking thread stays
 * LIVE (with its new tid); every other slot is FREE again, its ring empty. */
TM_HIDDEN void tm_threads_atfork_child(void);
/* Set by the session when its children start lazy (a process tree): the
 * child handler above then touches nothing (each write would copy a page
 * the fork shared) and leaves the thread unregistered, so every wrapper
 * passes through; tm_threads_lazy_fork_done does the reset when the child
 * starts its session. */
extern bool tm_threads_fork_lazily TM_HIDDEN;
TM_HIDDEN void tm_threads_lazy_fork_done(void);
/* What the registry reads of the machine (its CPUs, where glibc keeps a
 * thread's tid): at load, or for a lazy image when its session starts. */
TM_HIDDEN void tm_threads_machine_init(void);

/* Iteration for the sampler: slots [0, tm_threads_high_water()). */
#define TM_MAX_THREADS 16384u
TM_HIDDEN uint32_t tm_threads_high_water(void);
TM_HIDDEN tm_thread *tm_thread_slot(uint32_t i);
/* What a thread did that the sampler must look at (a state pushed, a new,
 * ended or renamed record) marks its slot in a bitmap; the sampler takes
 * the marks each tick and visits only those slots (and the ones it keeps
 * watching itself), so a tick costs what threads did, not how many exist.
 * Marking is on the blocking paths only, one atomic OR per slot per tick. */
TM_HIDDEN void tm_thread_touch(const tm_thread *t);
/* Takes (and clears) word w of the marks: slots 64w..64w+63. */
TM_HIDDEN uint64_t tm_threads_take_touched(uint32_t w);
/* A name given to an ended thread (EXITED, not yet reported) through its
 * pthread_t; false when there is none. */
TM_HIDDEN bool tm_thread_rename_ended(uintptr_t handle, const char *name);
/* Sampler: EXITED -> SEALED, after any rename in progress is written; its
 * attributes are final then. */
TM_HIDDEN void tm_thread_seal(tm_thread *t);
TM_HIDDEN void tm_thread_release(tm_thread *t); /* SEALED -> FREE */

/* Pushes a state change for the calling thread. Near full it folds (see
 * tm_thread.fold_ns), and the ring's last free slot gets a TM_STATE_UNKNOWN
 * event at the first folded change, so that readers see where the gap
 * begins. */
TM_HIDDEN void tm_push_state(tm_thread *self, uint32_t state, uint32_t object_id,
                             uint32_t holder_tid, uint32_t releaser_tid, uint64_t time_ns);
/* User-thread (ucontext, Boost.Context) switches go to the LWP's uring
 * (its main ring when that could not be mapped): an event whose state is
 * TM_EV_USER_SWITCH or above is no thread state (object_id: the user
 * thread switched to, holder_tid: the one switched from; 0 = the LWP's own
 * context). The sampler sends them as UserSwitches (userthreads.h). A full
 * uring drops and counts, and its last free slot says where the loss
 * begins (TM_EV_USER_LOST). */
enum {
  TM_EV_USER_SWITCH = 0x40, /* + threadmon.UserSwitchKind */
  TM_EV_USER_DONE = 0x41,
  TM_EV_USER_RETIRED = 0x42,
  TM_EV_USER_LOST = 0x43,
};
/* Pushes a user-thread event (the thread's state stays). */
TM_HIDDEN void tm_push_event(tm_thread *self, uint32_t kind, uint32_t to_id, uint32_t from_id,
                             uint64_t time_ns);
TM_HIDDEN uint32_t tm_uring_drain(tm_uring *r, tm_event *out, uint32_t max);
/* Consumer side: copies out up to max events; returns how many. */
TM_HIDDEN uint32_t tm_ring_drain(tm_ring *r, tm_event *out, uint32_t max);
/* Sampler: offers t a ring of TM_RING_GROWN_EVENTS (it filled three
 * quarters of its ring between two drains, or folded), taken at its next
 * push to an empty ring. At most TM_RINGS_GROWN at once; false when none is left
 * or there is no memory. Freed with its slot. */
#define TM_RING_GROWN_EVENTS 16384
#define TM_RINGS_GROWN 8
TM_HIDDEN bool tm_ring_offer_growth(tm_thread *t);
/* The sampler's view of t's folded time: fold_ns plus, for a folded state
 * still open at now_ns, its time so far (an EXITED thread's is not). Out:
 * TM_FOLD_STATES values. Returns the changes folded. */
TM_HIDDEN uint64_t tm_thread_folded(const tm_thread *t, uint64_t now_ns, uint64_t *out);

/* ---- sync objects ---- */

/* 192 bytes, line-aligned: the table index scales with two instructions and
 * everything an uncontended call touches (address, counter, the hold
 * sampling's next count, the releaser) is in the object's first line. */
typedef struct tm_object {
  _Alignas(64) _Atomic uintptr_t address; /* key; 0 = empty slot */
  uint32_t id;               /* 1-based, stable for the session */
  uint32_t kind;             /* enum tm_kind */
  uint32_t flags;            /* mutex: glibc __kind & 0xff: bits 0-1 type
                                (normal, recursive, errorcheck, adaptive),
                                0x10 robust, 0x20 PI, 0x40 PP, 0x80 pshared */
  _Atomic uint32_t described; /* sampler has sent its SyncObject frame */
  /* cond: last signaller/broadcaster; sem: last poster; barrier: last
   * arrival (relaxed stores, read when a wait on the object ends). In the
   * first line, which the signal's and post's lookup has read already. */
  _Atomic uint32_t releaser_tid;
  /* Counted under the object's own lock where the kind allows (mutex, spin,
   * rwlock writers): no atomics on the fast path. Others use relaxed atomics. */
  uint64_t acquisitions;
  /* Beside the counter: the lock fast path compares the two (wrap.h). */
  _Atomic uint64_t hold_next;    /* acquisition count whose hold is timed next */
  _Atomic uint64_t contentions;
  /* rwlock: the writers' acquisitions alone, counted under the lock. Their
   * holds are sampled by this count (hold_next, hold_last): weighted by all
   * acquisitions, readers' included, a read-mostly lock's write holds read
   * 1,000 times long (docs/benchmarks.md, "Write holds of a rwlock"). */
  uint64_t writes;
  _Atomic uint64_t wait_ns;
  _Atomic uint64_t max_wait_ns;
  /* Hold time: each timed hold counts for the acquisitions since the
   * previous timed one (its weight), so hold_ns estimates the total without
   * bias and is exact while every acquisition is timed (wrap.h). */
  _Atomic uint64_t hold_ns;      /* sum of weight x timed hold */
  _Atomic uint64_t hold_samples; /* holds timed */
  _Atomic uint64_t hold_last;    /* acquisition count of the last timed hold */
  _Atomic uint64_t wait_samples; /* internal locks: sampler ticks seen waiting */
  _Atomic uint32_t has_stack;    /* 1 = stack complete, 2 = being written */
  uint32_t stack_depth;
  void *first_contention_stack[8]; /* raw PCs, symbolised by the sampler */
  uint64_t first_seen_ns;
} tm_object;

/* Finds or adds the object at addr, numbered; NULL when the table is full.
 * The kind and flags of the first sight stay. The sampler uses slots whose
 * address and id are both non-zero. */
TM_HIDDEN tm_object *tm_object_get(const void *addr, uint32_t kind);
TM_HIDDEN tm_object *tm_object_find(const void *addr, uint32_t kind, uint32_t flags);
/* o's id; when its adder has claimed the slot but not numbered it yet (an
 * object found in its home slot, wrap.h), waits for it, bounded, then gives
 * it: a wait must never go out without its object. */
TM_HIDDEN uint32_t tm_object_id(tm_object *o);
/* The object at addr if one was added, never adding one (lock-free, no
 * allocation: safe in a signal handler). */
TM_HIDDEN tm_object *tm_object_peek(const void *addr);
/* Calls that found the table full (objects not tracked). */
TM_HIDDEN uint64_t tm_objects_untracked(void);
/* Last pthread_setconcurrency() level (0 = never set); glibc ignores it. */
TM_HIDDEN extern _Atomic int tm_concurrency_hint;
TM_HIDDEN uint32_t tm_objects_capacity(void);
TM_HIDDEN tm_object *tm_object_slot(uint32_t i); /* for the sampler */
/* Ids are handed out 1, 2, 3... (one is skipped when a finder gave the id
 * of an object whose adder was preempted): the sampler walks
 * 1..tm_objects_last_id() instead of the whole table. NULL for an id still
 * being published, or skipped. */
TM_HIDDEN uint32_t tm_objects_last_id(void);
TM_HIDDEN tm_object *tm_object_by_id(uint32_t id);

/* ---- session ---- */

TM_HIDDEN void tm_session_start(void);             /* idempotent */
TM_HIDDEN extern _Atomic int tm_active;            /* 0 = pass everything through */
/* The program called pthread_create at least once (glibc then stops
 * treating the process as single-threaded, for good). */
TM_HIDDEN extern _Atomic int tm_program_created_thread;
TM_HIDDEN void tm_note_exit_status(int status);    /* from the main()/exit() wrappers */

#endif
