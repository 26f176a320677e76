#include "sampler.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hidden.h"
#include "perf_counters.h"
#include "probe.h"
#include "procfs.h"
#include "sites.h"
#include "stdthread.h"
#include "symbolize.h"
#include "userthreads.h"

/* A std::thread's routine is a mangled _State_impl<...>::_M_run name,
 * often over 160 bytes. */
#define TM_START_ROUTINE_BYTES 512
#define RESCAN_NS 1000000000ull  /* /proc/self/task listing: ~1 s */
/* ... but only when the kernel's thread count is not the number of threads
 * known (or every RESCAN_QUIET_NS anyway: one thread appearing as another
 * vanishes unseen): listing 10,000 threads costs ~3 ms, reading the count
 * a few microseconds. */
#define RESCAN_QUIET_NS 10000000000ull
#define STATUS_EVERY 10          /* ticks between status reads per thread */
/* Perf software counters duplicate schedstat and stat (task clock, faults)
 * and no view needs them per tick: a thread's are opened and read on every
 * PERF_EVERY-th read that finds it moved (they lag by at most that many
 * runs; a thread that runs fewer times never has them). */
#define PERF_EVERY 8
/* ... and only for threads that used this much CPU: a thread that wakes for
 * microseconds has nothing for cycle counts to say. */
#define PERF_MIN_CPU_NS 20000000ull
/* stat (user/system time, faults, state, CPU) is the costliest file a
 * thread's read takes, most of it formatting fields we do not use. With
 * switch records its state and CPU come from the records; the times and
 * faults are read on every STAT_EVERY-th read that finds it moved, once it
 * ran STAT_CPU_NS since the last, when it blocked after running
 * STAT_BLOCKED_CPU_NS, and whenever it blocked outside wrapped calls
 * (asleep, in I/O or stopped: only stat tells which). */
#define STAT_EVERY 8
#define STAT_CPU_NS 40000000ull
#define STAT_BLOCKED_CPU_NS 1000000ull
/* /proc/stat costs as much as the rest of a quiet tick (most of it summing
 * interrupt counts we do not use) and moves in scheduler ticks anyway:
 * read it about every CPUSTAT_NS; the display interpolates between. */
#define CPUSTAT_NS 50000000ull
/* A thread that only wakes for moments (under LIGHT_RAN_NS on a CPU since
 * its last read, blocked in a wrapped call) is read LIGHT_SETTLE_NS after
 * its last wake-up, or every LIGHT_REREAD_NS while it keeps waking:
 * reading it at every wake-up was most of what a program of many mostly
 * idle threads cost the sampler, and at 200 ms 1,000 threads waking every
 * 100 ms still cost 5,000 reads a second. One that comes to rest is read
 * soon after (within 200 ms of its last record, as when every light
 * thread was read every 200 ms), so its counters are right while it rests. */
#define LIGHT_RAN_NS 1000000ull
#define LIGHT_SETTLE_NS 150000000ull
#define LIGHT_REREAD_NS 1000000000ull
/* Without switch records (none, or stopped by the rate limit) the wrappers'
 * events are what says a thread ran: a thread blocked in a wrapped call
 * that pushed no event since a read made while it was in that call has
 * not left it. What it owns can only move by wake-ups inside the call
 * (a cond wait's spurious futex wake-ups): read again every IDLE_REREAD_NS
 * at most. One that left the call only for moments (under LIGHT_RAN_NS,
 * timed by its events, wall time) is read like one with records, every
 * LIGHT_REREAD_NS at most. Reading every thread every tick made 5,000
 * mostly sleeping threads cost 90% of a core once records stopped. */
#define IDLE_REREAD_NS 10000000000ull
/* ... and without records a light thread's stat and status are read on
 * every LIGHT_FULL_EVERY-th of those reads only (schedstat on the others):
 * with records 10,000 light threads would switch 200,000 times a second,
 * over the rate limit, so this is how they are read, and at 200 ms with
 * every file it cost 35% of a core (5,000 threads; most files opened per
 * read once the descriptor budget is used). The states stay exact (the
 * wrappers' events); the counters of a thread that keeps waking for
 * moments lag by up to LIGHT_REREAD_NS, its context switch counts and its
 * CPU time's split into user and system by up to 4 s. */
#define LIGHT_FULL_EVERY 4
#define DRAIN_CHUNK 256
#define BATCH_MAX 16384          /* entries per Transitions/CpuSwitches frame */
#define STACK_MAX 8
#define READ_BYTES 4096          /* status is ~1.4 KB: its ctxt lines come last */
#define PENDING_TICKS 500        /* records of a tid not (yet) ours, kept ~5 s */

/* ---- per-thread sampler state ----
 *
 * What a tick reads for a thread depends on what the PERF_RECORD_SWITCH
 * records say it did since the last tick:
 *   READ_ALL   it ran (records this tick), is on a CPU (last record IN),
 *              or we cannot tell: schedstat, and when that moved stat, perf
 *              counters and (outside wrapped calls, asleep) syscall;
 *   READ_QUEUE preempted and not run since (last record OUT_PREEMPT): only
 *              its runqueue wait can move (the kernel adds it when the
 *              thread runs or is migrated while queued), schedstat alone;
 *   READ_NONE  blocked and not run since (last record a voluntary OUT):
 *              nothing it owns moved, no read at all.
 * The context switch counts come from the records too, on top of one
 * status read when the thread is first seen (or after records were lost).
 * After lost records every thread is read in full until a record or its
 * kernel state (not R) says where it is again. The kernel writes no record
 * for a thread's last switch-out (perf_switch.h): an ended thread stays
 * READ_ALL until its slot is released. Events in a thread's ring, its
 * dropped count and the objects it uses only change while it runs, so the
 * walk drains rings only for READ_ALL threads and skips the object walk
 * when no program thread ran. The final tick (on the thread that ends the
 * session) reads everything.
 * Threads without records (created before the events were opened, e.g.
 * after a failed exec, or no switch source at all) are read every tick,
 * status only after they ran: at once when they were switched often since
 * the last (see read_status's caller), else every STATUS_EVERY ticks. */

enum { SW_UNKNOWN = -1 }; /* no usable record: treat as running */
enum { READ_NONE, READ_QUEUE, READ_ALL };

typedef struct tm_sampler_thread {
  /* What the walk reads of an idle thread every tick: one cache line. */
  tm_thread *owner;
  uint32_t tid;
  uint32_t attr_sent;
  uint64_t sw_tick;      /* tick whose drain had a record of it */
  uint64_t futex_addr;
  uint32_t asleep_syscall; /* LwpSample.asleep_syscall last sent */
  uint64_t yields;         /* LwpSample.yields last sent */
  int sw_kind;           /* latest record's TM_SWITCH_*, or SW_UNKNOWN */
  bool covered;          /* its switches reach our rings (a record was seen) */
  bool have_sched, have_stat;
  bool status_base;      /* vol/invol hold a status read (else read one) */
  bool status_dirty;     /* ran since the last status read (no records) */
  bool pc_open;
  uint32_t slot;
  /* The rest: threads that ran, and records. */
  uint64_t sw_time;      /* of the latest record (rings drain CPU by CPU) */
  uint64_t vol, invol;
  uint64_t ctx_after_ns; /* records up to this time are in vol/invol already */
  uint64_t status_tick;  /* tick of the last status read */
  uint64_t status_slices; /* schedstat's count of times on a CPU at that read */
  uint32_t moved_reads;  /* reads that found it had run (perf counters: every PERF_EVERY) */
  int sw_cpu;            /* CPU of the latest record, -1 before one */
  bool born_covered;     /* every switch of its life is in the records */
  bool read_on_cpu;      /* its last full read was planned from a switch-in record */
  uint64_t met_tick;     /* tick the walk first met it in */
  uint64_t in_time;      /* its latest switch-in not yet matched by a switch-out */
  uint64_t ran_ns;       /* on a CPU by the records since its last read */
  uint64_t read_tick;    /* tick of its last read */
  uint64_t stat_oncpu_ns; /* its CPU time at the last stat read */
  bool stat_blocked;      /* that read was made with it blocked by its records */
  uint64_t syscall_ns;   /* when the last full read looked at its syscall */
  uint64_t dropped;      /* ring.dropped as last seen */
  uint64_t udropped;     /* uring->dropped as last seen */
  uint64_t read_head;    /* ring head at its last read, in a wrapped call; else UINT64_MAX */
  uint64_t ev_run_from;  /* its latest drained RUNNING event, 0 after a blocking one */
  uint64_t ev_ran_ns;    /* outside wrapped calls by its events since its last read */
  uint64_t ev_tick;      /* tick whose drain had an event of it */
  uint64_t last_time;    /* its latest transition drained: a capture gap */
  uint32_t last_obj;     /* that lost it is followed by it again */
  int last_state;
  struct tm_sampler_thread *next, **pprev; /* every live state */
  tm_task_sched sched;
  tm_task_stat stat;
  tm_perf_values pv;
  tm_task_fds fds;
  tm_perf_counters pc;
  char *routine; /* start routine's name once sent (routine_name) */
} tm_sampler_thread;

_Static_assert(offsetof(tm_sampler_thread, slot) + sizeof(uint32_t) <= 64,
               "the fields an idle thread costs per tick fit one cache line");

static tm_sampler_thread *all_states;
static uint32_t states_count;
/* By registry slot: the walk reads these instead of tm_thread.sampler,
 * which sits behind the ~24 KB event ring of every record. */
static tm_sampler_thread **slot_states;
static uint32_t slot_states_cap;
static uint64_t tick_no;       /* ticks run, the first is 1 */
static uint64_t sampler_started_ns; /* switch records cover threads born after it */
static uint64_t live_dropped;  /* sum of dropped over live states */
static uint32_t probe_tid;     /* the sampler thread's tid, for on_switch */
static bool program_ran;       /* a program thread ran or may have: objects moved */
static TM_TLS __thread bool on_sampler_thread;
static bool final_tick; /* the session's last tick, wherever it runs */

/* ---- tid -> state, and records of tids that have no state yet ----
 * Open addressing with linear probing; deletion shifts back. An entry
 * without state remembers the latest record of a thread the walk has not
 * met yet (started since the last walk, or foreign), so that it is known to
 * be covered when its state is made. */

typedef struct tid_entry {
  uint32_t tid; /* 0 = empty */
  int kind, cpu;
  uint64_t time_ns, tick;
  /* Switch-outs seen before the walk met it; complete (from its birth)
   * unless records were lost meanwhile. */
  uint32_t vol, invol;
  bool counts_lost;
  tm_sampler_thread *st;
} tid_entry;

static tid_entry *tids;
static uint32_t tids_cap, tids_used;

static uint32_t tid_hash(uint32_t tid) { return (tid * 0x9E3779B1u) & (tids_cap - 1); }

static tid_entry *tid_find(uint32_t tid) {
  if (!tids_cap || !tid) return NULL;
  for (uint32_t i = tid_hash(tid);; i = (i + 1) & (tids_cap - 1)) {
    if (tids[i].tid == tid) return &tids[i];
    if (!tids[i].tid) return NULL;
  }
}

static bool tids_grow(void) {
  uint32_t cap = tids_cap ? tids_cap * 2 : 256;
  tid_entry *old = tids, *t = calloc(cap, sizeof *t);
  if (!t) return false;
  uint32_t old_cap = tids_cap;
  tids = t;
  tids_cap = cap;
  for (uint32_t i = 0; i < old_cap; i++) {
    if (!old[i].tid) continue;
    uint32_t j = tid_hash(old[i].tid);
    while (tids[j].tid) j = (j + 1) & (cap - 1);
    tids[j] = old[i];
  }
  free(old);
  return true;
}

/* Finds or adds (empty, kind SW_UNKNOWN); NULL when out of memory. */
static tid_entry *tid_get(uint32_t tid) {
  if (!tid) return NULL;
  tid_entry *e = tid_find(tid);
  if (e) return e;
  if ((tids_used + 1) * 2 > tids_cap && !tids_grow()) return NULL;
  uint32_t i = tid_hash(tid);
  while (tids[i].tid) i = (i + 1) & (tids_cap - 1);
  tids[i] = (tid_entry){.tid = tid, .kind = SW_UNKNOWN};
  tids_used++;
  return &tids[i];
}

static void tid_remove(tid_entry *e) {
  uint32_t i = (uint32_t)(e - tids), mask = tids_cap - 1;
  /* Backward shift: move up every later entry of the run that may sit
   * before its home slot, so no probe sequence is broken. */
  for (uint32_t j = (i + 1) & mask; tids[j].tid; j = (j + 1) & mask) {
    uint32_t home = tid_hash(tids[j].tid);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      tids[i] = tids[j];
      i = j;
    }
  }
  tids[i].tid = 0;
  tids[i].st = NULL;
  tids_used--;
}

/* Drops records of tids that never got a state (threads that left before
 * the walk met them, foreign ones not adopted). */
static void tids_prune(void) {
  for (uint32_t i = 0; i < tids_cap;) {
    tid_entry *e = &tids[i];
    if (e->tid && !e->st && e->tick + PENDING_TICKS < tick_no) {
      tid_remove(e); /* may shift a later entry into i: look again */
      continue;
    }
    i++;
  }
}

/* ---- per-object sampler state, indexed like the object table ---- */

typedef struct obj_sent {
  uint64_t acq, cont, wait, max_wait, hold, hold_samples, wait_samples;
} obj_sent;

static obj_sent *obj_state;
static uint32_t obj_state_cap;

/* ---- growable batches ---- */

typedef struct batch {
  uint64_t base, last;
  size_t n, cap;
  uint32_t *tid, *obj, *holder, *releaser;
  int64_t *delta;
  int *state; /* ThreadState or SwitchKind */
} batch;

static bool batch_push(batch *b, uint64_t t, uint32_t tid, int state, uint32_t obj,
                       uint32_t holder, uint32_t releaser) {
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 1024;
    /* Arrays already grown keep their new size: harmless, cap stays. */
#define BATCH_GROW(field)                                        \
  do {                                                           \
    void *p_ = realloc(b->field, cap * sizeof *b->field);        \
    if (!p_) return false;                                       \
    b->field = p_;                                               \
  } while (0)
    BATCH_GROW(tid);
    BATCH_GROW(obj);
    BATCH_GROW(holder);
    BATCH_GROW(releaser);
    BATCH_GROW(delta);
    BATCH_GROW(state);
#undef BATCH_GROW
    b->cap = cap;
  }
  if (b->n == 0) b->base = b->last = t;
  b->delta[b->n] = (int64_t)(t - b->last);
  b->last = t;
  b->tid[b->n] = tid;
  b->state[b->n] = state;
  b->obj[b->n] = obj;
  b->holder[b->n] = holder;
  b->releaser[b->n] = releaser;
  b->n++;
  return true;
}

static void batch_free(batch *b) {
  free(b->tid);
  free(b->obj);
  free(b->holder);
  free(b->releaser);
  free(b->delta);
  free(b->state);
  *b = (batch){0};
}

static batch transitions, switches;

/* ---- sample arrays of the Tick frame ---- */

static Threadmon__LwpSample *lwps;
static Threadmon__LwpSample **lwp_ptrs;
static size_t lwp_n, lwp_cap;
static Threadmon__SyncStats *syncs;
static Threadmon__SyncStats **sync_ptrs;
static size_t sync_n, sync_cap;

static Threadmon__LwpSample *lwp_add(void) {
  if (lwp_n == lwp_cap) {
    size_t cap = lwp_cap ? lwp_cap * 2 : 64;
    Threadmon__LwpSample *a = realloc(lwps, cap * sizeof *a);
    if (!a) return NULL;
    lwps = a;
    Threadmon__LwpSample **p = realloc(lwp_ptrs, cap * sizeof *p);
    if (!p) return NULL;
    lwp_ptrs = p;
    lwp_cap = cap;
  }
  Threadmon__LwpSample *l = &lwps[lwp_n++];
  threadmon__lwp_sample__init(l);
  return l;
}

static Threadmon__SyncStats *sync_add(void) {
  if (sync_n == sync_cap) {
    size_t cap = sync_cap ? sync_cap * 2 : 64;
    Threadmon__SyncStats *a = realloc(syncs, cap * sizeof *a);
    if (!a) return NULL;
    syncs = a;
    Threadmon__SyncStats **p = realloc(sync_ptrs, cap * sizeof *p);
    if (!p) return NULL;
    sync_ptrs = p;
    sync_cap = cap;
  }
  Threadmon__SyncStats *s = &syncs[sync_n++];
  threadmon__sync_stats__init(s);
  return s;
}

/* ---- emitting ---- */

void tm_emit(tm_session *s, const Threadmon__Frame *f, int to) {
  size_t len = tm_encode_frame(&s->enc, f);
  if (len) tm_transport_send(&s->tx, s->enc.buf, len, to);
}

void tm_emit_notice(tm_session *s, const char *text, int to) {
  Threadmon__Notice n = THREADMON__NOTICE__INIT;
  n.time_ns = tm_now_ns();
  n.text = (char *)text;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_NOTICE;
  f.notice = &n;
  tm_emit(s, &f, to);
}

/* The start routine's name, made once per thread and kept for resends:
 * a std::thread's state can only be read while the thread lives. */
static const char *routine_name(tm_sampler_thread *st, const tm_thread *t, bool live) {
  if (st && st->routine) return st->routine;
  char routine[TM_START_ROUTINE_BYTES] = "";
  if (t->start_routine &&
      !(live && tm_std_thread_routine((uintptr_t)t->start_routine, (uintptr_t)t->start_arg,
                                      routine, sizeof routine)))
    tm_symbolize_format((uintptr_t)t->start_routine, routine, sizeof routine);
  if (st) st->routine = strdup(routine);
  return st && st->routine ? st->routine : "";
}

static void emit_thread_start(tm_session *s, const tm_thread *t, tm_sampler_thread *st, bool live,
                              int to) {
  char routine[TM_START_ROUTINE_BYTES];
  snprintf(routine, sizeof routine, "%s", routine_name(st, t, live));
  char name[TM_NAME_BYTES + 1];
  memcpy(name, t->name, TM_NAME_BYTES);
  name[TM_NAME_BYTES] = 0;
  Threadmon__ThreadStart m = THREADMON__THREAD_START__INIT;
  m.tid = t->tid;
  m.time_ns = t->start_ns;
  m.creator_tid = t->creator_tid;
  m.name = name;
  m.start_routine = routine;
  m.is_probe = t->is_probe;
  m.is_main = t->is_main;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_START;
  f.thread_start = &m;
  tm_emit(s, &f, to);
}

static void emit_thread_attr(tm_session *s, const tm_thread *t, int to) {
  char name[TM_NAME_BYTES + 1];
  memcpy(name, t->name, TM_NAME_BYTES);
  name[TM_NAME_BYTES] = 0;
  Threadmon__ThreadAttr m = THREADMON__THREAD_ATTR__INIT;
  m.tid = t->tid;
  m.time_ns = tm_now_ns();
  m.name = name;
  m.policy = t->policy;
  m.priority = t->priority;
  m.nice = t->nice;
  uint64_t aff[4];
  memcpy(aff, t->affinity, sizeof aff);
  bool all = true;
  /* Looked up once: glibc opens and reads /sys/devices/system/cpu/possible
   * for it each time, more than the rest of the frame costs. */
  static long ncpu;
  if (!ncpu) ncpu = sysconf(_SC_NPROCESSORS_CONF);
  for (long c = 0; c < ncpu && c < 256; c++)
    if (!(aff[c / 64] >> (c % 64) & 1)) all = false;
  if (!all) {
    m.n_affinity = ncpu > 192 ? 4 : ncpu > 128 ? 3 : ncpu > 64 ? 2 : 1;
    m.affinity = aff;
  }
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_ATTR;
  f.thread_attr = &m;
  tm_emit(s, &f, to);
}

static void emit_sync_object(tm_session *s, tm_object *o, bool with_stack, int to) {
  uintptr_t addr = atomic_load_explicit(&o->address, memory_order_acquire);
  tm_symbol sym;
  if (tm_symbolize(addr, &sym) < 0) sym.module[0] = sym.symbol[0] = 0;
  char frames[STACK_MAX][TM_ROUTINE_BYTES];
  char *frame_ptrs[STACK_MAX];
  Threadmon__CodeLocation locs[STACK_MAX];
  Threadmon__CodeLocation *loc_ptrs[STACK_MAX];
  size_t depth = 0;
  if (with_stack) {
    uint32_t n = o->stack_depth < STACK_MAX ? o->stack_depth : STACK_MAX;
    for (uint32_t i = 0; i < n; i++) {
      uintptr_t pc = (uintptr_t)o->first_contention_stack[i];
      tm_symbolize_format(pc, frames[i], sizeof frames[i]);
      /* Return addresses: the call's line is at pc - 1. */
      tm_code_location where = {0};
      tm_symbol at;
      if (pc && tm_symbolize(pc - 1, &at) == 0) where = at.where;
      tm_code_location_message(&where, &locs[i]);
      loc_ptrs[i] = &locs[i];
      frame_ptrs[depth++] = frames[i];
    }
  }
  Threadmon__SyncObject m = THREADMON__SYNC_OBJECT__INIT;
  m.id = o->id;
  m.kind = (Threadmon__SyncKind)o->kind;
  m.address = addr;
  m.module = sym.module;
  m.symbol = sym.symbol;
  m.first_seen_ns = o->first_seen_ns;
  m.flags = o->flags;
  m.n_first_contention_stack = depth;
  m.first_contention_stack = frame_ptrs;
  m.n_first_contention_locations = depth;
  m.first_contention_locations = loc_ptrs;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_SYNC_OBJECT;
  f.sync_object = &m;
  tm_emit(s, &f, to);
}

static void emit_transitions(tm_session *s, const batch *b, int to) {
  if (!b->n) return;
  Threadmon__Transitions m = THREADMON__TRANSITIONS__INIT;
  m.base_ns = b->base;
  m.n_tid = m.n_delta_ns = m.n_state = m.n_object_id = m.n_holder_tid = m.n_releaser_tid = b->n;
  m.tid = b->tid;
  m.delta_ns = b->delta;
  m.state = (Threadmon__ThreadState *)b->state;
  m.object_id = b->obj;
  m.holder_tid = b->holder;
  m.releaser_tid = b->releaser;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
  f.transitions = &m;
  tm_emit(s, &f, to);
}

static void flush_transitions(tm_session *s) {
  emit_transitions(s, &transitions, TM_TO_ALL);
  transitions.n = 0;
}

/* A batch holding only the sampler's own switches (its sleep and wake-up,
 * every tick) waits up to this long for company: an idle program then
 * costs one CpuSwitches write per 100 ms instead of one per tick. The
 * records and their times are the same, only sent later. */
#define SWITCH_HOLD_NS 100000000ull
static bool switches_urgent; /* the batch has a record of a program thread */
static bool switches_stopping; /* the batch is the last: the events are being closed */

static void flush_switches(tm_session *s, uint64_t now, bool all) {
  if (!switches.n && !s->perf.lost && !switches_stopping) return;
  if (!all && !switches_urgent && !s->perf.lost && switches.n < BATCH_MAX &&
      (int64_t)(now - switches.base) < (int64_t)SWITCH_HOLD_NS) /* base may be after now */
    return;
  switches_urgent = false;
  Threadmon__CpuSwitches m = THREADMON__CPU_SWITCHES__INIT;
  m.base_ns = switches.base;
  m.n_tid = m.n_delta_ns = m.n_cpu = m.n_kind = switches.n;
  m.tid = switches.tid;
  m.delta_ns = switches.delta;
  m.cpu = switches.obj;
  m.kind = (Threadmon__SwitchKind *)switches.state;
  m.lost = s->perf.lost;
  m.stopped = switches_stopping;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_SWITCHES;
  f.switches = &m;
  tm_emit(s, &f, TM_TO_ALL);
  switches.n = 0;
  s->perf.lost = 0;
}

/* ---- threads ---- */

static tm_sampler_thread *state_new(tm_thread *t, uint32_t slot) {
  if (slot >= slot_states_cap) {
    uint32_t cap = slot_states_cap ? slot_states_cap : 64;
    while (cap <= slot) cap *= 2;
    tm_sampler_thread **p = realloc(slot_states, cap * sizeof *p);
    if (!p) return NULL;
    memset(p + slot_states_cap, 0, (cap - slot_states_cap) * sizeof *p);
    slot_states = p;
    slot_states_cap = cap;
  }
  tid_entry *e = tid_get(t->tid);
  if (!e) return NULL;
  /* Cache-line aligned, so the walk's fields of an idle thread share one. */
  size_t bytes = (sizeof(tm_sampler_thread) + 63) & ~(size_t)63;
  tm_sampler_thread *st = aligned_alloc(64, bytes);
  if (!st) return NULL;
  memset(st, 0, bytes);
  st->owner = t;
  st->tid = t->tid;
  st->slot = slot;
  st->read_head = UINT64_MAX;
  tm_task_fds_init(&st->fds, t->tid);
  for (int i = 0; i < TM_PC_COUNT; i++) st->pc.fd[i] = -1;
  /* Records drained before the walk met it: it is covered, and the latest
   * one says whether it is on a CPU. */
  st->sw_kind = e->kind;
  st->sw_cpu = e->kind != SW_UNKNOWN ? e->cpu : -1;
  st->sw_time = e->time_ns;
  st->sw_tick = e->tick;
  st->met_tick = tick_no;
  st->covered = e->kind != SW_UNKNOWN;
  /* Born under the inherited switch events: its context switch counts are
   * the records since its birth, no status read needed for the base (a
   * process that makes thousands of threads a second paid most of the
   * sampler's time for those reads). */
  if (sampler_started_ns && !t->is_main && !t->is_probe && t->start_ns > sampler_started_ns &&
      !e->counts_lost) {
    st->vol = e->vol;
    st->invol = e->invol;
    st->status_base = st->born_covered = true;
    st->status_tick = tick_no; /* its records come in the next drains */
  }
  e->st = st;
  st->next = all_states;
  st->pprev = &all_states;
  if (all_states) all_states->pprev = &st->next;
  all_states = st;
  states_count++;
  slot_states[slot] = st;
  t->sampler = st;
  return st;
}

static void state_free(tm_sampler_thread *st) {
  /* Unlinked in O(1): a thousand threads ending at once stay linear. */
  *st->pprev = st->next;
  if (st->next) st->next->pprev = st->pprev;
  states_count--;
  tid_entry *e = tid_find(st->tid);
  if (e && e->st == st) tid_remove(e);
  if (st->slot < slot_states_cap && slot_states[st->slot] == st) slot_states[st->slot] = NULL;
  live_dropped -= st->dropped + st->udropped;
  tm_task_fds_close(&st->fds);
  tm_perf_counters_close(&st->pc);
  free(st->routine);
  if (st->owner && st->owner->sampler == st) st->owner->sampler = NULL;
  free(st);
}

/* User-thread switches: straight to their batch (userthreads_wire.c). */
static void drain_uring(tm_session *s, tm_thread *t, tm_sampler_thread *st) {
  tm_uring *u = atomic_load_explicit(&t->uring, memory_order_acquire);
  if (!u) return;
  tm_event ev[DRAIN_CHUNK];
  uint32_t n, total = 0;
  while (total < TM_URING_EVENTS && (n = tm_uring_drain(u, ev, DRAIN_CHUNK)) > 0) {
    for (uint32_t i = 0; i < n; i++) tm_ut_wire_event(s, t->tid, &ev[i]);
    total += n;
  }
  uint64_t d = atomic_load_explicit(&u->dropped, memory_order_relaxed);
  live_dropped += d - st->udropped;
  st->udropped = d;
}

static bool uring_pending(const tm_thread *t) {
  tm_uring *u = atomic_load_explicit(&t->uring, memory_order_acquire);
  return u && atomic_load_explicit(&u->head, memory_order_acquire) !=
                  atomic_load_explicit(&u->tail, memory_order_relaxed);
}

/* Returns the events drained. */
static uint32_t drain_ring(tm_session *s, tm_thread *t, tm_sampler_thread *st) {
  tm_event ev[DRAIN_CHUNK];
  uint32_t n, total = 0;
  drain_uring(s, t, st);
  while (total < TM_RING_EVENTS && (n = tm_ring_drain(&t->ring, ev, DRAIN_CHUNK)) > 0) {
    uint32_t states = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (ev[i].state >= TM_EV_USER_SWITCH) {
        tm_ut_wire_event(s, t->tid, &ev[i]);
        continue;
      }
      ev[states++] = ev[i];
      if (transitions.n >= BATCH_MAX) flush_transitions(s);
      batch_push(&transitions, ev[i].time_ns, t->tid, (int)ev[i].state, ev[i].object_id,
                 ev[i].holder_tid, ev[i].releaser_tid);
      if (ev[i].state == TM_STATE_RUNNING) {
        st->ev_run_from = ev[i].time_ns;
      } else if (st->ev_run_from) {
        if (ev[i].time_ns > st->ev_run_from) st->ev_ran_ns += ev[i].time_ns - st->ev_run_from;
        st->ev_run_from = 0;
      }
    }
    total += n;
    st->ev_tick = tick_no;
    if (!states) continue; /* only user-thread switches: its state is as it was */
    st->last_time = ev[states - 1].time_ns;
    st->last_state = (int)ev[states - 1].state;
    st->last_obj = ev[states - 1].object_id;
  }
  return total;
}

/* A futex this thread was seen waiting on outside wrapped calls: hidden.c
 * decides whether it is an internal lock and asks for its call site (line:
 * the syscall file when read this tick, else NULL). */
static bool hidden_noted;
static void note_hidden_wait(tm_session *s, tm_thread *t, uint64_t futex, const char *line) {
  if (tm_hidden_seen(t->tid, futex, line, tm_now_ns(), s->cfg.interval_ns)) hidden_noted = true;
}

/* Context switch counts from status: the base the records add to, or the
 * only source for a thread without records. */
static bool read_status(tm_sampler_thread *st) {
  char buf[READ_BYTES];
  uint64_t before = tm_now_ns();
  if (tm_task_read(&st->fds, TM_TASK_STATUS, false, buf, sizeof buf) < 0 ||
      !tm_parse_status_ctxsw(buf, &st->vol, &st->invol))
    return false;
  /* A record stamped before the read may still be in a ring: it is in the
   * counts already. */
  st->ctx_after_ns = before;
  st->status_base = true;
  st->status_dirty = false;
  st->status_tick = tick_no;
  return true;
}

/* Whether a read of a thread that ran needs its stat file (see STAT_EVERY). */
static bool stat_due(const tm_session *s, const tm_sampler_thread *st, uint32_t cur,
                     uint64_t oncpu_ns, bool light) {
  if (!st->have_stat || !on_sampler_thread) return true; /* first, or the final tick */
  if (light) return st->moved_reads % LIGHT_FULL_EVERY == 0;
  if (!s->src_perf_switch || !st->covered || st->sw_kind == SW_UNKNOWN) return true;
  uint64_t ran = oncpu_ns - st->stat_oncpu_ns;
  /* Blocked: outside wrapped calls only stat says in what; inside them its
   * counters stay as read now until it runs again, worth a read unless it
   * ran only a moment (a thread that wakes for microseconds) since a read
   * made while it was blocked. One read while it ran is short of its last
   * stretch: user and system time are each rounded down to a clock tick,
   * and 0.96 ms more CPU moved both (80 ms by that read, 100 ms at rest). */
  if (st->sw_kind == TM_SWITCH_OUT &&
      (cur <= TM_STATE_RUNNING || ran >= STAT_BLOCKED_CPU_NS || (ran && !st->stat_blocked)))
    return true;
  return st->moved_reads % STAT_EVERY == 0 || ran >= STAT_CPU_NS;
}

static void sample_thread(tm_session *s, tm_thread *t, tm_sampler_thread *st, int how) {
  uint32_t cur = *(volatile uint32_t *)&t->cur_state;
  if (how == READ_NONE) {
    /* Blocked since its last read: the same syscall, the same hidden lock,
     * one more tick seen waiting on it. */
    if (st->futex_addr && cur <= TM_STATE_RUNNING) note_hidden_wait(s, t, st->futex_addr, NULL);
    return;
  }
  char buf[READ_BYTES];
  uint64_t read_ns = how == READ_ALL ? tm_now_ns() : 0; /* a later switch: unread */
  /* The head before the state: a push after it moves the head. */
  uint64_t head = atomic_load_explicit(&t->ring.head, memory_order_acquire);
  bool in_call = *(volatile uint32_t *)&t->cur_state > TM_STATE_RUNNING;
  /* A light wake-up of a thread without records (see
   * LIGHT_FULL_EVERY): back in its wrapped call, out of it only
   * for moments by its events. */
  bool light = how == READ_ALL && in_call && !(s->src_perf_switch && st->covered) &&
               st->have_stat && st->status_base && st->ev_ran_ns < LIGHT_RAN_NS &&
               st->ev_run_from == 0;
  /* A thread's files are kept open from its second read on: most threads
   * of a program that makes thousands a second are read once or twice,
   * and keeping a file costs two more system calls (moving it above the
   * program's descriptors, closing it at the end). */
  if (tm_task_read(&st->fds, TM_TASK_SCHEDSTAT, st->have_sched, buf, sizeof buf) < 0) return;
  tm_task_sched sc;
  if (!tm_parse_schedstat(buf, &sc)) return;
  /* Read as running by its records, but the switch-out came with a later
   * drain (the read raced the sleep): that read left its stat unread and
   * saw none of the blocking. This one counts as a move, once. */
  bool caught_up = how == READ_ALL && st->read_on_cpu && st->sw_kind != TM_SWITCH_IN &&
                   st->sw_kind != SW_UNKNOWN;
  if (how == READ_ALL) {
    st->read_on_cpu = st->sw_kind == TM_SWITCH_IN;
    st->ran_ns = st->ev_ran_ns = 0;
    st->read_tick = tick_no;
    st->read_head = in_call ? head : UINT64_MAX;
  }
  /* schedstat's run time of a thread on a CPU lags by up to a scheduler
   * tick; its CPU clock is brought up to date by the kernel. Only the few
   * threads on a CPU now by the records (or with none yet: new threads)
   * pay for the extra syscall. */
  uint64_t sched_read_ns = tm_now_ns();
  if (s->src_perf_switch && (st->sw_kind == TM_SWITCH_IN || st->sw_kind == SW_UNKNOWN)) {
    struct timespec ts;
    clockid_t clock = (clockid_t)((~(unsigned)t->tid << 3) | 6); /* per-thread sched clock */
    if (clock_gettime(clock, &ts) == 0) {
      sched_read_ns = tm_now_ns();
      uint64_t exact = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
      if (exact > sc.oncpu_ns) sc.oncpu_ns = exact;
    }
  }
  bool moved = !st->have_sched || sc.oncpu_ns != st->sched.oncpu_ns ||
               sc.runqueue_ns != st->sched.runqueue_ns || caught_up;
  st->sched = sc;
  st->have_sched = true;
  /* Not moved: it did not run since the last read, nor enter a syscall. */
  if (how == READ_ALL) st->syscall_ns = read_ns;
  uint64_t vol = st->vol, invol = st->invol, futex = st->futex_addr;
  uint32_t asleep = st->asleep_syscall;
  /* The sampler about itself (every tick): getrusage instead of stat and
   * status, the same numbers without two /proc reads. */
  bool self = on_sampler_thread && t->is_probe && t->tid == s->probe_tid &&
              tm_self_usage(&st->stat, &st->vol, &st->invol);
  if (self) {
    st->have_stat = st->status_base = true;
    st->ctx_after_ns = UINT64_MAX; /* counted by the kernel, not the records */
  }
  const char *futex_line = NULL;
  /* After lost records a thread's last record is unknown, and one blocked
   * for good would be read in full every tick. The kernel's state settles
   * it: not running or runnable at t0 means no reads until its next record
   * (any later switch is stamped after t0). */
  bool settle = how == READ_ALL && !self && st->sw_kind == SW_UNKNOWN && st->covered &&
                s->src_perf_switch;
  uint64_t t0 = settle ? tm_now_ns() : 0;
  if (how == READ_ALL && moved) st->moved_reads++;
  bool stat_read = false;
  if (((how == READ_ALL && moved) || settle) && !self &&
      (settle || stat_due(s, st, cur, sc.oncpu_ns, light))) {
    if (tm_task_read(&st->fds, TM_TASK_STAT, st->have_stat, buf, sizeof buf) >= 0 &&
        tm_parse_stat(buf, &st->stat)) {
      st->have_stat = stat_read = true;
      st->stat_oncpu_ns = sc.oncpu_ns;
      st->stat_blocked = st->sw_kind == TM_SWITCH_OUT;
      if (settle && st->stat.state != 'R' && st->sw_kind == SW_UNKNOWN) {
        st->sw_kind = TM_SWITCH_OUT;
        st->sw_time = t0;
      }
    }
  }
  /* Not read: where it is and was comes from its latest record. */
  if (!stat_read && !self && st->have_stat && s->src_perf_switch && st->covered &&
      st->sw_kind != SW_UNKNOWN) {
    st->stat.state = st->sw_kind == TM_SWITCH_OUT ? 'S' : 'R';
    if (st->sw_cpu >= 0) st->stat.cpu = st->sw_cpu;
  }
  /* READ_QUEUE stops here: off the CPU since its last full read, so stat,
   * counters and syscall are as they were; only the runqueue wait moves
   * (when it runs, or is migrated while queued). */
  /* Off the CPU, preempted: runnable, in no futex wait. */
  if (how == READ_QUEUE) futex = 0, asleep = 0;
  if (how == READ_ALL && moved) {
    /* Counters only for threads that keep running: opening them is most of
     * what a short-lived thread would cost the sampler. */
    if (st->moved_reads % PERF_EVERY == 0) {
      if ((s->src_perf_sw || s->src_perf_hw) && !st->pc_open && tm_fds_spare() &&
          sc.oncpu_ns >= PERF_MIN_CPU_NS) {
        tm_perf_counters_open(&st->pc, t->tid, s->src_perf_sw, s->src_perf_hw);
        st->pc_open = true;
      }
      if (st->pc_open) tm_perf_counters_read(&st->pc, &st->pv);
    }
    /* Hidden locks: a sleeping thread outside every wrapped blocking call
     * that sits in futex() waits on a lock we cannot see otherwise. Only a
     * thread that ran since the last read can be in another syscall. */
    futex = 0;
    asleep = 0;
    if (s->src_futex && st->have_stat && st->stat.state == 'S' && cur <= TM_STATE_RUNNING &&
        !t->is_probe &&
        tm_task_read(&st->fds, TM_TASK_SYSCALL, true, buf, sizeof buf) >= 0) {
      futex = tm_parse_syscall_futex(buf);
      asleep = tm_parse_syscall_nr(buf); /* "running": woke before the read */
    }
    /* Read again: it may have entered a wrapped call (a join, a cond wait)
     * between the first look and the syscall file, and that futex is seen. */
    if (*(volatile uint32_t *)&t->cur_state > TM_STATE_RUNNING) futex = 0, asleep = 0;
    if (futex) futex_line = buf;
    st->status_dirty = true;
  }
  if (futex) note_hidden_wait(s, t, futex, futex_line);
  /* Context switches: counted from the records once a status read gave the
   * base (again after records were lost). Without records: only after it
   * ran, at most every STATUS_EVERY ticks (light ones: as their stat). */
  /* A thread switched more than twice since that read (it got a CPU again
   * that often) is read every time: its voluntary count is how a reader
   * tells a tick it slept outside wrapped calls from schedstat's lag (a
   * storm of futex waits on a lock no wrapper sees would read as time on a
   * CPU). Twice or less a tick is what wrapped waits explain, and where most
   * of a thousand threads are: they stay on STATUS_EVERY. */
  bool from_records = s->src_perf_switch && st->covered;
  bool switched = sc.slices - st->status_slices > 2;
  if (!st->status_base ||
      (!from_records && st->status_dirty &&
       (switched || tick_no - st->status_tick >= STATUS_EVERY) &&
       (!light || st->moved_reads % LIGHT_FULL_EVERY == 0))) {
    if (read_status(st)) st->status_slices = sc.slices;
  }
  uint64_t yields = t->yields; /* the thread's own counter: a racy read is one behind */
  bool counts = st->vol != vol || st->invol != invol || yields != st->yields;
  st->yields = yields;
  if (!moved && !counts && futex == st->futex_addr && asleep == st->asleep_syscall) return;
  st->futex_addr = futex;
  st->asleep_syscall = asleep;

  Threadmon__LwpSample *l = lwp_add();
  if (!l) return;
  l->tid = t->tid;
  l->oncpu_ns = sc.oncpu_ns;
  l->runqueue_ns = sc.runqueue_ns;
  l->user_ns = st->stat.user_ns;
  l->system_ns = st->stat.system_ns;
  l->minflt = st->stat.minflt;
  l->majflt = st->stat.majflt;
  l->cpu = st->stat.cpu;
  l->kstate = (uint32_t)(unsigned char)st->stat.state;
  l->vol_ctxsw = st->vol;
  l->invol_ctxsw = st->invol;
  l->futex_addr = futex;
  l->asleep_syscall = asleep;
  l->asleep_kind = (Threadmon__AsleepKind)tm_syscall_asleep_kind(asleep);
  l->read_ns = sched_read_ns;
  l->task_clock_ns = st->pv.v[TM_PC_TASK_CLOCK];
  l->perf_faults = st->pv.v[TM_PC_FAULTS];
  l->cycles = st->pv.v[TM_PC_CYCLES];
  l->instructions = st->pv.v[TM_PC_INSTRUCTIONS];
  l->yields = yields;
}

/* Whether a light thread's read waits (see LIGHT_SETTLE_NS), woke_tick
 * being the tick its last wake-up was seen in; *due: when it is due. */
static bool light_deferred(const tm_session *s, const tm_sampler_thread *st, uint64_t woke_tick,
                           uint64_t *due) {
  uint64_t every = s->cfg.interval_ns ? s->cfg.interval_ns : 1;
  uint64_t at = st->read_tick + LIGHT_REREAD_NS / every;
  uint64_t settled = woke_tick + LIGHT_SETTLE_NS / every;
  if (settled < at) at = settled;
  if (tick_no >= at) return false;
  *due = at;
  return true;
}

/* What this tick must read of a thread, from its switch records. A
 * READ_NONE that only defers a read sets *due to the tick it is due in
 * (else it stays 0: the thread's next record or event brings it back). */
static int read_plan(const tm_session *s, const tm_sampler_thread *st, bool full,
                     uint64_t *due) {
  if (full) return READ_ALL;
  uint64_t every = s->cfg.interval_ns ? s->cfg.interval_ns : 1;
  if (!s->src_perf_switch || !st->covered) {
    /* No records: the events (drained before planning) say it all; see
     * IDLE_REREAD_NS. */
    if (!st->have_sched || *(volatile uint32_t *)&st->owner->cur_state <= TM_STATE_RUNNING)
      return READ_ALL;
    uint64_t head = atomic_load_explicit(&st->owner->ring.head, memory_order_acquire);
    uint64_t since = (tick_no - st->read_tick) * every;
    if (head == st->read_head && since < IDLE_REREAD_NS) {
      *due = st->read_tick + IDLE_REREAD_NS / every;
      return READ_NONE;
    }
    if (st->ev_ran_ns < LIGHT_RAN_NS && st->ev_run_from == 0 &&
        light_deferred(s, st, st->ev_tick, due))
      return READ_NONE;
    return READ_ALL;
  }
  /* Never read, born under the records, and blocked in a wrapped call
   * since the tick it was met in (a pool's new worker waiting for work):
   * records and wrappers tell all of it until it runs again, and it is read
   * then. Opening its files is most of what a new thread costs the
   * sampler, and a thread that only waits and exits is never opened. */
  if (!st->have_sched) {
    bool waiting = st->born_covered && st->sw_tick <= st->met_tick &&
                   st->sw_kind == TM_SWITCH_OUT &&
                   *(volatile uint32_t *)&st->owner->cur_state > TM_STATE_RUNNING;
    return waiting ? READ_NONE : READ_ALL;
  }
  /* Woke, ran a moment and blocked again in a wrapped call (a mostly idle
   * server's thread): its states are exact from records and wrappers, and
   * its counters can wait: read at most every LIGHT_REREAD_NS. */
  if (st->sw_kind == TM_SWITCH_OUT && st->ran_ns < LIGHT_RAN_NS && st->in_time == 0 &&
      *(volatile uint32_t *)&st->owner->cur_state > TM_STATE_RUNNING &&
      light_deferred(s, st, st->sw_tick, due))
    return READ_NONE;
  if (st->sw_tick == tick_no || st->sw_kind == TM_SWITCH_IN || st->sw_kind == SW_UNKNOWN)
    return READ_ALL;
  if (st->sw_kind == TM_SWITCH_OUT_PREEMPT) return READ_QUEUE;
  /* It blocked after the last full read (it ran on, or records came
   * late), or before a read that took it for running (its switch-out came
   * with a later drain): what it blocked in, perhaps a hidden futex, its
   * stat and the switch are still unread. */
  return st->sw_time > st->syscall_ns || st->read_on_cpu ? READ_ALL : READ_NONE;
}

typedef struct ended {
  uint32_t tid;
  uint64_t time_ns, oncpu_ns;
} ended;

static ended *ends;
static size_t end_n, end_cap;

static void note_end(uint32_t tid, uint64_t time_ns, uint64_t oncpu_ns) {
  if (end_n == end_cap) {
    size_t cap = end_cap ? end_cap * 2 : 16;
    ended *e = realloc(ends, cap * sizeof *e);
    if (!e) return;
    ends = e;
    end_cap = cap;
  }
  ends[end_n++] = (ended){tid, time_ns, oncpu_ns};
}

/* Threads that ended since the capture file's last whole write: if that
 * write was the last before a gap, their ThreadEnd goes into the file again
 * with the resync (bounded: a reader keeps any others alive to the end). */
#define GAP_ENDS_MAX 4096
static ended gap_ends[GAP_ENDS_MAX];
static size_t gap_end_n;

/* Whether this tick reads /proc/stat (and the sampler itself): about
 * every CPUSTAT_NS, the first tick included. */
static bool cpustat_tick(const tm_session *s) {
  uint64_t every = s->cfg.interval_ns ? CPUSTAT_NS / s->cfg.interval_ns : 1;
  return every <= 1 || tick_no % every == 1;
}

/* How long an ended thread's record waits for a late name. */
#define RENAME_GRACE_NS 20000000u

/* ---- which slots a tick visits ----
 *
 * A tick visits only the slots whose thread did something (marked by the
 * thread itself: tm_thread_touch), that have switch records this tick, that
 * the previous visit asked to see again next tick (running, runnable,
 * unknown, in a hidden wait, ended and waiting for a late name), and those
 * whose deferred read falls due (a wheel of ticks). Slots are visited in
 * index order, as a walk over the whole registry would: a program of
 * 10,000 blocked threads costs a tick almost nothing. The final tick and a
 * tick after lost records visit every slot. */
#define VISIT_WORDS (TM_MAX_THREADS / 64)
static uint64_t visit[VISIT_WORDS]; /* this tick's, from records and the wheel */
static uint64_t hot[VISIT_WORDS];   /* asked by the previous visit */
static bool visit_all = true;       /* nothing is known yet (start, fork child) */

/* Deferred reads: bucket tick % WHEEL_TICKS holds the slots due then. A
 * delay beyond the wheel comes early, which is harmless: the visit plans
 * again and puts it back. */
#define WHEEL_TICKS 256
typedef struct wheel_bucket {
  uint32_t *slot;
  uint32_t n, cap;
} wheel_bucket;
static wheel_bucket wheel[WHEEL_TICKS];

static void mark_visit(uint32_t slot) {
  if (slot < TM_MAX_THREADS) visit[slot / 64] |= 1ull << (slot % 64);
}

static void revisit_at(uint32_t slot, uint64_t due) {
  uint64_t delay = due > tick_no ? due - tick_no : 1;
  if (delay >= WHEEL_TICKS) delay = WHEEL_TICKS - 1;
  wheel_bucket *b = &wheel[(tick_no + delay) % WHEEL_TICKS];
  if (b->n == b->cap) {
    uint32_t cap = b->cap ? b->cap * 2 : 64;
    uint32_t *p = realloc(b->slot, cap * sizeof *p);
    if (!p) {
      hot[slot / 64] |= 1ull << (slot % 64); /* no room: look every tick */
      return;
    }
    b->slot = p;
    b->cap = cap;
  }
  b->slot[b->n++] = slot;
}

static void wheel_take(void) {
  wheel_bucket *b = &wheel[tick_no % WHEEL_TICKS];
  for (uint32_t i = 0; i < b->n; i++) mark_visit(b->slot[i]);
  b->n = 0;
}

/* Registry records are ~25 KB apart (a page, a TLB miss each) and the
 * slots a tick visits are scattered: the first touch of each was most of
 * what 10,000 light threads cost the sampler. Slots are fetched ahead in
 * two steps: the record's fields and ring indices, then (once the tail is
 * in cache) the ring's next events. */
#define PREFETCH_AHEAD 16

static void prefetch_slot(uint32_t i, bool events) {
  if (i == UINT32_MAX) return;
  const tm_thread *t = tm_thread_slot(i);
  if (events) {
    uint64_t tail = atomic_load_explicit(&t->ring.tail, memory_order_relaxed);
    __builtin_prefetch(&t->ring.ev[tail & (TM_RING_EVENTS - 1)]);
    return;
  }
  __builtin_prefetch(t);
  __builtin_prefetch(&t->attr_version); /* with cur_state */
  __builtin_prefetch(&t->ring.head);
  __builtin_prefetch(&t->ring.tail);
  if (i < slot_states_cap && slot_states[i]) __builtin_prefetch(slot_states[i]);
}

/* One slot's visit; true when it must be visited next tick again. *grace
 * counts ended threads kept for a late name. */
static bool visit_slot(tm_session *s, uint32_t i, bool full, uint32_t *grace) {
  tm_thread *t = tm_thread_slot(i);
  int state = atomic_load_explicit(&t->slot_state, memory_order_acquire);
  if (state != TM_SLOT_LIVE && state != TM_SLOT_EXITED) return false;
  tm_sampler_thread *st = i < slot_states_cap ? slot_states[i] : NULL;
  if (st && (st->owner != t || st->tid != t->tid)) {
    state_free(st); /* the slot holds another thread now */
    st = NULL;
  }
  if (!st && !(st = state_new(t, i))) return true; /* out of memory: try again */
  if (!st->attr_sent) {
    emit_thread_start(s, t, st, state == TM_SLOT_LIVE, TM_TO_ALL);
    st->attr_sent = 1; /* attr_version 0: nothing beyond the start */
  }
  uint32_t av = atomic_load_explicit(&t->attr_version, memory_order_acquire);
  if (av + 1 != st->attr_sent) {
    emit_thread_attr(s, t, TM_TO_ALL);
    st->attr_sent = av + 1;
  }
  /* Without records its events are what says whether it ran: drained
   * before planning (see read_plan). */
  if (!s->src_perf_switch || !st->covered) {
    if (drain_ring(s, t, st) && !t->is_probe) program_ran = true;
  }
  uint64_t due = 0;
  int how = state == TM_SLOT_EXITED ? READ_ALL : read_plan(s, st, full, &due);
  /* The sampler itself is on a CPU at every tick: reading it about every
   * CPUSTAT_NS is enough to show what it costs, and its reads are the
   * first system calls after a wake-up, the slowest of the tick. */
  bool self = t->is_probe && t->tid == s->probe_tid;
  if (how == READ_ALL && !full && self && st->have_sched && !cpustat_tick(s)) how = READ_NONE;
  if (how == READ_ALL || st->sw_tick == tick_no) {
    /* Only a thread that ran pushes events or drops them (one that ran
     * and blocked again may be left unread: see read_plan). */
    drain_ring(s, t, st);
    uint64_t d = atomic_load_explicit(&t->ring.dropped, memory_order_relaxed);
    live_dropped += d - st->dropped;
    st->dropped = d;
    if (!t->is_probe) program_ran = true;
  }
  if (state == TM_SLOT_LIVE) {
    sample_thread(s, t, st, how);
    if (due) revisit_at(i, due);
    /* Blocked for good (READ_NONE): its next record or event brings it
     * back, except a hidden wait, counted every tick it lasts, and events
     * left in its ring by a drain's bound. */
    return how != READ_NONE || st->futex_addr || self || uring_pending(t) ||
           atomic_load_explicit(&t->ring.head, memory_order_acquire) !=
               atomic_load_explicit(&t->ring.tail, memory_order_relaxed);
  }
  /* Its program may still name it through its pthread_t (a name set
   * just after a short thread ended): the record waits RENAME_GRACE_NS
   * after the end, then its attributes are sealed. */
  uint64_t end_at = atomic_load_explicit(&t->end_ns, memory_order_relaxed);
  if (!final_tick && end_at && tm_now_ns() - end_at < RENAME_GRACE_NS) {
    ++*grace;
    return true;
  }
  tm_thread_seal(t);
  av = atomic_load_explicit(&t->attr_version, memory_order_acquire);
  if (av + 1 != st->attr_sent) {
    emit_thread_attr(s, t, TM_TO_ALL);
    st->attr_sent = av + 1;
  }
  uint64_t end_ns = atomic_load_explicit(&t->end_ns, memory_order_relaxed);
  note_end(t->tid, end_ns ? end_ns : tm_now_ns(),
           atomic_load_explicit(&t->end_cpu_ns, memory_order_relaxed));
  s->events_dropped += st->dropped + st->udropped;
  state_free(st);
  tm_thread_release(t);
  return false;
}

/* full: read every thread whatever its records say (the final tick, or
 * records were lost). Returns the live threads known, visited or not: every
 * state is a LIVE thread but those ended ones. */
static uint32_t walk_threads(tm_session *s, bool full) {
  static uint32_t order[TM_MAX_THREADS];
  uint32_t n = 0, grace = 0, hw = tm_threads_high_water();
  uint32_t words = (hw + 63) / 64;
  bool all = full || visit_all;
  visit_all = false;
  for (uint32_t w = 0; w < words; w++) {
    uint64_t bits = visit[w] | hot[w] | tm_threads_take_touched(w);
    /* Marks above hw: slots claimed since it was read, met now too. */
    if (all) bits |= w + 1 < words || hw % 64 == 0 ? ~0ull : (1ull << (hw % 64)) - 1;
    visit[w] = hot[w] = 0;
    for (; bits; bits &= bits - 1) order[n++] = w * 64 + (uint32_t)__builtin_ctzll(bits);
  }
  for (uint32_t k = 0; k < n; k++) {
    prefetch_slot(k + PREFETCH_AHEAD < n ? order[k + PREFETCH_AHEAD] : UINT32_MAX, false);
    prefetch_slot(k + PREFETCH_AHEAD / 2 < n ? order[k + PREFETCH_AHEAD / 2] : UINT32_MAX, true);
    if (visit_slot(s, order[k], full, &grace)) hot[order[k] / 64] |= 1ull << (order[k] % 64);
  }
  return states_count - grace;
}

/* ---- switch records ---- */

static uint64_t switches_drained; /* records drained this tick */

static void on_switch(void *arg, uint32_t tid, uint64_t time_ns, uint32_t cpu, int kind) {
  (void)arg;
  switches_drained++;
  if (switches.n < BATCH_MAX * 4) batch_push(&switches, time_ns, tid, kind, cpu, 0, 0);
  if (tid != probe_tid) program_ran = switches_urgent = true;
  tid_entry *e = tid_get(tid);
  if (!e) return;
  tm_sampler_thread *st = e->st;
  if (!st) { /* not met by the walk yet: remember the latest record */
    if (e->kind == SW_UNKNOWN || time_ns >= e->time_ns) {
      e->kind = kind;
      e->cpu = (int)cpu;
      e->time_ns = time_ns;
    }
    e->tick = tick_no;
    if (kind == TM_SWITCH_OUT) e->vol++;
    else if (kind == TM_SWITCH_OUT_PREEMPT) e->invol++;
    return;
  }
  st->covered = true;
  st->sw_tick = tick_no;
  mark_visit(st->slot);
  if (kind == TM_SWITCH_IN) {
    st->in_time = time_ns;
  } else if (st->in_time && time_ns > st->in_time) {
    st->ran_ns += time_ns - st->in_time;
    st->in_time = 0;
  }
  if (st->sw_kind == SW_UNKNOWN || time_ns >= st->sw_time) {
    st->sw_kind = kind;
    st->sw_cpu = (int)cpu;
    st->sw_time = time_ns;
  }
  if (kind != TM_SWITCH_IN && time_ns > st->ctx_after_ns) {
    if (kind == TM_SWITCH_OUT) st->vol++;
    else st->invol++;
  }
}

/* Records were lost: no thread's last record can be trusted, nor its
 * counts. Every thread is read in full until it has a record again, and
 * re-reads its status. */
static void forget_switches(void) {
  for (tm_sampler_thread *st = all_states; st; st = st->next) {
    st->sw_kind = SW_UNKNOWN;
    st->status_base = false;
  }
  for (uint32_t i = 0; i < tids_cap; i++)
    if (tids[i].tid && !tids[i].st) tids[i].counts_lost = true;
}

/* ---- the switch-rate limit ---- */

/* Each switch of a thread with our events costs the kernel about 1.5 us
 * (docs/benchmarks.md, yield ping-pong): at 25,000 a second per CPU that is
 * 4% of every CPU. Above THREADMON_MAX_SWITCH_RATE (per CPU: what the
 * records cost is a share of the machine) for SWITCH_LIMIT_NS the events are
 * closed for good (they cannot be reopened on existing threads), and states
 * come from each tick's /proc reads, as with THREADMON_PERF=0. */
#define SWITCH_LIMIT_NS 50000000ull

static uint64_t rate_window_start, rate_window_records;

static bool switch_rate_exceeded(const tm_session *s, uint64_t now, uint64_t records) {
  if (!s->cfg.max_switch_rate) return false;
  if (!rate_window_start || now < rate_window_start) {
    rate_window_start = now;
    rate_window_records = 0;
  }
  rate_window_records += records;
  uint64_t span = now - rate_window_start;
  if (span < SWITCH_LIMIT_NS) return false;
  uint64_t cpus = s->perf.ncpu > 0 ? (uint64_t)s->perf.ncpu : 1;
  bool over = rate_window_records * 1000000000u > s->cfg.max_switch_rate * cpus * span;
  rate_window_start = now;
  rate_window_records = 0;
  return over;
}

static void stop_switch_records(tm_session *s, uint64_t now) {
  switches_stopping = true;
  flush_switches(s, now, true);
  switches_stopping = false;
  tm_perf_switch_close(&s->perf);
  s->src_perf_switch = false;
  forget_switches();
  char text[200];
  snprintf(text, sizeof text,
           "switch records stopped: the program switched more than %llu times a second per "
           "CPU (THREADMON_MAX_SWITCH_RATE); states from here are split by schedstat per tick",
           (unsigned long long)s->cfg.max_switch_rate);
  tm_emit_notice(s, text, TM_TO_ALL);
}

/* ---- /proc/self/task rescan: threads no wrapper saw, and vanished ones ---- */

typedef struct tid_set {
  uint32_t *v;
  size_t n, cap;
} tid_set;

static tid_set seen_now, unknown_now, unknown_before;
static uint64_t last_rescan_ns, last_listing_ns;
static uint32_t known_live; /* the last walk's count of live threads */

static void add_tid(uint32_t tid, void *arg) {
  tid_set *set = arg;
  if (set->n == set->cap) {
    size_t cap = set->cap ? set->cap * 2 : 64;
    uint32_t *v = realloc(set->v, cap * sizeof *v);
    if (!v) return;
    set->v = v;
    set->cap = cap;
  }
  set->v[set->n++] = tid;
}

static int cmp_tid(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Sets are kept sorted: a listing of 1,000 threads is checked in
 * O(n log n), not by a scan per tid. */
static bool tid_in(const tid_set *set, uint32_t tid) {
  return set->n && bsearch(&tid, set->v, set->n, sizeof tid, cmp_tid) != NULL;
}

static void rescan_tasks(uint64_t now) {
  seen_now.n = 0;
  if (tm_list_tasks(add_tid, &seen_now) < 0 || seen_now.n == 0) return;
  qsort(seen_now.v, seen_now.n, sizeof *seen_now.v, cmp_tid);
  /* A thread just created may not have attached to its record yet: adopt
   * a tid only when two listings in a row found it unknown. */
  unknown_now.n = 0;
  for (size_t i = 0; i < seen_now.n; i++) {
    uint32_t tid = seen_now.v[i];
    tid_entry *e = tid_find(tid);
    if (e && e->st) continue; /* the walk knows it */
    if (!tid_in(&unknown_before, tid)) add_tid(tid, &unknown_now); /* stays sorted */
    else if (!tm_thread_by_tid(tid)) tm_thread_register_foreign(tid);
  }
  tid_set swap = unknown_before;
  unknown_before = unknown_now;
  unknown_now = swap;
  /* Threads that left without passing a wrapper. Every LIVE slot the walk
   * met has a state; going through the states (one cache line each) rather
   * than the registry keeps this off the ~25 KB records. A LIVE slot the
   * walk has not met yet was attached since the last tick: too new to be
   * judged anyway. */
  for (tm_sampler_thread *st = all_states; st; st = st->next) {
    if (tid_in(&seen_now, st->tid)) continue;
    tm_thread *t = st->owner;
    if (atomic_load_explicit(&t->slot_state, memory_order_acquire) == TM_SLOT_LIVE &&
        t->tid == st->tid && t->start_ns + RESCAN_NS / 2 < now)
      tm_thread_mark_exited(t);
  }
  if (tids_used > states_count) tids_prune(); /* some entries have no state */
}

/* ---- objects ---- */

static uint32_t objects_walked; /* last id as of the last walk */

static void walk_objects(tm_session *s) {
  uint32_t last = tm_objects_last_id();
  /* Only program threads change objects (and the sampler, through hidden
   * waits): when none ran since the last walk, nothing can have moved, and
   * a program with many objects and idle threads costs nothing per tick. */
  if (!program_ran && !hidden_noted && last == objects_walked) return;
  objects_walked = last;
  if (last > obj_state_cap) {
    uint32_t cap = obj_state_cap ? obj_state_cap : 256;
    while (cap < last) cap *= 2;
    obj_sent *o = realloc(obj_state, cap * sizeof *o);
    if (!o) return;
    memset(o + obj_state_cap, 0, (cap - obj_state_cap) * sizeof *o);
    obj_state = o;
    obj_state_cap = cap;
  }
  for (uint32_t id = 1; id <= last; id++) {
    tm_object *o = tm_object_by_id(id);
    if (!o) continue;
    uint32_t described = atomic_load_explicit(&o->described, memory_order_relaxed);
    bool stack = atomic_load_explicit(&o->has_stack, memory_order_acquire) == 1;
    if (described == 0 || (stack && described == 1)) {
      emit_sync_object(s, o, stack, TM_TO_ALL);
      atomic_store_explicit(&o->described, stack ? 2 : 1, memory_order_relaxed);
    }
    obj_sent *p = &obj_state[id - 1];
    obj_sent now = {
        .acq = *(volatile uint64_t *)&o->acquisitions,
        .cont = atomic_load_explicit(&o->contentions, memory_order_relaxed),
        .wait = atomic_load_explicit(&o->wait_ns, memory_order_relaxed),
        .max_wait = atomic_load_explicit(&o->max_wait_ns, memory_order_relaxed),
        .hold = atomic_load_explicit(&o->hold_ns, memory_order_relaxed),
        .hold_samples = atomic_load_explicit(&o->hold_samples, memory_order_relaxed),
        .wait_samples = atomic_load_explicit(&o->wait_samples, memory_order_relaxed),
    };
    if (!memcmp(&now, p, sizeof now)) continue;
    *p = now;
    Threadmon__SyncStats *st = sync_add();
    if (!st) continue;
    st->id = o->id;
    st->acquisitions = now.acq;
    st->contentions = now.cont;
    st->wait_ns = now.wait;
    st->max_wait_ns = now.max_wait;
    st->hold_ns = now.hold;
    st->hold_samples = now.hold_samples;
    st->wait_samples = now.wait_samples;
  }
}

/* ---- the tick ---- */

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void emit_thread_end(tm_session *s, const ended *e, int to) {
  Threadmon__ThreadEnd m = THREADMON__THREAD_END__INIT;
  m.tid = e->tid;
  m.time_ns = e->time_ns;
  m.oncpu_ns = e->oncpu_ns;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_END;
  f.thread_end = &m;
  tm_emit(s, &f, to);
}

/* Everything a reader needs to understand later frames: the threads and
 * objects described so far and the stacks sent. */
static void send_descriptions(tm_session *s, int to) {
  uint32_t hw = tm_threads_high_water();
  for (uint32_t i = 0; i < hw; i++) {
    tm_thread *t = tm_thread_slot(i);
    int st = atomic_load_explicit(&t->slot_state, memory_order_acquire);
    if ((st == TM_SLOT_LIVE || st == TM_SLOT_EXITED) && i < slot_states_cap && slot_states[i] &&
        slot_states[i]->owner == t) {
      emit_thread_start(s, t, slot_states[i], st == TM_SLOT_LIVE, to);
      emit_thread_attr(s, t, to);
    }
  }
  for (uint32_t id = 1, last = tm_objects_last_id(); id <= last; id++) {
    tm_object *o = tm_object_by_id(id);
    uint32_t d = o ? atomic_load_explicit(&o->described, memory_order_relaxed) : 0;
    if (d) emit_sync_object(s, o, d == 2, to);
  }
  tm_sites_wire_resend(s, to);
  tm_ut_wire_resend(s, to);
}

/* The capture file lost frames (disk full, a file size limit, the program
 * took the descriptor): after a Notice saying what and since when, the
 * descriptions again, and every known thread's state is UNKNOWN from the
 * gap's start, so readers take it from the kernel until its next change. */
static void resync_file(tm_session *s) {
  tm_transport *tx = &s->tx;
  tm_transport_file_resync_queued(tx);
  tx->file_replaced_noted = tx->file_replaced; /* this Notice says so */
  char text[160];
  snprintf(text, sizeof text,
           "capture gap: %llu bytes of frames lost from %.3f s (%s); written again from here",
           (unsigned long long)tx->file_gap_bytes,
           (double)(tx->file_gap_start_ns - s->start_ns) / 1e9,
           tx->file_gap_errno == EBADF ? "the program took the capture's descriptor"
                                       : strerror(tx->file_gap_errno));
  tm_emit_notice(s, text, TM_TO_FILE);
  send_descriptions(s, TM_TO_FILE);
  for (size_t i = 0; i < gap_end_n; i++) emit_thread_end(s, &gap_ends[i], TM_TO_FILE);
  gap_end_n = 0;
  /* Unknown from the gap's start, then each thread's latest transition
   * (its state now) at its own time, if that fell in the gap. */
  batch unknown = {0};
  uint32_t hw = tm_threads_high_water();
  for (uint32_t i = 0; i < hw; i++) {
    tm_thread *t = tm_thread_slot(i);
    if (atomic_load_explicit(&t->slot_state, memory_order_acquire) != TM_SLOT_LIVE ||
        i >= slot_states_cap || !slot_states[i] || slot_states[i]->owner != t)
      continue;
    const tm_sampler_thread *st = slot_states[i];
    batch_push(&unknown, tx->file_gap_start_ns, t->tid, TM_STATE_UNKNOWN, 0, 0, 0);
    if (st->last_time > tx->file_gap_start_ns)
      batch_push(&unknown, st->last_time, t->tid, st->last_state, st->last_obj, 0, 0);
  }
  emit_transitions(s, &unknown, TM_TO_FILE);
  batch_free(&unknown);
  if (s->src_perf_switch) {
    /* Switch records were lost with the rest: an empty batch marked lost
     * makes readers take the gap's on-CPU spans from the samples. */
    Threadmon__CpuSwitches m = THREADMON__CPU_SWITCHES__INIT;
    m.lost = 1;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_SWITCHES;
    f.switches = &m;
    tm_emit(s, &f, TM_TO_FILE);
  }
  tx->file_gap_bytes = 0;
}

static uint64_t sampler_cpu_ns; /* the sampler thread's, updated by itself */
static Threadmon__CpuSample *cpu_msgs;
static Threadmon__CpuSample **cpu_ptrs;
static unsigned cpu_cap;
static bool untracked_noticed;

void tm_sampler_tick(tm_session *s) {
  uint64_t now = tm_now_ns();
  tm_transport_batch_begin(&s->tx, now);
  if (s->tx.net != TM_NET_OFF) tm_transport_pump(&s->tx, now);
  if (s->tx.needs_preamble) {
    /* A new connection (seen by this pump or the previous tick's last
     * one): it needs the session from the start, before any other frame. */
    s->tx.needs_preamble = false;
    tm_session_send_hello(s, TM_TO_NET);
    send_descriptions(s, TM_TO_NET);
  }
  tm_transport_check_file(&s->tx);
  if (tm_transport_file_wants_resync(&s->tx, now, !on_sampler_thread || final_tick))
    resync_file(s);
  if (s->tx.file_replaced != s->tx.file_replaced_noted && s->tx.file_fd >= 0 && !s->tx.file_resync) {
    s->tx.file_replaced_noted = s->tx.file_replaced;
    tm_emit_notice(s, "the program closed or replaced the capture's descriptor: the probe "
                      "reopened the file, nothing was lost", TM_TO_FILE);
  }
  tick_no++;
  /* The wrappers' TSC wait clock (probe.h); its first call reads
   * /proc/cpuinfo, which the final tick on a program thread should not. */
  if (on_sampler_thread) tm_clock_calibrate();
  if (now - last_rescan_ns >= RESCAN_NS) {
    last_rescan_ns = now;
    long kernel = tm_kernel_thread_count();
    if (kernel < 0 || (uint32_t)kernel != known_live || now - last_listing_ns >= RESCAN_QUIET_NS) {
      last_listing_ns = now;
      rescan_tasks(now);
    }
  }
  lwp_n = sync_n = end_n = 0;
  /* The final tick (on the thread that ends the session after the sampler
   * stopped, or handed to the sampler) reads everything, whatever the
   * records say. */
  bool full = !on_sampler_thread || final_tick;
  program_ran = full;
  hidden_noted = false;
  /* Switch records first: they say which threads need reading. */
  if (s->src_perf_switch) {
    probe_tid = s->probe_tid;
    uint64_t lost = s->perf.lost;
    switches_drained = 0;
    tm_perf_switch_drain(&s->perf, on_switch, NULL);
    if (s->perf.lost != lost) {
      forget_switches();
      full = program_ran = true;
    }
    if (on_sampler_thread && switch_rate_exceeded(s, now, switches_drained + s->perf.lost - lost)) {
      stop_switch_records(s, now);
      full = program_ran = true;
    }
  }
  wheel_take();
  uint32_t live = known_live = walk_threads(s, full);
  walk_objects(s);
  /* After the objects: a site's object is described before its stats. */
  Threadmon__SiteStats **sites;
  size_t nsites = tm_sites_wire_tick(s, &sites, program_ran || hidden_noted);
  flush_transitions(s);
  tm_ut_wire_tick(s);
  if (s->src_perf_switch) flush_switches(s, now, full);

  size_t ncpu = 0;
  if (s->src_proc_stat && s->cpus.cap > cpu_cap) {
    Threadmon__CpuSample *m = realloc(cpu_msgs, s->cpus.cap * sizeof *m);
    if (m) cpu_msgs = m;
    Threadmon__CpuSample **p = m ? realloc(cpu_ptrs, s->cpus.cap * sizeof *p) : NULL;
    if (p) {
      cpu_ptrs = p;
      cpu_cap = s->cpus.cap;
    }
  }
  if (s->src_proc_stat && (full || cpustat_tick(s)) && cpu_cap >= s->cpus.cap && tm_cpustat_read(&s->cpus)) {
    for (unsigned i = 0; i < s->cpus.count; i++) {
      const tm_cpu_times *c = &s->cpus.cpus[i];
      Threadmon__CpuSample *m = &cpu_msgs[ncpu];
      threadmon__cpu_sample__init(m);
      m->cpu = c->cpu;
      m->user_ns = c->user_ns;
      m->nice_ns = c->nice_ns;
      m->system_ns = c->system_ns;
      m->idle_ns = c->idle_ns;
      m->iowait_ns = c->iowait_ns;
      m->irq_ns = c->irq_ns;
      m->softirq_ns = c->softirq_ns;
      m->steal_ns = c->steal_ns;
      cpu_ptrs[ncpu++] = m;
    }
  }

  /* Kept up to date by the walk: no second pass over the registry. */
  uint64_t dropped = s->events_dropped + live_dropped;
  if (on_sampler_thread) sampler_cpu_ns = thread_cpu_ns();
  s->events_dropped_total = dropped;
  Threadmon__ProbeStats ps = THREADMON__PROBE_STATS__INIT;
  ps.events_dropped = dropped;
  ps.frames_dropped = s->tx.frames_dropped;
  ps.bytes_sent = s->tx.bytes_sent;
  ps.sampler_cpu_ns = sampler_cpu_ns;
  ps.threads_tracked = live;

  for (size_t i = 0; i < lwp_n; i++) lwp_ptrs[i] = &lwps[i];
  for (size_t i = 0; i < sync_n; i++) sync_ptrs[i] = &syncs[i];
  Threadmon__Tick tick = THREADMON__TICK__INIT;
  tick.seq = ++s->seq;
  tick.time_ns = now;
  tick.n_lwps = lwp_n;
  tick.lwps = lwp_ptrs;
  tick.n_cpus = ncpu;
  tick.cpus = cpu_ptrs;
  tick.n_sync = sync_n;
  tick.sync = sync_ptrs;
  tick.n_sites = nsites;
  tick.sites = sites;
  tick.probe = &ps;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TICK;
  f.tick = &tick;
  tm_emit(s, &f, TM_TO_ALL);

  for (size_t i = 0; i < end_n; i++) {
    emit_thread_end(s, &ends[i], TM_TO_ALL);
    if (gap_end_n < GAP_ENDS_MAX) gap_ends[gap_end_n++] = ends[i];
  }
  if (!untracked_noticed && (tm_threads_untracked() || tm_objects_untracked())) {
    untracked_noticed = true;
    tm_emit_notice(s, "thread or object table full: some are not tracked", TM_TO_ALL);
  }
  tm_transport_batch_end(&s->tx, tm_now_ns(), !on_sampler_thread || final_tick);
  if (!s->tx.file_resync && s->tx.batch_len == 0) gap_end_n = 0; /* all in the file */
  if (s->tx.net != TM_NET_OFF) {
    tm_transport_pump(&s->tx, tm_now_ns());
    tm_session_report_net(s, false);
  }
}

/* ---- the thread ---- */

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*join_fn)(pthread_t, void **);

static pthread_t sampler_handle;
static bool sampler_running;
static bool uncounted; /* the probe's thread is not in glibc's thread count */
/* glibc thought the process single-threaded until it made our thread. */
static bool single_before_us;
static _Atomic int stop_requested;
static _Atomic int pause_requested, in_tick;
/* Work handed to the sampler by a thread that must not run it itself, and
 * whether it is done (futex words). */
static void (*_Atomic handoff_fn)(void);
static _Atomic int handoff_done;

/* The real functions: our own exported wrappers would treat the probe's
 * thread as a program thread. */
static bool next_fn(const char *name, void *fn) {
  void *f = dlsym(RTLD_NEXT, name);
  memcpy(fn, &f, sizeof f); /* ISO C: no object-to-function pointer cast */
  return f != NULL;
}

/* Sleeps to an absolute CLOCK_MONOTONIC deadline, or until
 * tm_sampler_stop wakes us: a raw futex wait on stop_requested, so that a
 * long interval never delays the program's exit. */
static void sleep_until(const struct timespec *deadline) {
  for (;;) {
    if (atomic_load(&stop_requested) || atomic_load(&handoff_fn)) return;
    long r = syscall(SYS_futex, &stop_requested, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0,
                     deadline, NULL, FUTEX_BITSET_MATCH_ANY);
    if (r < 0 && errno == ETIMEDOUT) return;
  }
}

/* Refused by the display, or given up on it, with no capture file: nothing
 * will ever read what the probe gathers. */
static bool nowhere_to_send(const tm_session *s) {
  return (s->tx.net == TM_NET_REFUSED || s->tx.net == TM_NET_GAVE_UP) && s->tx.file_fd < 0 &&
         !s->tx.file_lost;
}

/* The CPU budget (THREADMON_BUDGET): judged over each BUDGET_WINDOW_NS of
 * the probe thread's own CPU time; above it the ticks come half as often
 * (every /proc read and frame with them), at most down to one a second;
 * well below it (a quarter), twice as often again, back to the interval
 * asked for. Each change is a Notice. */
#define BUDGET_WINDOW_NS 1000000000ull
#define BUDGET_MAX_INTERVAL_NS 1000000000ull

static void keep_budget(tm_session *s, uint64_t base_interval, uint64_t *win_wall,
                        uint64_t *win_cpu) {
  if (!s->cfg.budget_pct) return;
  uint64_t wall = tm_now_ns(), cpu = thread_cpu_ns();
  if (!*win_wall) {
    *win_wall = wall;
    *win_cpu = cpu;
    return;
  }
  if (wall - *win_wall < BUDGET_WINDOW_NS) return;
  double share = (double)(cpu - *win_cpu) / (double)(wall - *win_wall);
  *win_wall = wall;
  *win_cpu = cpu;
  double budget = s->cfg.budget_pct / 100.0;
  uint64_t was = s->cfg.interval_ns;
  if (share > budget && was < BUDGET_MAX_INTERVAL_NS)
    s->cfg.interval_ns = was * 2 < BUDGET_MAX_INTERVAL_NS ? was * 2 : BUDGET_MAX_INTERVAL_NS;
  else if (share < budget / 4 && was > base_interval)
    s->cfg.interval_ns = was / 2 > base_interval ? was / 2 : base_interval;
  if (s->cfg.interval_ns == was) return;
  char text[200];
  snprintf(text, sizeof text,
           "the probe's thread used %.1f%% of a core (THREADMON_BUDGET %u%%): %s, a tick every "
           "%llu ms",
           share * 100, s->cfg.budget_pct,
           s->cfg.interval_ns > was ? "less detail" : "detail restored",
           (unsigned long long)(s->cfg.interval_ns / 1000000u));
  tm_emit_notice(s, text, TM_TO_ALL);
}

static void *sampler_main(void *arg) {
  tm_session *s = arg;
  /* Before registering: the record copies it. The syscall, not our own
   * prctl wrapper, which would take this thread for the program's. */
  syscall(SYS_prctl, PR_SET_NAME, "threadmon", 0, 0, 0);
  on_sampler_thread = true;
  tm_thread *self = tm_thread_register_self(NULL, s->pid);
  if (self) {
    self->is_probe = true;
    self->guard = 1; /* for good: every wrapper passes our calls through */
  }
  s->probe_tid = (uint32_t)gettid();
  /* A forked child's session starts at the interval asked for, not at its
   * parent's over the budget. */
  s->cfg.interval_ns = s->cfg.interval_asked_ns;
  tm_session_send_hello(s, TM_TO_ALL);
  for (unsigned i = 0; i < s->notice_count; i++) tm_emit_notice(s, s->notices[i], TM_TO_ALL);

  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  const uint64_t base_interval = s->cfg.interval_asked_ns;
  uint64_t budget_wall = 0, budget_cpu = 0;
  while (!atomic_load(&stop_requested)) {
    uint64_t ns = (uint64_t)next.tv_nsec + s->cfg.interval_ns;
    next.tv_sec += (time_t)(ns / 1000000000u);
    next.tv_nsec = (long)(ns % 1000000000u);
    sleep_until(&next);
    void (*fn)(void) = atomic_exchange(&handoff_fn, NULL);
    if (fn) {
      fn();
      atomic_store(&handoff_done, 1);
      syscall(SYS_futex, &handoff_done, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
    }
    if (atomic_load(&stop_requested)) break;
    if (atomic_load(&pause_requested)) continue;
    atomic_store(&in_tick, 1);
    if (!atomic_load(&pause_requested)) tm_sampler_tick(s);
    atomic_store(&in_tick, 0);
    keep_budget(s, base_interval, &budget_wall, &budget_cpu);
    if (nowhere_to_send(s) && atomic_load(&tm_active)) {
      /* Cost the program nothing from here: the wrappers pass every call
       * straight through, and this thread only waits for the end. */
      atomic_store(&tm_active, 0);
    }
    if (!atomic_load(&tm_active)) {
      clock_gettime(CLOCK_MONOTONIC, &next);
      next.tv_sec += 1;
      continue;
    }
    /* Fell behind (a long tick, a stopped process): skip, don't burst. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > next.tv_sec + 1) next = now;
  }
  sampler_cpu_ns = thread_cpu_ns();
  if (self) tm_thread_mark_exited(self);
  /* Uncounted, this thread must not pass through glibc's thread end: it
   * would take one off the program's count, and at zero call exit(0) a
   * second time while the thread that stopped us is inside exit(). The
   * kernel still clears our tid, which is all pthread_join waits for. */
  if (uncounted) syscall(SYS_exit, 0);
  return NULL;
}

/* glibc ends the process (exit(0)) when its count of live threads drops to
 * zero, so a program whose last thread calls pthread_exit exits. The probe's
 * thread must not count, or that process lives on, a zombie leader with
 * every signal blocked. The counter is glibc-private (2.34 and later): where
 * it is missing the probe goes on counted, as before. */
static unsigned *libc_thread_count(void) {
  void *p = dlvsym(RTLD_DEFAULT, "__nptl_nthreads", "GLIBC_PRIVATE");
  return p;
}

int tm_sampler_start(tm_session *s) {
  create_fn create;
  if (!next_fn("pthread_create", &create)) {
    errno = ENOSYS;
    return -1;
  }
  atomic_store(&stop_requested, 0);
  sampler_started_ns = tm_now_ns();
  single_before_us = __libc_single_threaded;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits it */
  int err = create(&sampler_handle, NULL, sampler_main, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err) {
    errno = err;
    return -1;
  }
  unsigned *count = libc_thread_count();
  if (count) __atomic_fetch_sub(count, 1, __ATOMIC_ACQ_REL);
  uncounted = count != NULL;
  sampler_running = true;
  return 0;
}

bool tm_sampler_handoff(void (*fn)(void), int timeout_ms) {
  if (!sampler_running || on_sampler_thread) return false;
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += timeout_ms / 1000;
  deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
  if (deadline.tv_nsec >= 1000000000L) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000000000L;
  }
  atomic_store(&handoff_done, 0);
  atomic_store(&handoff_fn, fn);
  syscall(SYS_futex, &stop_requested, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
  int saved = errno;
  while (!atomic_load(&handoff_done)) {
    long r = syscall(SYS_futex, &handoff_done, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0,
                     &deadline, NULL, FUTEX_BITSET_MATCH_ANY);
    if (r < 0 && errno == ETIMEDOUT) break;
  }
  errno = saved;
  return atomic_load(&handoff_done) != 0;
}

void tm_sampler_stop_after_handoff(void) { atomic_store(&stop_requested, 1); }

void tm_sampler_final_tick(tm_session *s) {
  final_tick = true;
  tm_sampler_tick(s);
  final_tick = false;
}

void tm_sampler_stop(void) {
  if (!sampler_running) return;
  atomic_store(&stop_requested, 1);
  syscall(SYS_futex, &stop_requested, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
  join_fn join;
  if (next_fn("pthread_join", &join)) join(sampler_handle, NULL);
  sampler_running = false;
}

bool tm_sampler_pause(bool paused) {
  atomic_store(&pause_requested, paused ? 1 : 0);
  if (!paused) return true;
  /* Wait (bounded) for a tick in progress to finish, so a fork child does
   * not inherit half-updated buffers. */
  for (int i = 0; i < 200 && atomic_load(&in_tick); i++) {
    struct timespec ts = {0, 250000};
    nanosleep(&ts, NULL);
  }
  return !atomic_load(&in_tick);
}

bool tm_sampler_program_single_threaded(void) {
  if (!sampler_running || !uncounted || !single_before_us) return false;
  if (atomic_load_explicit(&tm_program_created_thread, memory_order_relaxed)) return false;
  unsigned *count = libc_thread_count();
  return count && __atomic_load_n(count, __ATOMIC_ACQUIRE) == 1;
}

void tm_sampler_forget(void) {
  while (all_states) state_free(all_states);
  /* Records of the parent's threads: their tids mean nothing here. */
  free(tids);
  tids = NULL;
  tids_cap = tids_used = 0;
  live_dropped = 0;
  objects_walked = 0;
  for (uint32_t id = 1, last = tm_objects_last_id(); id <= last; id++) {
    tm_object *o = tm_object_by_id(id);
    if (o) atomic_store_explicit(&o->described, 0, memory_order_relaxed);
  }
  if (obj_state) memset(obj_state, 0, obj_state_cap * sizeof *obj_state);
  transitions.n = switches.n = 0;
  switches_urgent = switches_stopping = false;
  rate_window_start = rate_window_records = 0;
  unknown_before.n = unknown_now.n = 0;
  last_rescan_ns = last_listing_ns = 0;
  known_live = 0;
  memset(visit, 0, sizeof visit);
  memset(hot, 0, sizeof hot);
  for (unsigned i = 0; i < WHEEL_TICKS; i++) wheel[i].n = 0;
  visit_all = true;
  sampler_running = false; /* the thread does not exist in a fork child */
  uncounted = false;     /* and glibc counts the child from 1 */
  atomic_store(&in_tick, 0);
  atomic_store(&pause_requested, 0);
  untracked_noticed = false;
  sampler_cpu_ns = 0;
  gap_end_n = 0;
  tm_sites_wire_forget();
  tm_ut_wire_forget();
  tm_hidden_forget();
}
