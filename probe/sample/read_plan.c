#include "read_plan.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "perf_switch.h"
#include "session.h"

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
 * its last wake-up, or every LIGHT_REREAD_NS while it keeps waking: reads
 * at its wake-ups are most of what many mostly idle threads cost the sampler
 * (docs/benchmarks.md, "Behind the comments"). One that comes to rest is read
 * within 200 ms of its last record, so its counters are right while it rests. */
#define LIGHT_SETTLE_NS 150000000ull
#define LIGHT_REREAD_NS 1000000000ull
/* Without switch records (none, or stopped by the rate limit) the wrappers'
 * events are what says a thread ran: a thread blocked in a wrapped call
 * that pushed no event since a read made while it was in that call has
 * not left it. What it owns can only move by wake-ups inside the call
 * (a cond wait's spurious futex wake-ups): read again every IDLE_REREAD_NS
 * at most. One that left the call only for moments (under LIGHT_RAN_NS,
 * timed by its events, wall time) is read like one with records, every
 * LIGHT_REREAD_NS at most: so that thousands of sleeping threads cost little
 * once records stop (docs/benchmarks.md, "Behind the comments"). */
#define IDLE_REREAD_NS 10000000000ull
/* ---- which slots a tick visits ---- */

void tm_visit_mark(tm_visits *v, uint32_t slot) {
  if (slot < TM_MAX_THREADS) v->visit[slot / 64] |= 1ull << (slot % 64);
}

void tm_visit_hot(tm_visits *v, uint32_t slot) {
  if (slot < TM_MAX_THREADS) v->hot[slot / 64] |= 1ull << (slot % 64);
}

/* Ticks as due[] keeps them: 0 is "none". */
static uint32_t due_tick(uint64_t tick) { return (uint32_t)tick ? (uint32_t)tick : 1; }

/* Whether due tick d is after tick (both as due[] keeps them). */
static bool due_after(uint32_t d, uint32_t tick) { return d && (int32_t)(d - tick) > 0; }

/* The bucket tick an entry due at `at` waits in: within this turn. */
static uint32_t wheel_place(uint32_t at, uint32_t now) {
  return (int32_t)(at - now) < WHEEL_TICKS ? at : now + WHEEL_TICKS - 1;
}

static void wheel_put(tm_visits *v, uint32_t slot, uint32_t at) {
  wheel_bucket *b = &v->wheel[at % WHEEL_TICKS];
  if (b->n == b->cap) {
    uint32_t cap = b->cap ? b->cap * 2 : 64;
    uint32_t *p = realloc(b->slot, cap * sizeof *p);
    if (!p) {
      tm_visit_hot(v, slot); /* no room: look every tick */
      v->due[slot] = 0;
      return;
    }
    b->slot = p;
    b->cap = cap;
  }
  b->slot[b->n++] = slot;
}

void tm_visit_at(tm_visits *v, uint64_t tick_no, uint32_t slot, uint64_t due) {
  if (slot >= TM_MAX_THREADS) return;
  uint64_t delay = due > tick_no ? due - tick_no : 1;
  if (delay > INT32_MAX / 2) delay = INT32_MAX / 2;
  uint32_t at = due_tick(tick_no + delay), now = due_tick(tick_no);
  uint32_t had = v->due[slot];
  v->due[slot] = at;
  /* An entry no later than this one is in the wheel: it passes the slot on. */
  if (due_after(had, now) && (int32_t)(at - had) >= 0) return;
  wheel_put(v, slot, wheel_place(at, now));
}

void tm_visit_cancel(tm_visits *v, uint32_t slot) {
  if (slot < TM_MAX_THREADS) v->due[slot] = 0;
}

void tm_visit_take_due(tm_visits *v, uint64_t tick_no) {
  wheel_bucket *b = &v->wheel[tick_no % WHEEL_TICKS];
  uint32_t now = due_tick(tick_no);
  /* Entries moved on land in other buckets (wheel_place: less than a turn
   * ahead), never in this one. */
  uint32_t n = b->n;
  b->n = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t slot = b->slot[i], at = v->due[slot];
    if (at == now) {
      v->due[slot] = 0;
      tm_visit_mark(v, slot);
    } else if (due_after(at, now)) {
      wheel_put(v, slot, wheel_place(at, now));
    }
  }
}

void tm_visit_resting(tm_visits *v, uint32_t slot, bool resting) {
  if (slot >= TM_MAX_THREADS) return;
  uint64_t bit = 1ull << (slot % 64);
  if (resting) v->resting[slot / 64] |= bit;
  else v->resting[slot / 64] &= ~bit;
}

uint32_t tm_visit_collect(tm_visits *v, uint32_t hw, bool all, bool unrested) {
  uint32_t n = 0, words = (hw + 63) / 64;
  all = all || !v->settled;
  v->settled = true;
  for (uint32_t w = 0; w < words; w++) {
    uint64_t bits = v->visit[w] | v->hot[w] | tm_threads_take_touched(w);
    /* Marks above hw: slots claimed since it was read, met now too. */
    uint64_t below = w + 1 < words || hw % 64 == 0 ? ~0ull : (1ull << (hw % 64)) - 1;
    if (all) bits |= below;
    else if (unrested) bits |= below & ~v->resting[w];
    v->visit[w] = v->hot[w] = 0;
    for (; bits; bits &= bits - 1) v->order[n++] = w * 64 + (uint32_t)__builtin_ctzll(bits);
  }
  return n;
}

/* ---- what a visit reads ---- */

/* Whether a read of a thread that ran needs its stat file (see STAT_EVERY). */
bool tm_stat_due(const tm_session *s, const tm_sampler_thread *st, uint32_t cur,
                 uint64_t oncpu_ns, bool light, bool own_thread) {
  if (!st->have_stat || !own_thread) return true; /* first, or the final tick */
  if (light) return st->moved_reads % LIGHT_FULL_EVERY == 0;
  if (!s->src_perf_switch || !st->covered || st->sw_kind == SW_UNKNOWN) return true;
  uint64_t ran = oncpu_ns - st->stat_oncpu_ns;
  /* Blocked: outside wrapped calls only stat says in what; inside them its
   * counters stay as read now until it runs again, worth a read unless it
   * ran only a moment (a thread that wakes for microseconds) since a read
   * made while it was blocked. One read while it ran is short of its last
   * stretch: user and system time are each rounded down to a clock tick, so
   * even a little more CPU moves both. */
  if (st->sw_kind == TM_SWITCH_OUT &&
      (cur <= TM_STATE_RUNNING || ran >= STAT_BLOCKED_CPU_NS || (ran && !st->stat_blocked)))
    return true;
  return st->moved_reads % STAT_EVERY == 0 || ran >= STAT_CPU_NS;
}

/* On the CPU budget's lower steps ticks come less often (budget.h); the
 * rereads of threads that only wake for moments stretch by as much, or
 * what those cost (one read a second per thread) would not go down. */
static uint64_t stretch(const tm_session *s) {
  uint64_t asked = s->cfg.interval_asked_ns;
  return asked && s->cfg.interval_ns > asked ? s->cfg.interval_ns / asked : 1;
}

/* Whether a light thread's read waits (see LIGHT_SETTLE_NS), woke_tick
 * being the tick its last wake-up was seen in; *due: when it is due. */
static bool light_deferred(const tm_session *s, uint64_t tick_no, const tm_sampler_thread *st,
                           uint64_t woke_tick, uint64_t *due) {
  uint64_t every = s->cfg.interval_ns ? s->cfg.interval_ns : 1;
  uint64_t at = st->read_tick + LIGHT_REREAD_NS * stretch(s) / every;
  uint64_t settled = woke_tick + LIGHT_SETTLE_NS * stretch(s) / every;
  if (settled < at) at = settled;
  if (tick_no >= at) return false;
  *due = at;
  return true;
}

/* What this tick must read of a thread, from its switch records. A
 * READ_NONE that only defers a read sets *due to the tick it is due in
 * (else it stays 0: the thread's next record or event brings it back). */
int tm_read_plan(const tm_session *s, uint64_t tick_no, const tm_sampler_thread *st,
                 bool full, uint64_t *due) {
  if (full) return READ_ALL;
  uint64_t every = s->cfg.interval_ns ? s->cfg.interval_ns : 1;
  if (!s->src_perf_switch || !st->covered) {
    /* No records: the events (drained before planning) say it all; see
     * IDLE_REREAD_NS. */
    if (*(volatile uint32_t *)&st->owner->cur_state <= TM_STATE_RUNNING) return READ_ALL;
    uint64_t head = atomic_load_explicit(&st->owner->ring.head, memory_order_acquire);
    /* Never read, and waiting in a wrapped call since its records said
     * so (a pool's new worker when the records paused): as with them, read
     * when it runs, so that a pause does not read a whole idle pool at once. */
    if (!st->have_sched) {
      if (head == st->wait_head) return READ_NONE;
      /* Or born in the session without records (paused or closed) and
       * back in a wrapped call after running only a moment since its
       * birth by its events (its first RUNNING drained, the ring empty
       * now): the same, its wait_head is taken now; its counters began at
       * zero with it. A pool made in a creation burst trips the rate
       * limit, so most of its threads are born this way. */
      uint32_t cur = *(volatile uint32_t *)&st->owner->cur_state;
      bool moment = st->born_covered && cur != TM_STATE_BLOCKED_SPIN && st->ev_ran_ns > 0 &&
                    st->ev_ran_ns < LIGHT_RAN_NS && st->ev_run_from == 0 &&
                    head == atomic_load_explicit(&st->owner->ring.tail, memory_order_relaxed);
      return moment ? READ_NONE : READ_ALL;
    }
    uint64_t since = (tick_no - st->read_tick) * every;
    if (head == st->read_head && since < IDLE_REREAD_NS * stretch(s)) {
      *due = st->read_tick + IDLE_REREAD_NS * stretch(s) / every;
      return READ_NONE;
    }
    if (st->ev_ran_ns < LIGHT_RAN_NS && st->ev_run_from == 0 &&
        light_deferred(s, tick_no, st, st->ev_tick, due))
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
      light_deferred(s, tick_no, st, st->sw_tick, due))
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

bool tm_cpustat_tick(const tm_session *s, uint64_t tick_no) {
  uint64_t every = s->cfg.interval_ns ? CPUSTAT_NS / s->cfg.interval_ns : 1;
  return every <= 1 || tick_no % every == 1;
}

