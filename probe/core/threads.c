/* The thread registry: a fixed table of tm_thread slots mapped once, claimed
 * without locks, plus each thread's single-producer event ring.
 *
 * Slot life: FREE -> CLAIMED (parent in pthread_create, or the thread itself)
 * -> LIVE (the thread attached) -> EXITED (marked by the thread) -> FREE
 * (released by the sampler after draining). Freed slots go on a lock-free
 * stack (index + ABA tag in one word) so that short-lived threads reuse a
 * few slots and the sampler's scan stays short. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "probe.h"
#include "wrap.h"

TM_TLS __thread tm_thread *tm_self;
/* Set by the pthread_create wrapper, read by the sampler (probe.h). */
_Atomic int tm_program_created_thread;
/* Set once this thread was marked exited: TLS destructors that still lock
 * afterwards must not register it again. */
static TM_TLS __thread bool self_done;

static _Atomic(tm_thread *) table;
/* The slots' ring events (tm_ring), RING_STRIDE apart: 387 cache lines,
 * an odd number, so that the same event of many slots (threads that wake
 * together push alike) spreads over every cache set; a stride of a
 * multiple of 4 KB put them all in a few and the sampler's prefetches were
 * evicted before use. */
#define RING_STRIDE (TM_RING_EVENTS + 8)
static _Atomic(tm_event *) ring_events;
static _Atomic uint32_t free_link[TM_MAX_THREADS]; /* next free index + 1, 0 = end */
static _Atomic uint64_t free_top;                  /* tag << 32 | (index + 1) */
static _Atomic uint32_t high_water;
static _Atomic uint64_t untracked, claimed;
/* Each slot's tid and pthread_t again, side by side: finding a record by
 * either (every pthread_join) scans a few KB instead of touching every
 * slot's record (448 bytes each; when the rings were inside them, ~25 KB
 * apart, joining 1,000 threads cost more than creating them). Written with
 * the record's fields; a match is checked against the record. */
static _Atomic uint32_t slot_tid[TM_MAX_THREADS];
static _Atomic uintptr_t slot_handle[TM_MAX_THREADS];
static _Atomic uint64_t touched[TM_MAX_THREADS / 64];
/* The slot (index + 1) that last took each key's hash: a lookup checks
 * that slot first, and only scans when it holds another key (a collision,
 * a reused slot). Every join looks its thread up, usually one that has
 * ended: without the hint each such miss would scan every slot in use, and
 * hundreds of ended records can wait for the sampler. */
#define HINT_BITS 12
static _Atomic uint32_t tid_hint[1u << HINT_BITS], handle_hint[1u << HINT_BITS];

static uint32_t hint_of(uintptr_t key) {
  return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - HINT_BITS));
}

static uint32_t slot_index(const tm_thread *t) {
  return (uint32_t)(t - atomic_load_explicit(&table, memory_order_relaxed));
}

void tm_thread_touch(const tm_thread *t) {
  uint32_t i = slot_index(t);
  uint64_t bit = 1ull << (i % 64);
  /* A load first: once marked this tick, the shared word is only read. */
  if (!(atomic_load_explicit(&touched[i / 64], memory_order_relaxed) & bit))
    atomic_fetch_or_explicit(&touched[i / 64], bit, memory_order_release);
}

uint64_t tm_threads_take_touched(uint32_t w) {
  if (!atomic_load_explicit(&touched[w], memory_order_relaxed)) return 0;
  return atomic_exchange_explicit(&touched[w], 0, memory_order_acquire);
}

static void set_tid(tm_thread *t, uint32_t tid) {
  t->tid = tid;
  atomic_store_explicit(&slot_tid[slot_index(t)], tid, memory_order_release);
  if (tid) atomic_store_explicit(&tid_hint[hint_of(tid)], slot_index(t) + 1, memory_order_release);
}

void tm_thread_set_handle(tm_thread *t, uintptr_t handle) {
  atomic_store_explicit(&t->handle, handle, memory_order_relaxed);
  atomic_store_explicit(&slot_handle[slot_index(t)], handle, memory_order_release);
  if (handle)
    atomic_store_explicit(&handle_hint[hint_of(handle)], slot_index(t) + 1, memory_order_release);
}

/* A slot's uring starts empty for its next thread (or a fork child's). */
static void uring_reset(tm_thread *t) {
  tm_uring *u = atomic_load_explicit(&t->uring, memory_order_relaxed);
  if (!u) return;
  atomic_store_explicit(&u->tail, atomic_load_explicit(&u->head, memory_order_relaxed),
                        memory_order_relaxed);
  atomic_store_explicit(&u->dropped, 0, memory_order_relaxed);
}

#define HUGE_PAGE (2u << 20)

/* NORESERVE: pages are only touched as slots are used. */
static void *map_noreserve(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static tm_thread *slots(void) {
  tm_thread *t = atomic_load_explicit(&table, memory_order_acquire);
  if (TM_LIKELY(t != NULL)) return t;
  size_t bytes = (size_t)TM_MAX_THREADS * sizeof(tm_thread);
  size_t ev_bytes = (size_t)TM_MAX_THREADS * RING_STRIDE * sizeof(tm_event);
  void *p = map_noreserve(bytes);
  tm_event *ev = p ? map_noreserve(ev_bytes) : NULL;
  if (!ev) {
    if (p) munmap(p, bytes);
    return NULL;
  }
  /* Past its first huge page the table is huge pages where the system
   * allows them (THP "madvise"): a program of thousands of threads, whose
   * records the sampler visits scattered, costs a few TLB entries for
   * them, and one of a few threads keeps its small pages. */
  uintptr_t from = ((uintptr_t)p + 2 * (uintptr_t)HUGE_PAGE - 1) & ~((uintptr_t)HUGE_PAGE - 1);
  if (from < (uintptr_t)p + bytes)
    madvise((void *)from, (uintptr_t)p + bytes - from, MADV_HUGEPAGE); /* advice: may fail */
  /* The events first: whoever publishes the table has seen them. */
  tm_event *ev_expected = NULL;
  if (!atomic_compare_exchange_strong(&ring_events, &ev_expected, ev)) munmap(ev, ev_bytes);
  tm_thread *expected = NULL;
  if (!atomic_compare_exchange_strong(&table, &expected, (tm_thread *)p)) {
    munmap(p, bytes);
    return expected;
  }
  return (tm_thread *)p;
}

uint32_t tm_threads_high_water(void) {
  return atomic_load_explicit(&high_water, memory_order_acquire);
}

tm_thread *tm_thread_slot(uint32_t i) {
  tm_thread *t = atomic_load_explicit(&table, memory_order_acquire);
  return t && i < TM_MAX_THREADS ? &t[i] : NULL;
}

uint64_t tm_threads_claimed(void) { return atomic_load_explicit(&claimed, memory_order_relaxed); }

uint64_t tm_threads_untracked(void) { return atomic_load_explicit(&untracked, memory_order_relaxed); }

static void free_push(uint32_t idx) {
  uint64_t top = atomic_load_explicit(&free_top, memory_order_relaxed);
  uint64_t next;
  do {
    atomic_store_explicit(&free_link[idx], (uint32_t)top, memory_order_relaxed);
    next = ((top >> 32) + 1) << 32 | (uint64_t)(idx + 1);
  } while (!atomic_compare_exchange_weak_explicit(&free_top, &top, next, memory_order_release,
                                                  memory_order_relaxed));
}

static int64_t free_pop(void) {
  uint64_t top = atomic_load_explicit(&free_top, memory_order_acquire);
  while ((uint32_t)top != 0) {
    uint32_t idx = (uint32_t)top - 1;
    uint32_t link = atomic_load_explicit(&free_link[idx], memory_order_relaxed);
    uint64_t next = ((top >> 32) + 1) << 32 | link;
    if (atomic_compare_exchange_weak_explicit(&free_top, &top, next, memory_order_acquire,
                                              memory_order_acquire))
      return idx;
  }
  return -1;
}

static tm_event *slab_ring(uint32_t idx) {
  return atomic_load_explicit(&ring_events, memory_order_relaxed) + (size_t)idx * RING_STRIDE;
}

#define GROWN_BYTES ((size_t)TM_RING_GROWN_EVENTS * sizeof(tm_event))
static _Atomic uint32_t rings_grown;

bool tm_ring_offer_growth(tm_thread *t) {
  if (atomic_load_explicit(&t->ring.mask, memory_order_relaxed) != TM_RING_EVENTS - 1 ||
      atomic_load_explicit(&t->ring.grow, memory_order_relaxed))
    return false; /* grown, or offered */
  if (atomic_fetch_add_explicit(&rings_grown, 1, memory_order_relaxed) >= TM_RINGS_GROWN) {
    atomic_fetch_sub_explicit(&rings_grown, 1, memory_order_relaxed);
    return false;
  }
  int saved = errno;
  void *p = mmap(NULL, GROWN_BYTES, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  errno = saved;
  if (p == MAP_FAILED) {
    atomic_fetch_sub_explicit(&rings_grown, 1, memory_order_relaxed);
    return false;
  }
  atomic_store_explicit(&t->ring.grow, (tm_event *)p, memory_order_release);
  return true;
}

/* The slot's grown ring, taken or only offered, is unmapped (its thread
 * ended, or never ran, or is not in this fork child). */
static void ring_ungrow(tm_thread *t, uint32_t idx) {
  tm_event *own = slab_ring(idx);
  tm_event *taken = atomic_load_explicit(&t->ring.ev, memory_order_relaxed);
  tm_event *offered = atomic_load_explicit(&t->ring.grow, memory_order_relaxed);
  tm_event *grown = taken != own ? taken : offered;
  if (!grown) return;
  munmap(grown, GROWN_BYTES);
  atomic_fetch_sub_explicit(&rings_grown, 1, memory_order_relaxed);
  atomic_store_explicit(&t->ring.ev, own, memory_order_relaxed);
  atomic_store_explicit(&t->ring.mask, TM_RING_EVENTS - 1, memory_order_relaxed);
  atomic_store_explicit(&t->ring.grow, NULL, memory_order_relaxed);
}

/* The thread, at a push to its empty ring: the reader has every event of
 * the slot's ring, so the grown one starts at this head. */
static inline void ring_take_growth(tm_ring *r) {
  tm_event *g = atomic_load_explicit(&r->grow, memory_order_acquire);
  if (TM_LIKELY(!g)) return;
  atomic_store_explicit(&r->ev, g, memory_order_relaxed);
  atomic_store_explicit(&r->mask, TM_RING_GROWN_EVENTS - 1, memory_order_relaxed);
  atomic_store_explicit(&r->grow, NULL, memory_order_relaxed);
}

static tm_thread *slot_claim(void) {
  tm_thread *tab = slots();
  /* The object table too: wrappers holding a record look objects up
   * without checking that it exists (tm_object_home). */
  if (!tab || !tm_objects_map()) return NULL;
  int64_t idx = free_pop();
  if (idx < 0) {
    uint32_t hw = atomic_load_explicit(&high_water, memory_order_relaxed);
    do {
      if (hw >= TM_MAX_THREADS) {
        atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
        return NULL;
      }
    } while (!atomic_compare_exchange_weak_explicit(&high_water, &hw, hw + 1,
                                                    memory_order_acq_rel, memory_order_relaxed));
    idx = hw;
  }
  atomic_fetch_add_explicit(&claimed, 1, memory_order_relaxed);
  tm_thread *t = &tab[idx];
  /* A reused slot: reset everything the program side owns. The ring is
   * empty once drained; its contents need no clearing. The sampler-private
   * pointer is left to the sampler. */
  set_tid(t, 0);
  t->creator_tid = 0;
  t->is_probe = t->is_main = t->attrs_known = false;
  t->start_ns = 0;
  atomic_store_explicit(&t->end_ns, 0, memory_order_relaxed);
  atomic_store_explicit(&t->end_cpu_ns, 0, memory_order_relaxed);
  t->start_routine = t->start_arg = NULL;
  memset(t->name, 0, sizeof t->name);
  atomic_store_explicit(&t->attr_version, 0, memory_order_relaxed);
  t->policy = t->priority = t->nice = 0;
  memset(t->affinity, 0xff, sizeof t->affinity);
  t->cur_state = 0;
  t->guard = 0;
  tm_thread_set_handle(t, 0);
  t->yields = 0;
  for (int i = 0; i < TM_FOLD_STATES; i++) atomic_store_explicit(&t->fold_ns[i], 0, memory_order_relaxed);
  atomic_store_explicit(&t->folded, 0, memory_order_relaxed);
  atomic_store_explicit(&t->fold_from, 0, memory_order_relaxed);
  atomic_store_explicit(&t->ring.head, 0, memory_order_relaxed);
  atomic_store_explicit(&t->ring.tail, 0, memory_order_relaxed);
  atomic_store_explicit(&t->ring.dropped, 0, memory_order_relaxed);
  atomic_store_explicit(&t->ring.ev, slab_ring(idx), memory_order_relaxed);
  atomic_store_explicit(&t->ring.mask, TM_RING_EVENTS - 1, memory_order_relaxed);
  atomic_store_explicit(&t->ring.grow, NULL, memory_order_relaxed);
  uring_reset(t);
  atomic_store_explicit(&t->slot_state, TM_SLOT_CLAIMED, memory_order_release);
  return t;
}

static void slot_free(tm_thread *t) {
  tm_thread *tab = atomic_load_explicit(&table, memory_order_relaxed);
  ring_ungrow(t, (uint32_t)(t - tab));
  atomic_store_explicit(&t->slot_state, TM_SLOT_FREE, memory_order_release);
  free_push((uint32_t)(t - tab));
}

/* The kernel's struct sched_attr (linux/sched/types.h), first version:
 * glibc 2.36 has no sched_getattr wrapper. */
struct tm_sched_attr {
  uint32_t size, policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime, deadline, period;
};

/* Scheduling attributes as they are when the record starts; later changes
 * come from the wrappers. Only non-wrapped syscalls: no recursion. Every
 * created thread pays for these: policy, priority and nice come from one
 * sched_getattr (three calls before). */
static void read_sched_attrs(tm_thread *t) {
  if (atomic_load_explicit(&t->attr_version, memory_order_relaxed) == 0)
    tm_syscall(SYS_prctl, PR_GET_NAME, t->name, 0, 0, 0); /* not our wrapper */
  struct tm_sched_attr sa;
  if (tm_syscall(SYS_sched_getattr, 0, &sa, sizeof sa, 0) == 0) {
    t->policy = (int)sa.policy; /* reset-on-fork is in flags, not here */
    t->priority = (int)sa.priority;
    t->nice = sa.nice; /* per thread */
    /* A real-time thread's nice is kept but not reported here (0): */
    if (sa.policy == SCHED_FIFO || sa.policy == SCHED_RR) {
      errno = 0;
      int nice = getpriority(PRIO_PROCESS, 0);
      if (errno == 0) t->nice = nice;
    }
  } else {
    struct sched_param sp;
    int policy = sched_getscheduler(0);
    if (policy >= 0) t->policy = policy & ~SCHED_RESET_ON_FORK;
    if (sched_getparam(0, &sp) == 0) t->priority = sp.sched_priority;
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0); /* per thread on Linux */
    if (errno == 0) t->nice = nice;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    memcpy(t->affinity, &set, sizeof t->affinity < sizeof set ? sizeof t->affinity : sizeof set);
}

/* Every CPU the machine has: a creator with this mask is unrestricted. */
static uint64_t all_cpus[4];

static bool same_cpus(const uint64_t *a, const uint64_t *b) {
  return !memcmp(a, b, sizeof all_cpus);
}

/* The kernel gives a new thread its creating thread's name, policy,
 * priority, nice and CPU mask, and glibc changes them before it runs only
 * where attr asks: copied from the creator's record, the child makes no
 * system call for them. Left to the child (attrs_known false) where the
 * record cannot tell: explicit scheduling in attr; a real-time creator or
 * one at a negative nice (SCHED_RESET_ON_FORK, which the record does not
 * keep, would change those); a restricted creator and an attr whose mask
 * reads as every CPU (glibc reads a mask never set that way too). */
void tm_thread_inherit(tm_thread *child, const tm_thread *creator, const pthread_attr_t *attr) {
  pthread_attr_t defaults;
  if (!attr) {
    /* glibc's pthread_create reads the same defaults (pthread_setattr_default_np). */
    if (pthread_getattr_default_np(&defaults) != 0) return;
    attr = &defaults;
  }
  int inherit = PTHREAD_EXPLICIT_SCHED;
  cpu_set_t set;
  bool known = pthread_attr_getinheritsched(attr, &inherit) == 0 &&
               inherit == PTHREAD_INHERIT_SCHED &&
               pthread_attr_getaffinity_np(attr, sizeof set, &set) == 0 &&
               (creator->policy == SCHED_OTHER || creator->policy == SCHED_BATCH ||
                creator->policy == SCHED_IDLE) &&
               creator->nice >= 0;
  if (attr == &defaults) pthread_attr_destroy(&defaults);
  if (!known) return;
  uint64_t mask[4];
  memcpy(mask, &set, sizeof mask);
  bool every = true;
  for (size_t i = 0; i < sizeof set / sizeof mask[0]; i++)
    if (((const uint64_t *)&set)[i] != UINT64_MAX) every = false;
  if (every) {
    if (!same_cpus(creator->affinity, all_cpus)) return;
    memcpy(mask, creator->affinity, sizeof mask);
  }
  memcpy(child->name, creator->name, sizeof child->name);
  child->policy = creator->policy;
  child->priority = creator->priority;
  child->nice = creator->nice;
  memcpy(child->affinity, mask, sizeof child->affinity);
  child->attrs_known = true;
}

/* Offset of the thread id in glibc's struct pthread, from its description
 * for libthread_db ({bits, count, offset}, GLIBC_PRIVATE); -1 unknown.
 * The kernel writes it before a new thread runs (CLONE_PARENT_SETTID), so
 * a created thread reads its tid there instead of a gettid system call.
 * Trusted only if it reads the constructor's thread's tid right. */
static long tcb_tid_offset = -1;

static void find_tcb_tid(void) {
  const uint32_t *d = dlvsym(RTLD_DEFAULT, "_thread_db_pthread_tid", "GLIBC_PRIVATE");
  if (!d || d[0] != 32 || d[1] != 1 || d[2] > 4096) return;
  pid_t tid;
  memcpy(&tid, (const char *)pthread_self() + d[2], sizeof tid);
  if (tid == gettid()) tcb_tid_offset = d[2];
}

/* A created thread's tid, from glibc's thread descriptor when known. */
static uint32_t own_tid(bool created) {
  if (created && tcb_tid_offset >= 0) {
    pid_t tid;
    memcpy(&tid, (const char *)pthread_self() + tcb_tid_offset, sizeof tid);
    return (uint32_t)tid;
  }
  return (uint32_t)gettid();
}

/* created: it runs the trampoline of a pthread_create, so it is not the
 * main thread (no getpid for every new thread). */
static void attach_common(tm_thread *t, bool created) {
  int saved = errno;
  set_tid(t, own_tid(created));
  t->is_main = !created && t->tid == (uint32_t)getpid();
  uint64_t first_run = tm_now_ns();
  tm_thread_set_handle(t, (uintptr_t)pthread_self());
  if (!t->attrs_known) read_sched_attrs(t);
  tm_push_state(t, TM_STATE_RUNNING, 0, 0, 0, first_run);
  tm_self = t;
  self_done = false;
  atomic_store_explicit(&t->slot_state, TM_SLOT_LIVE, memory_order_release);
  tm_thread_touch(t);
  errno = saved;
}

tm_thread *tm_thread_claim(void *start_routine, void *start_arg, uint32_t creator_tid) {
  tm_thread *t = slot_claim();
  if (!t) return NULL;
  /* Its life starts when it is asked for: a new thread may wait long for
   * its first CPU (under real-time threads, seconds), and that wait is
   * run-queue time the views must show. */
  t->start_ns = tm_now_ns();
  t->start_routine = start_routine;
  t->start_arg = start_arg;
  t->creator_tid = creator_tid;
  return t;
}

void tm_thread_attach(tm_thread *t) { attach_common(t, true); }

void tm_thread_unclaim(tm_thread *t) { slot_free(t); }

tm_thread *tm_thread_register_self(void *start_routine, uint32_t creator_tid) {
  if (tm_self) return tm_self;
  tm_thread *t = tm_thread_claim(start_routine, NULL, creator_tid);
  if (t) attach_common(t, false);
  return t;
}

tm_thread *tm_thread_register_lazy(void) {
  if (tm_self) return tm_self;
  if (self_done) return NULL;
  int saved = errno;
  uint32_t tid = (uint32_t)gettid();
  errno = saved;
  /* The sampler may have registered this thread from /proc already: adopt
   * that record (tids are unique among live threads). */
  tm_thread *found = tm_thread_by_tid(tid);
  if (found && atomic_load_explicit(&found->slot_state, memory_order_acquire) == TM_SLOT_LIVE) {
    tm_self = found;
    return found;
  }
  return tm_thread_register_self(NULL, 0);
}

tm_thread *tm_thread_register_foreign(uint32_t tid) {
  tm_thread *t = slot_claim();
  if (!t) return NULL;
  set_tid(t, tid);
  t->is_main = tid == (uint32_t)getpid();
  t->start_ns = tm_now_ns();
  atomic_store_explicit(&t->slot_state, TM_SLOT_LIVE, memory_order_release);
  tm_thread_touch(t);
  return t;
}

void tm_thread_mark_exited(tm_thread *t) {
  int expected = TM_SLOT_LIVE;
  uint64_t now = tm_now_ns();
  if (tm_self == t) {
    /* Its CPU clock at the end: the sampler cannot read it once it is gone,
     * and without it the time since its last sample cannot be checked for
     * hypervisor steal. */
    int saved = errno;
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
      atomic_store_explicit(&t->end_cpu_ns,
                            (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                            memory_order_relaxed);
    errno = saved;
    tm_push_state(t, TM_STATE_EXITED, 0, 0, 0, now);
    tm_self = NULL;
    self_done = true;
  }
  atomic_store_explicit(&t->end_ns, now, memory_order_relaxed);
  /* Last touch of the slot: the sampler may recycle it right after. */
  atomic_compare_exchange_strong_explicit(&t->slot_state, &expected, TM_SLOT_EXITED,
                                          memory_order_release, memory_order_relaxed);
  tm_thread_touch(t);
}

/* A rename and the seal each announce themselves, then look at the other's
 * word (both sequentially consistent): either the rename sees SEALED and
 * gives up, or the seal sees it in progress and waits the few instructions
 * it takes. */
bool tm_thread_rename_ended(uintptr_t handle, const char *name) {
  tm_thread *tab = atomic_load_explicit(&table, memory_order_acquire);
  if (!tab || !handle) return false;
  /* glibc hands a joined thread's pthread_t to the next thread: of the
   * ended records with this handle, the program means the newest. */
  tm_thread *newest = NULL;
  uint32_t hw = tm_threads_high_water();
  for (uint32_t i = 0; i < hw; i++) {
    if (atomic_load_explicit(&slot_handle[i], memory_order_acquire) != handle) continue;
    tm_thread *t = &tab[i];
    if (atomic_load(&t->slot_state) == TM_SLOT_EXITED && (!newest || t->start_ns > newest->start_ns))
      newest = t;
  }
  if (!newest) return false;
  atomic_store(&newest->renaming, 1);
  bool ok = atomic_load(&newest->slot_state) == TM_SLOT_EXITED &&
            atomic_load_explicit(&newest->handle, memory_order_relaxed) == handle;
  if (ok) {
    strncpy(newest->name, name, TM_NAME_BYTES - 1);
    newest->name[TM_NAME_BYTES - 1] = '\0';
    atomic_fetch_add_explicit(&newest->attr_version, 1, memory_order_release);
    tm_thread_touch(newest);
  }
  atomic_store(&newest->renaming, 0);
  return ok;
}

void tm_thread_seal(tm_thread *t) {
  int expected = TM_SLOT_EXITED;
  if (!atomic_compare_exchange_strong(&t->slot_state, &expected, TM_SLOT_SEALED)) return;
  while (atomic_load(&t->renaming)) tm_yield();
}

void tm_thread_release(tm_thread *t) {
  if (atomic_load_explicit(&t->slot_state, memory_order_acquire) == TM_SLOT_SEALED) slot_free(t);
}

static uintptr_t key_at(const void *keys, size_t width, uint32_t i) {
  return width == sizeof(uintptr_t)
             ? atomic_load_explicit(&((_Atomic uintptr_t *)keys)[i], memory_order_acquire)
             : atomic_load_explicit(&((_Atomic uint32_t *)keys)[i], memory_order_acquire);
}

/* Slot i's record if it holds key (its own field confirms it: the slot may
 * be reused between the two reads) and is LIVE or CLAIMED. */
static tm_thread *live_at(tm_thread *tab, size_t width, uint32_t i, uintptr_t key) {
  tm_thread *t = &tab[i];
  int st = atomic_load_explicit(&t->slot_state, memory_order_acquire);
  if (st != TM_SLOT_LIVE && st != TM_SLOT_CLAIMED) return NULL;
  uintptr_t own = width == sizeof(uintptr_t)
                      ? atomic_load_explicit(&t->handle, memory_order_relaxed)
                      : (uintptr_t)t->tid;
  return own == key ? t : NULL;
}

/* The LIVE or CLAIMED record whose key (in keys, 8 or 4 bytes wide) is
 * key. When the hinted slot holds key, it is the newest record with it
 * (keys are set as threads start), so its answer stands, a thread that
 * ended (NULL) included. */
static tm_thread *find_live(const void *keys, size_t width, _Atomic uint32_t *hints,
                            uintptr_t key) {
  tm_thread *tab = atomic_load_explicit(&table, memory_order_acquire);
  if (!tab || !key) return NULL;
  uint32_t hw = tm_threads_high_water();
  uint32_t h = atomic_load_explicit(&hints[hint_of(key)], memory_order_acquire);
  if (h && h - 1 < hw && key_at(keys, width, h - 1) == key) return live_at(tab, width, h - 1, key);
  for (uint32_t i = 0; i < hw; i++) {
    if (key_at(keys, width, i) != key) continue;
    tm_thread *t = live_at(tab, width, i, key);
    if (t) return t;
  }
  return NULL;
}

tm_thread *tm_thread_by_handle(uintptr_t handle) {
  tm_thread *self = tm_self;
  if (self && atomic_load_explicit(&self->handle, memory_order_relaxed) == handle) return self;
  return find_live(slot_handle, sizeof(uintptr_t), handle_hint, handle);
}

tm_thread *tm_thread_by_tid(uint32_t tid) {
  tm_thread *self = tm_self;
  if (self && self->tid == tid) return self;
  return find_live(slot_tid, sizeof(uint32_t), tid_hint, tid);
}

/* One ring's push, for both layouts (mask: events - 1). Near full it drops
 * and counts, and the ring's last free slot gets `lost` (a state event
 * with nothing else) at the first lost change, so that readers see where
 * the gap begins. */
static inline void push_raw(tm_thread *self, _Atomic uint64_t *headp, _Atomic uint64_t *tailp,
                            _Atomic uint64_t *droppedp, tm_event *ev, uint64_t mask,
                            uint32_t lost, uint32_t state, uint32_t object_id,
                            uint32_t holder_tid, uint32_t releaser_tid, uint64_t time_ns) {
  uint64_t head = atomic_load_explicit(headp, memory_order_relaxed);
  uint64_t tail = atomic_load_explicit(tailp, memory_order_acquire);
  if (TM_UNLIKELY(head - tail >= mask)) {
    /* Only this thread writes dropped: no locked instruction needed. */
    atomic_store_explicit(droppedp, atomic_load_explicit(droppedp, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    if (head - tail > mask) {
      tm_thread_touch(self); /* cur_state moved: the sampler must look */
      return;
    }
    /* Without the marker the state before the gap (a wait, say) would seem
     * to last until the next event that fits, and its holder would seem to
     * hold the lock all along. */
    state = lost;
    object_id = holder_tid = releaser_tid = 0;
  }
  tm_event *e = &ev[head & mask];
  e->time_ns = time_ns;
  e->state = state;
  e->object_id = object_id;
  e->holder_tid = holder_tid;
  e->releaser_tid = releaser_tid;
  atomic_store_explicit(headp, head + 1, memory_order_release);
  tm_thread_touch(self);
}

/* One writer (the thread): a load and a store, no locked instruction. */
static inline void fold_add(_Atomic uint64_t *v, uint64_t d) {
  atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + d,
                        memory_order_relaxed);
}

/* The folded state open since fold_from ends at time_ns. */
static void fold_close(tm_thread *self, uint64_t time_ns) {
  uint64_t from = atomic_load_explicit(&self->fold_from, memory_order_relaxed);
  uint32_t s = atomic_load_explicit(&self->fold_state, memory_order_relaxed);
  if (time_ns > from && s < TM_FOLD_STATES) fold_add(&self->fold_ns[s], time_ns - from);
  atomic_store_explicit(&self->fold_from, 0, memory_order_release);
}

void tm_push_state(tm_thread *self, uint32_t state, uint32_t object_id, uint32_t holder_tid,
                   uint32_t releaser_tid, uint64_t time_ns) {
  tm_ring *r = &self->ring;
  self->cur_state = state;
  uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
  if (head == tail) ring_take_growth(r);
  tm_event *ev = atomic_load_explicit(&r->ev, memory_order_relaxed);
  uint64_t mask = atomic_load_explicit(&r->mask, memory_order_relaxed);
  if (TM_LIKELY(head - tail < mask)) {
    /* Room again after a gap: the folded state ends here. */
    if (TM_UNLIKELY(atomic_load_explicit(&self->fold_from, memory_order_relaxed)))
      fold_close(self, time_ns);
    push_raw(self, &r->head, &r->tail, &r->dropped, ev, mask, TM_STATE_UNKNOWN, state, object_id,
             holder_tid, releaser_tid, time_ns);
    return;
  }
  /* Full: the state it leaves is counted, the change itself folded. The
   * first folded change takes the last slot as the gap's marker. */
  if (atomic_load_explicit(&self->fold_from, memory_order_relaxed)) fold_close(self, time_ns);
  atomic_store_explicit(&self->fold_state, state, memory_order_relaxed);
  atomic_store_explicit(&self->fold_from, time_ns ? time_ns : 1, memory_order_release);
  fold_add(&self->folded, 1);
  if (head - tail == mask) {
    tm_event *e = &ev[head & mask];
    *e = (tm_event){.time_ns = time_ns, .state = TM_STATE_UNKNOWN};
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
  }
  tm_thread_touch(self);
}

uint64_t tm_thread_folded(const tm_thread *t, uint64_t now_ns, uint64_t *out) {
  uint64_t from = atomic_load_explicit(&t->fold_from, memory_order_acquire);
  uint32_t s = atomic_load_explicit(&t->fold_state, memory_order_relaxed);
  for (int i = 0; i < TM_FOLD_STATES; i++)
    out[i] = atomic_load_explicit(&t->fold_ns[i], memory_order_relaxed);
  if (from && now_ns > from && s < TM_FOLD_STATES && s != TM_STATE_EXITED)
    out[s] += now_ns - from;
  return atomic_load_explicit(&t->folded, memory_order_relaxed);
}

/* The thread's uring, mapped on its first user-thread event (the one
 * syscall, once per slot). */
static tm_uring *uring_of(tm_thread *self) {
  tm_uring *u = atomic_load_explicit(&self->uring, memory_order_relaxed);
  if (TM_LIKELY(u != NULL)) return u;
  int saved = errno;
  void *p = mmap(NULL, sizeof(tm_uring), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  errno = saved;
  if (p == MAP_FAILED) return NULL;
  atomic_store_explicit(&self->uring, (tm_uring *)p, memory_order_release);
  return p;
}

void tm_push_event(tm_thread *self, uint32_t kind, uint32_t to_id, uint32_t from_id,
                   uint64_t time_ns) {
  tm_uring *u = uring_of(self);
  if (TM_LIKELY(u != NULL)) {
    /* The sampler read these lines last, on another CPU: fetch the line a
     * few events ahead now, so that its transfer overlaps the program's
     * next switch (a system call) instead of stalling the next event. */
    __builtin_prefetch(&u->ev[(atomic_load_explicit(&u->head, memory_order_relaxed) + 4) &
                              (TM_URING_EVENTS - 1)],
                       1, 3);
    push_raw(self, &u->head, &u->tail, &u->dropped, u->ev, TM_URING_EVENTS - 1, TM_EV_USER_LOST,
             kind, to_id, from_id, 0, time_ns);
    return;
  }
  tm_ring *r = &self->ring; /* no memory for it: the main ring, its marker */
  push_raw(self, &r->head, &r->tail, &r->dropped, atomic_load_explicit(&r->ev, memory_order_relaxed),
           atomic_load_explicit(&r->mask, memory_order_relaxed), TM_STATE_UNKNOWN, kind, to_id,
           from_id, 0, time_ns);
}

static uint32_t drain_raw(_Atomic uint64_t *tailp, uint64_t tail, uint64_t head,
                          const tm_event *ev, uint64_t mask, tm_event *out, uint32_t max) {
  uint64_t avail = head - tail;
  uint32_t n = avail < max ? (uint32_t)avail : max;
  for (uint32_t i = 0; i < n; i++) out[i] = ev[(tail + i) & mask];
  atomic_store_explicit(tailp, tail + n, memory_order_release);
  return n;
}

uint32_t tm_uring_drain(tm_uring *r, tm_event *out, uint32_t max) {
  uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
  return drain_raw(&r->tail, tail, head, r->ev, TM_URING_EVENTS - 1, out, max);
}

uint32_t tm_ring_drain(tm_ring *r, tm_event *out, uint32_t max) {
  uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
  /* After the head: a grown ring is published with it. */
  return drain_raw(&r->tail, tail, head, atomic_load_explicit(&r->ev, memory_order_relaxed),
                   atomic_load_explicit(&r->mask, memory_order_relaxed), out, max);
}

TM_HOT bool tm_threads_fork_lazily;
static tm_thread *lazy_self; /* the forking thread's record, while the child is lazy */
static bool lazy_reset_pending;

static void reset_for_child(tm_thread *self);

void tm_threads_atfork_child(void) {
  if (tm_threads_fork_lazily) {
    if (tm_self) lazy_self = tm_self; /* a lazy process's child keeps its parent's */
    tm_self = NULL;
    lazy_reset_pending = true;
    return;
  }
  reset_for_child(tm_self);
}

void tm_threads_lazy_fork_done(void) {
  if (!lazy_reset_pending) return;
  lazy_reset_pending = false;
  tm_self = lazy_self;
  reset_for_child(lazy_self);
}

static void reset_for_child(tm_thread *self) {
  tm_thread *tab = atomic_load_explicit(&table, memory_order_acquire);
  if (!tab) return;
  atomic_store_explicit(&free_top, 0, memory_order_relaxed);
  uint32_t hw = tm_threads_high_water();
  for (uint32_t i = hw; i-- > 0;) {
    tm_thread *t = &tab[i];
    if (t == self) continue;
    if (atomic_load_explicit(&t->slot_state, memory_order_relaxed) != TM_SLOT_FREE)
      ring_ungrow(t, i);
    atomic_store_explicit(&t->slot_state, TM_SLOT_FREE, memory_order_relaxed);
    free_push(i);
  }
  if (self) {
    /* Pre-fork events belong to the parent's stream. */
    atomic_store_explicit(&self->ring.tail, atomic_load_explicit(&self->ring.head, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&self->ring.dropped, 0, memory_order_relaxed);
    for (int i = 0; i < TM_FOLD_STATES; i++)
      atomic_store_explicit(&self->fold_ns[i], 0, memory_order_relaxed);
    atomic_store_explicit(&self->folded, 0, memory_order_relaxed);
    atomic_store_explicit(&self->fold_from, 0, memory_order_relaxed);
    uring_reset(self);
    set_tid(self, (uint32_t)gettid());
    self->is_main = true;
    self->start_ns = tm_now_ns();
    tm_push_state(self, self->cur_state ? self->cur_state : TM_STATE_RUNNING, 0, 0, 0,
                  self->start_ns);
  }
}

void tm_threads_machine_init(void) {
  long n = sysconf(_SC_NPROCESSORS_CONF);
  for (long c = 0; c < n && c < 256; c++) all_cpus[c / 64] |= 1ull << (c % 64);
  find_tcb_tid();
}

__attribute__((constructor(101))) static void threads_init(void) {
  /* A lazy image (life/session.c) calls it when its session starts. */
  if (!tm_config_lazy_image()) tm_threads_machine_init();
  pthread_atfork(NULL, NULL, tm_threads_atfork_child);
}
