/* The tick: one sampling pass, its stages in order (sampler_state.h):
 * transport upkeep, the task rescan, switch records (and the rate limit),
 * the walk over the slots the plan visits (drain, plan, read, describe,
 * end), the objects, then the Tick frame and the thread ends. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sampler_state.h"
#include "session.h"
#include "sites.h"
#include "sites_wire.h"
#include "task_rescan.h"
#include "thread_read.h"
#include "userthreads.h"
#include "userthreads_wire.h"

#define DRAIN_CHUNK 256
/* How long an ended thread's record waits for a late name. */
#define RENAME_GRACE_NS 20000000u

/* ---- the walk ---- */

static void drain_uring(tm_session *s, tm_thread *t, tm_sampler_thread *st) {
  tm_sampler *m = &s->smp;
  tm_uring *u = atomic_load_explicit(&t->uring, memory_order_acquire);
  if (!u) return;
  tm_event ev[DRAIN_CHUNK];
  uint32_t n, total = 0;
  while (total < TM_URING_EVENTS && (n = tm_uring_drain(u, ev, DRAIN_CHUNK)) > 0) {
    for (uint32_t i = 0; i < n; i++) tm_ut_wire_event(s, t->tid, &ev[i]);
    total += n;
  }
  uint64_t d = atomic_load_explicit(&u->dropped, memory_order_relaxed);
  m->threads.live_dropped += d - st->udropped;
  st->udropped = d;
}

static bool uring_pending(const tm_thread *t) {
  tm_uring *u = atomic_load_explicit(&t->uring, memory_order_acquire);
  return u && atomic_load_explicit(&u->head, memory_order_acquire) !=
                  atomic_load_explicit(&u->tail, memory_order_relaxed);
}

/* Returns the events drained. */
static uint32_t drain_ring(tm_session *s, tm_thread *t, tm_sampler_thread *st) {
  tm_sampler *m = &s->smp;
  batch *transitions = &m->fr.transitions;
  tm_event ev[DRAIN_CHUNK];
  uint32_t n, total = 0;
  drain_uring(s, t, st);
  const uint64_t room = tm_ring_capacity(&t->ring);
  while (total < room && (n = tm_ring_drain(&t->ring, ev, DRAIN_CHUNK)) > 0) {
    uint32_t states = 0;
    for (uint32_t i = 0; i < n; i++) {
      if (ev[i].state >= TM_EV_USER_SWITCH) {
        tm_ut_wire_event(s, t->tid, &ev[i]);
        continue;
      }
      ev[states++] = ev[i];
      if (transitions->n >= BATCH_MAX) tm_flush_transitions(s);
      tm_batch_push(transitions, ev[i].time_ns, t->tid, (int)ev[i].state, ev[i].object_id,
                 ev[i].holder_tid, ev[i].releaser_tid);
      if (ev[i].state == TM_STATE_RUNNING) {
        st->ev_run_from = ev[i].time_ns;
      } else if (st->ev_run_from) {
        if (ev[i].time_ns > st->ev_run_from) st->ev_ran_ns += ev[i].time_ns - st->ev_run_from;
        st->ev_run_from = 0;
      }
    }
    total += n;
    st->ev_tick = m->tick_no;
    if (!states) continue; /* only user-thread switches: its state is as it was */
    st->last_time = ev[states - 1].time_ns;
    st->last_state = (int)ev[states - 1].state;
    st->last_obj = ev[states - 1].object_id;
  }
  /* Three quarters of its ring or more since its last drain: a larger ring
   * while any is left, before a late tick folds its changes (draining it
   * more often took the program's CPU: docs/benchmarks.md, "Rings drained
   * between ticks"). */
  if (!st->ring_offered &&
      (total >= TM_RING_EVENTS / 4 * 3 ||
       atomic_load_explicit(&t->folded, memory_order_relaxed) != st->folded))
    st->ring_offered = tm_ring_offer_growth(t);
  return total;
}

/* The slots a tick visits are scattered: the first touch of each record,
 * state and ring was most of what 10,000 light threads cost the sampler.
 * Slots are fetched ahead in two steps: the record's fields, its ring
 * indices and its state, then (once the tail is in cache) the ring's next
 * events, a page of their own. */
#define PREFETCH_AHEAD 16

static void prefetch_slot(const tm_thread_states *ts, uint32_t i, bool events) {
  if (i == UINT32_MAX) return;
  const tm_thread *t = tm_thread_slot(i);
  if (events) {
    uint64_t tail = atomic_load_explicit(&t->ring.tail, memory_order_relaxed);
    /* The smallest ring's mask: in bounds whichever array it has. */
    __builtin_prefetch(
        &atomic_load_explicit(&t->ring.ev, memory_order_relaxed)[tail & (TM_RING_EVENTS - 1)]);
    return;
  }
  __builtin_prefetch(t);
  __builtin_prefetch(&t->attr_version); /* with cur_state */
  __builtin_prefetch(&t->ring.head);
  __builtin_prefetch(&t->ring.tail);
  if (ts->slab) __builtin_prefetch(&ts->slab[i]); /* no load: it may have none */
}

/* Records were lost, or resume after a pause: no thread's last record is
 * known (tm_switch_forget). One blocked in a wrapped call with every event
 * drained is off the CPU since its last event, and its next switch brings
 * a record: its events say what it did since its last read, as without
 * records (a thread that only woke for moments is read when that is due, one
 * blocked since its last read not at all). The others are read and settled
 * by their kernel state: a resume or a loss costs what the unsettled threads
 * do, not a read of every thread (docs/benchmarks.md, "Behind the comments"). */
static void settle_from_events(const tm_thread *t, tm_sampler_thread *st) {
  uint32_t cur = *(volatile const uint32_t *)&t->cur_state;
  uint64_t head = atomic_load_explicit(&t->ring.head, memory_order_acquire);
  if (st->sw_kind != SW_UNKNOWN || cur <= TM_STATE_RUNNING || cur == TM_STATE_BLOCKED_SPIN ||
      st->ev_run_from || head != atomic_load_explicit(&t->ring.tail, memory_order_relaxed))
    return;
  st->sw_kind = TM_SWITCH_OUT;
  /* Its last record (kept by tm_switch_forget) may be later than its last
   * event: a light wake-up inside the call whose read was deferred. Taking
   * the event's time left that read undone (not "ran since its read"). */
  if (st->last_time > st->sw_time) st->sw_time = st->last_time;
  /* Never read: only one still waiting where its records left it. */
  if (!st->have_sched) {
    if (head != st->wait_head) st->sw_kind = SW_UNKNOWN;
    return;
  }
  st->in_time = 0;
  if (st->ev_ran_ns > st->ran_ns) st->ran_ns = st->ev_ran_ns;
  if (st->ev_tick > st->sw_tick) st->sw_tick = st->ev_tick;
}

/* One slot's visit; true when it must be visited next tick again. *grace
 * counts ended threads kept for a late name. full: read it whatever its
 * records say; resync: its records were lost or paused or resume
 * (settle_from_events). */
static bool visit_slot(tm_session *s, uint32_t i, bool full, bool resync, uint32_t *grace) {
  tm_sampler *m = &s->smp;
  const tm_thread_states *ts = &m->threads;
  tm_thread *t = tm_thread_slot(i);
  int state = atomic_load_explicit(&t->slot_state, memory_order_acquire);
  if (state != TM_SLOT_LIVE && state != TM_SLOT_EXITED) {
    tm_visit_resting(&m->plan, i, false);
    return false;
  }
  tm_sampler_thread *st = tm_state_of_slot(ts, i);
  if (st && (st->owner != t || st->tid != t->tid)) {
    tm_state_free(m, st); /* the slot holds another thread now */
    st = NULL;
  }
  if (!st && !(st = tm_state_new(m, t, i))) return true; /* out of memory: try again */
  if (!st->attr_sent) {
    tm_emit_thread_begun(s, t, st, state == TM_SLOT_LIVE, TM_TO_ALL);
    st->attr_sent = 1; /* attr_version 0: sent with the start */
  }
  uint32_t av = atomic_load_explicit(&t->attr_version, memory_order_acquire);
  if (av + 1 != st->attr_sent) {
    tm_emit_thread_attr(s, t, TM_TO_ALL);
    st->attr_sent = av + 1;
  }
  /* Without records its events are what says whether it ran: drained
   * before planning (see read_plan). So for a thread whose records were
   * lost, paused or resumed and that no record has placed since: settled
   * by its events at its first visit after that, resync or not (one
   * resting there was not visited by the resync). */
  bool unplaced = s->src_perf_switch && st->covered && st->sw_kind == SW_UNKNOWN;
  if (!s->src_perf_switch || !st->covered || resync || unplaced) {
    if (drain_ring(s, t, st) && !t->is_probe) m->program_ran = true;
  }
  if (unplaced && state == TM_SLOT_LIVE) settle_from_events(t, st);
  uint64_t due = 0;
  uint64_t head = atomic_load_explicit(&t->ring.head, memory_order_acquire);
  int how = state == TM_SLOT_EXITED ? READ_ALL : tm_read_plan(s, m->tick_no, st, full, &due);
  /* Never read and waiting, by its records: its head then (read_plan). */
  if (how == READ_NONE && !st->have_sched) st->wait_head = head;
  /* The sampler itself is on a CPU at every tick: reading it about every
   * CPUSTAT_NS is enough to show what it costs, and its reads are the
   * first system calls after a wake-up, the slowest of the tick. */
  bool self = t->is_probe && t->tid == s->probe_tid;
  if (how == READ_ALL && !full && self && st->have_sched && !tm_cpustat_tick(s, m->tick_no)) how = READ_NONE;
  if (how == READ_ALL || st->sw_tick == m->tick_no) {
    /* Only a thread that ran pushes events or drops them (one that ran
     * and blocked again may be left unread: see read_plan). */
    drain_ring(s, t, st);
    uint64_t d = atomic_load_explicit(&t->ring.dropped, memory_order_relaxed);
    m->threads.live_dropped += d - st->dropped;
    st->dropped = d;
    uint64_t fc = atomic_load_explicit(&t->folded, memory_order_relaxed);
    m->threads.live_folded += fc - st->folded;
    st->folded = fc;
    if (!t->is_probe) m->program_ran = true;
  }
  if (state == TM_SLOT_LIVE) {
    tm_thread_read(s, t, st, how);
    if (due) tm_visit_at(&m->plan, m->tick_no, i, due);
    else tm_visit_cancel(&m->plan, i);
    /* Blocked for good (READ_NONE): its next record or event brings it
     * back, except a hidden wait, counted every tick it lasts, and events
     * left in its ring by a drain's bound. */
    bool again = how != READ_NONE || st->futex_addr || self || uring_pending(t) ||
                 atomic_load_explicit(&t->ring.head, memory_order_acquire) !=
                     atomic_load_explicit(&t->ring.tail, memory_order_relaxed);
    /* Resting: a resync need not visit it, even with a deferred read due
     * (the wheel brings it back for that). */
    uint32_t cur = *(volatile uint32_t *)&t->cur_state;
    tm_visit_resting(&m->plan, i, !again && cur > TM_STATE_RUNNING && cur != TM_STATE_BLOCKED_SPIN);
    return again;
  }
  tm_visit_resting(&m->plan, i, false);
  /* Its program may still name it through its pthread_t (a name set
   * just after a short thread ended): the record waits RENAME_GRACE_NS
   * after the end, then its attributes are sealed. */
  uint64_t end_at = atomic_load_explicit(&t->end_ns, memory_order_relaxed);
  if (!m->final_tick && end_at && tm_sampler_now(m) - end_at < RENAME_GRACE_NS) {
    ++*grace;
    return true;
  }
  tm_thread_seal(t);
  av = atomic_load_explicit(&t->attr_version, memory_order_acquire);
  if (av + 1 != st->attr_sent) {
    tm_emit_thread_attr(s, t, TM_TO_ALL);
    st->attr_sent = av + 1;
  }
  uint64_t end_ns = atomic_load_explicit(&t->end_ns, memory_order_relaxed);
  tm_note_end(&m->fr, t, end_ns ? end_ns : tm_sampler_now(m),
           atomic_load_explicit(&t->end_cpu_ns, memory_order_relaxed));
  s->events_dropped += st->dropped + st->udropped;
  s->events_folded += st->folded;
  tm_state_free(m, st);
  tm_thread_release(t);
  return false;
}

/* full: read every thread whatever its records say (the final tick);
 * resync: visit every thread, each read as its plan says (visit_slot).
 * Returns the live threads known, visited or not: every
 * state is a LIVE thread but those ended ones. */
static uint32_t walk_threads(tm_session *s, bool full, bool resync) {
  tm_sampler *m = &s->smp;
  const tm_thread_states *ts = &m->threads;
  uint32_t grace = 0;
  uint32_t n = tm_visit_collect(&m->plan, tm_threads_high_water(), full, resync);
  const uint32_t *order = m->plan.order;
  m->counts.visited = n;
  for (uint32_t k = 0; k < n; k++) {
    prefetch_slot(ts, k + PREFETCH_AHEAD < n ? order[k + PREFETCH_AHEAD] : UINT32_MAX, false);
    prefetch_slot(ts, k + PREFETCH_AHEAD / 2 < n ? order[k + PREFETCH_AHEAD / 2] : UINT32_MAX, true);
    if (visit_slot(s, order[k], full, resync, &grace)) tm_visit_hot(&m->plan, order[k]);
  }
  return ts->count - grace;
}

/* A pause closes the events when they can be opened again at its end for
 * at most this many descriptors (threads x CPUs): a disabled event still
 * costs the kernel its thread's perf context at every switch, which a
 * paused program paid for the rest of its run (docs/benchmarks.md, "Behind
 * the comments"). Past it, the per-thread descriptors would weigh on the
 * probe's budget (procfs.h): the events are only disabled. */
#define REOPEN_MAX_EVENTS 64

static bool can_drop_switch_records(const tm_session *s) {
  const tm_sampler *m = &s->smp;
  uint64_t events =
      (uint64_t)m->rescan.known_live * (uint64_t)(s->perf.ncpu > 0 ? s->perf.ncpu : 1);
  return !m->switch_source && m->rescan.known_live && events <= REOPEN_MAX_EVENTS && tm_fds_spare();
}

enum pause_why { PAUSE_BUDGET, PAUSE_SWITCHES, PAUSE_CREATES };

/* Over the rate limit, in a storm of short-lived threads or at the
 * budget's records step: the records pause (the last batch says so),
 * states come from each tick's /proc reads as without records, until they
 * resume: after the limits' pause, once the budget allows. */
static void pause_switch_records(tm_session *s, uint64_t now, enum pause_why why) {
  tm_sampler *m = &s->smp;
  m->fr.switches_stopping = true;
  tm_flush_switches(s, now, true);
  m->fr.switches_stopping = false;
  s->perf_switch_dropped = can_drop_switch_records(s);
  if (s->perf_switch_dropped)
    tm_perf_switch_drop(&s->perf);
  else
    tm_perf_switch_enable(&s->perf, false);
  s->src_perf_switch = false;
  s->perf_switch_paused = true;
  tm_switch_forget(m);
  if (why == PAUSE_BUDGET) {
    m->sw.resume_at = now; /* the budget's Notice said why */
    return;
  }
  uint64_t pause = tm_switch_pause_for(&m->sw, now);
  char text[300];
  if (why == PAUSE_SWITCHES)
    snprintf(text, sizeof text,
             "switch records paused for %llu s: the program switched more than %llu times a "
             "second per CPU (THREADMON_MAX_SWITCH_RATE); states meanwhile are split by "
             "schedstat per tick",
             (unsigned long long)(pause / 1000000000u),
             (unsigned long long)s->cfg.max_switch_rate);
  else
    snprintf(text, sizeof text,
             "switch records paused for %llu s: the program made more than %llu threads a second "
             "that ended as fast (THREADMON_MAX_CREATE_RATE x 4 / CPUs), each a copy of the "
             "probe's switch events; states meanwhile are split by schedstat per tick",
             (unsigned long long)(pause / 1000000000u),
             (unsigned long long)(4 * s->cfg.max_create_rate /
                                  (uint64_t)(s->perf.ncpu > 0 ? s->perf.ncpu : 1)));
  tm_emit_notice(s, text, TM_TO_ALL);
}

/* The pause is over: records again, every thread's state from its next
 * one (what came before the pause is stale: discarded). */
static void drop_record(void *arg, uint32_t tid, uint64_t time_ns, uint32_t cpu, int kind) {
  (void)arg, (void)tid, (void)time_ns, (void)cpu, (void)kind;
}

/* Whether set holds tid, other than skip (unsorted: a scan). */
static bool listed(const tid_set *set, uint32_t tid, uint32_t skip) {
  if (tid == skip) return true;
  for (size_t i = 0; i < set->n; i++)
    if (set->v[i] == tid) return true;
  return false;
}

/* The events of a dropped pause, opened again on every thread alive (the
 * first one's rings, the others' events writing into them, each inherited
 * by the threads it creates). A thread that a not yet opened one creates
 * meanwhile is found by a second listing; only one made in the moment
 * after that by such a thread goes without records (its states then come
 * from /proc, as during a pause). */
static bool reopen_switch_records(tm_session *s, char *why, size_t wn) {
  tm_sampler *m = &s->smp;
  int ncpu = s->perf.ncpu;
  tid_set first = {0}, again = {0};
  bool ok = tm_list_tasks(&m->proc, tm_tid_set_add, &first) == 0;
  size_t n = 0; /* the probe's own thread left out */
  for (size_t i = 0; ok && i < first.n; i++)
    if (first.v[i] != s->probe_tid) first.v[n++] = first.v[i];
  first.n = n;
  ok = ok && n && tm_perf_switch_open_threads(&s->perf, first.v, n, why, wn);
  if (ok && tm_list_tasks(&m->proc, tm_tid_set_add, &again) == 0)
    for (size_t i = 0; i < again.n; i++)
      if (!listed(&first, again.v[i], s->probe_tid) &&
          tm_perf_switch_add_thread(&s->perf, again.v[i]) < 0)
        break; /* that thread goes without records */
  if (!ok) {
    if (!why[0]) snprintf(why, wn, "no thread to open them on");
    s->perf.ncpu = ncpu;
  }
  free(first.v);
  free(again.v);
  return ok;
}

static void resume_switch_records(tm_session *s, uint64_t now) {
  tm_sampler *m = &s->smp;
  if (s->perf_switch_dropped) {
    char why[200] = "";
    s->perf_switch_dropped = false;
    if (!reopen_switch_records(s, why, sizeof why)) {
      s->perf_switch_paused = false;
      tm_switch_forget(m);
      char text[300];
      snprintf(text, sizeof text, "switch records stopped for the rest of the run: %s", why);
      tm_emit_notice(s, text, TM_TO_ALL);
      return;
    }
  } else {
    if (!m->switch_source) tm_perf_switch_drain(&s->perf, drop_record, NULL);
    tm_perf_switch_enable(&s->perf, true);
  }
  s->perf.lost = 0;
  s->src_perf_switch = true;
  s->perf_switch_paused = false;
  tm_switch_forget(m);
  tm_switch_resumed(&m->sw, now);
  tm_emit_notice(s, "switch records resumed", TM_TO_ALL);
}

/* Over the thread-creation limit: the events are closed for the rest of
 * the run (a thread made while they are closed could only get them back
 * through a descriptor per thread and CPU), and new threads cost the kernel
 * nothing more. States come from each tick's /proc reads. */
static void close_switch_records(tm_session *s, uint64_t now) {
  tm_sampler *m = &s->smp;
  if (s->src_perf_switch) {
    m->fr.switches_stopping = true;
    tm_flush_switches(s, now, true);
    m->fr.switches_stopping = false;
  }
  int ncpu = s->perf.ncpu;
  tm_perf_switch_close(&s->perf);
  s->src_perf_switch = s->perf_switch_paused = s->perf_switch_dropped = false;
  tm_switch_forget(m);
  char text[300];
  snprintf(text, sizeof text,
           "switch records stopped for the rest of the run: the program kept creating more than "
           "%llu threads a second (THREADMON_MAX_CREATE_RATE / %d CPUs), and each new thread "
           "cost the kernel a copy of the probe's switch event for every CPU; states are split "
           "by schedstat per tick",
           (unsigned long long)(s->cfg.max_create_rate / (uint64_t)(ncpu > 0 ? ncpu : 1)), ncpu);
  tm_emit_notice(s, text, TM_TO_ALL);
}

/* An object's counter as the sampler reads it: an _Atomic one relaxed, a
 * plain one (counted under the object's own lock) as its owner left it. */
static inline uint64_t sync_counter_atomic(_Atomic uint64_t *c) {
  return atomic_load_explicit(c, memory_order_relaxed);
}
static inline uint64_t sync_counter_plain(uint64_t *c) {
  return *(volatile uint64_t *)c;
}
#define sync_counter_load(c) \
  _Generic((c), _Atomic uint64_t * : sync_counter_atomic, default : sync_counter_plain)(c)

static void walk_objects(tm_session *s, bool keyframe) {
  tm_sampler *m = &s->smp;
  tm_object_walk *w = &m->objects;
  uint32_t last = tm_objects_last_id();
  /* Only program threads change objects (and the sampler, through hidden
   * waits): when none ran since the last walk, nothing can have moved, and
   * a program with many objects and idle threads costs nothing per tick. */
  if (!keyframe && !m->program_ran && !m->hidden_noted && last == w->walked) return;
  w->walked = last;
  if (last > w->cap) {
    uint32_t cap = w->cap ? w->cap : 256;
    while (cap < last) cap *= 2;
    obj_sent *o = realloc(w->sent, cap * sizeof *o);
    if (!o) return;
    memset(o + w->cap, 0, (cap - w->cap) * sizeof *o);
    w->sent = o;
    w->cap = cap;
  }
  for (uint32_t id = 1; id <= last; id++) {
    tm_object *o = tm_object_by_id(id);
    if (!o) continue;
    uint32_t described = atomic_load_explicit(&o->described, memory_order_relaxed);
    bool stack = atomic_load_explicit(&o->has_stack, memory_order_acquire) == 1;
    if (described == 0 || (stack && described == 1)) {
      tm_emit_sync_object(s, o, stack, TM_TO_ALL);
      atomic_store_explicit(&o->described, stack ? 2 : 1, memory_order_relaxed);
    }
    obj_sent *p = &w->sent[id - 1];
    obj_sent now;
#define TM_SYNC_COUNTER(field, ...) now.field = sync_counter_load(&o->field);
#include "counters.def"
    static const obj_sent zero;
    if (!memcmp(&now, p, sizeof now) && (!keyframe || !memcmp(&now, &zero, sizeof now))) continue;
    *p = now;
    Threadmon__SyncStats *st = tm_sync_add(&m->fr);
    if (!st) continue;
    st->id = o->id;
#define TM_SYNC_COUNTER(field, ...) st->field = now.field;
#include "counters.def"
  }
}

/* The Tick's per-CPU times, about every CPUSTAT_NS (read_plan.h);
 * returns how many are in m->fr.cpu_ptrs. */
static size_t cpu_samples(tm_session *s, bool full) {
  tm_frames *fr = &s->smp.fr;
  if (!s->src_proc_stat) return 0;
  if (s->cpus.cap > fr->cpu_cap) {
    Threadmon__CpuSample *msgs = realloc(fr->cpu_msgs, s->cpus.cap * sizeof *msgs);
    if (msgs) fr->cpu_msgs = msgs;
    Threadmon__CpuSample **p = msgs ? realloc(fr->cpu_ptrs, s->cpus.cap * sizeof *p) : NULL;
    if (p) {
      fr->cpu_ptrs = p;
      fr->cpu_cap = s->cpus.cap;
    }
  }
  if (!(full || tm_cpustat_tick(s, s->smp.tick_no)) || fr->cpu_cap < s->cpus.cap ||
      !tm_cpustat_read(&s->cpus))
    return 0;
  size_t n = 0;
  for (unsigned i = 0; i < s->cpus.count; i++) {
    const tm_cpu_times *c = &s->cpus.cpus[i];
    Threadmon__CpuSample *cs = &fr->cpu_msgs[n];
    threadmon__cpu_sample__init(cs);
    cs->cpu = c->cpu;
#define TM_CPU_COUNTER(field, ...) cs->field = c->field;
#include "counters.def"
    fr->cpu_ptrs[n++] = cs;
  }
  return n;
}


void tm_tick_run(tm_session *s, bool own_thread) {
  tm_sampler *m = &s->smp;
  m->own_thread = own_thread;
  m->counts = (tm_tick_counts){0};
  uint64_t now = tm_sampler_now(m);
  tm_transport_batch_begin(&s->tx, now);
  if (s->tx.net != TM_NET_OFF) tm_transport_pump(&s->tx, now);
  if (s->tx.needs_preamble) {
    /* A new connection (seen by this pump or the previous tick's last
     * one): it needs the session from the start, before any other frame. */
    s->tx.needs_preamble = false;
    tm_session_send_hello(s, TM_TO_NET);
    tm_send_descriptions(s, TM_TO_NET);
  }
  tm_transport_check_file(&s->tx);
  if (tm_transport_file_wants_resync(&s->tx, now, !m->own_thread || m->final_tick))
    tm_resync_file(s);
  if (s->tx.file_replaced != s->tx.file_replaced_noted && s->tx.file_fd >= 0 && !s->tx.file_resync) {
    s->tx.file_replaced_noted = s->tx.file_replaced;
    tm_emit_notice(s, "the program closed or replaced the capture's descriptor: the probe "
                      "reopened the file, nothing was lost", TM_TO_FILE);
  }
  m->tick_no++;
  /* The wrappers' TSC wait clock (probe.h); its first call reads
   * /proc/cpuinfo, which the final tick on a program thread should not. */
  if (m->own_thread) tm_clock_calibrate();
  tm_rescan_tick(m, now);
  m->fr.lwp_n = m->fr.sync_n = m->fr.end_n = 0;
  /* The final tick (on the thread that ends the session after the sampler
   * stopped, or handed to the sampler) reads everything, whatever the
   * records say. */
  bool full = !m->own_thread || m->final_tick;
  /* Records lost, paused or resumed: every thread visited, not read. */
  bool resync = false;
  m->program_ran = full;
  m->hidden_noted = false;
  /* Switch records first: they say which threads need reading. */
  bool budget_off = tm_budget_records_off(m->budget.level);
  if (s->perf_switch_paused && m->own_thread && now >= m->sw.resume_at && !budget_off) {
    resume_switch_records(s, now);
    resync = m->program_ran = true;
  }
  if (s->src_perf_switch) {
    m->sw.probe_tid = s->probe_tid;
    uint64_t lost = s->perf.lost;
    m->sw.drained = 0;
    if (m->switch_source) m->switch_source(s, tm_switch_record, m);
    else tm_perf_switch_drain(&s->perf, tm_switch_record, m);
    if (s->perf.lost != lost) {
      tm_switch_forget(m);
      resync = m->program_ran = true;
    }
    /* The first window runs from the session's start, when the records
     * began, not from the first tick: the records drained then were
     * written over that whole span, and a storm is judged a tick sooner. */
    if (m->own_thread && !m->sw.rate_window_start && !m->sw.resumed_at && s->start_ns &&
        s->start_ns < now)
      m->sw.rate_window_start = s->start_ns;
    if (m->own_thread &&
        tm_switch_rate_exceeded(&m->sw, s->cfg.max_switch_rate, s->perf.ncpu, now,
                                m->sw.drained + s->perf.lost - lost)) {
      pause_switch_records(s, now, PAUSE_SWITCHES);
      resync = m->program_ran = true;
    } else if (m->own_thread && budget_off) {
      pause_switch_records(s, now, PAUSE_BUDGET);
      resync = m->program_ran = true;
    } else if (m->own_thread &&
               tm_create_storm(&m->sw, s->cfg.max_create_rate, s->perf.ncpu, now,
                               tm_threads_claimed()) &&
               can_drop_switch_records(s)) {
      pause_switch_records(s, now, PAUSE_CREATES);
      resync = m->program_ran = true;
    }
  }
  if ((s->src_perf_switch || s->perf_switch_paused) && m->own_thread &&
      tm_create_rate_exceeded(&m->sw, s->cfg.max_create_rate, s->perf.ncpu, now,
                              tm_threads_claimed())) {
    close_switch_records(s, now);
    resync = m->program_ran = true;
  }
  tm_visit_take_due(&m->plan, m->tick_no);
  uint32_t live = m->rescan.known_live = walk_threads(s, full, resync);
  const bool keyframe = now >= m->objects.keyframe_at;
  if (keyframe) {
    m->objects.keyframe_at = now + TM_KEYFRAME_NS;
    m->sites.all = true;
  }
  walk_objects(s, keyframe);
  /* After the objects: a site's object is described before its stats. */
  Threadmon__SiteStats **sites;
  size_t nsites = tm_sites_wire_tick(s, &sites, m->program_ran || m->hidden_noted);
  tm_flush_transitions(s);
  tm_ut_wire_tick(s);
  if (s->src_perf_switch) tm_flush_switches(s, now, full || resync);

  size_t ncpu = cpu_samples(s, full || resync);

  /* Kept up to date by the walk: no second pass over the registry. */
  uint64_t dropped = s->events_dropped + m->threads.live_dropped;
  if (m->own_thread) m->sampler_cpu_ns = tm_thread_cpu_ns();
  s->events_dropped_total = dropped;
  Threadmon__ProbeStats ps = THREADMON__PROBE_STATS__INIT;
  ps.events_dropped = dropped;
  ps.frames_dropped = s->tx.frames_dropped;
  ps.bytes_sent = s->tx.bytes_sent;
  ps.sampler_cpu_ns = m->sampler_cpu_ns;
  ps.threads_tracked = live;
  ps.events_folded = s->events_folded + m->threads.live_folded;

  for (size_t i = 0; i < m->fr.lwp_n; i++) m->fr.lwp_ptrs[i] = &m->fr.lwps[i];
  for (size_t i = 0; i < m->fr.sync_n; i++) m->fr.sync_ptrs[i] = &m->fr.syncs[i];
  Threadmon__Tick tick = THREADMON__TICK__INIT;
  tick.seq = ++s->seq;
  tick.time_ns = now;
  tick.n_lwps = m->fr.lwp_n;
  tick.lwps = m->fr.lwp_ptrs;
  tick.n_cpus = ncpu;
  tick.cpus = m->fr.cpu_ptrs;
  tick.n_sync = m->fr.sync_n;
  tick.sync = m->fr.sync_ptrs;
  tick.n_sites = nsites;
  tick.sites = sites;
  tick.probe = &ps;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TICK;
  f.tick = &tick;
  tm_emit(s, &f, TM_TO_ALL);

  for (size_t i = 0; i < m->fr.end_n; i++) {
    tm_emit_thread_end(s, &m->fr.ends[i], TM_TO_ALL);
    if (m->fr.gap_end_n < GAP_ENDS_MAX) m->fr.gap_ends[m->fr.gap_end_n++] = m->fr.ends[i];
  }
  if (!m->untracked_noticed && (tm_threads_untracked() || tm_objects_untracked())) {
    m->untracked_noticed = true;
    tm_emit_notice(s, "thread or object table full: some are not tracked", TM_TO_ALL);
  }
  tm_transport_batch_end(&s->tx, tm_sampler_now(m), !m->own_thread || m->final_tick);
  if (!s->tx.file_resync && s->tx.batch_len == 0) m->fr.gap_end_n = 0; /* all in the file */
  if (s->tx.net != TM_NET_OFF) {
    tm_transport_pump(&s->tx, tm_sampler_now(m));
    tm_session_report_net(s, false);
  }
}
