#include "switch_track.h"

#include <stdlib.h>

#include "perf_switch.h"
#include "sampler_state.h"

#define PENDING_TICKS 500 /* records of a tid not (yet) ours, kept ~5 s */
/* Each switch of a thread with our events costs the kernel about 1.5 us
 * (docs/benchmarks.md, yield ping-pong): at 25,000 a second per CPU that is
 * 4% of every CPU. The rate is judged over windows of SWITCH_LIMIT_NS. */
#define SWITCH_LIMIT_NS 50000000ull
/* Far over the limit (SWITCH_QUICK_TIMES it) for SWITCH_QUICK_NS already,
 * the records pause without waiting for the window's end: the window's
 * 50 ms were most of what a short program of that kind paid once a pause
 * closes the events (docs/benchmarks.md, "Behind the comments"). */
#define SWITCH_QUICK_NS 10000000ull
#define SWITCH_QUICK_TIMES 4
/* A pause of records lasts SWITCH_PAUSE_NS, twice as long each time the
 * rate trips again within SWITCH_CALM_NS of a resume, up to
 * SWITCH_PAUSE_MAX_NS: a program that switches that fast for good costs
 * 50 ms of records a minute, one with a burst gets them back a second
 * after it. */
#define SWITCH_PAUSE_NS 1000000000ull
#define SWITCH_PAUSE_MAX_NS 64000000000ull
#define SWITCH_CALM_NS 10000000000ull

/* ---- tid -> state ---- */

static uint32_t tid_hash(const tm_switch_track *w, uint32_t tid) {
  return (tid * 0x9E3779B1u) & (w->tids_cap - 1);
}

tid_entry *tm_tid_find(tm_switch_track *w, uint32_t tid) {
  if (!w->tids_cap || !tid) return NULL;
  for (uint32_t i = tid_hash(w, tid);; i = (i + 1) & (w->tids_cap - 1)) {
    if (w->tids[i].tid == tid) return &w->tids[i];
    if (!w->tids[i].tid) return NULL;
  }
}

static bool tids_grow(tm_switch_track *w) {
  uint32_t cap = w->tids_cap ? w->tids_cap * 2 : 256;
  tid_entry *old = w->tids, *t = calloc(cap, sizeof *t);
  if (!t) return false;
  uint32_t old_cap = w->tids_cap;
  w->tids = t;
  w->tids_cap = cap;
  for (uint32_t i = 0; i < old_cap; i++) {
    if (!old[i].tid) continue;
    uint32_t j = tid_hash(w, old[i].tid);
    while (t[j].tid) j = (j + 1) & (cap - 1);
    t[j] = old[i];
  }
  free(old);
  return true;
}

tid_entry *tm_tid_get(tm_switch_track *w, uint32_t tid) {
  if (!tid) return NULL;
  tid_entry *e = tm_tid_find(w, tid);
  if (e) return e;
  if ((w->tids_used + 1) * 2 > w->tids_cap && !tids_grow(w)) return NULL;
  uint32_t i = tid_hash(w, tid);
  while (w->tids[i].tid) i = (i + 1) & (w->tids_cap - 1);
  w->tids[i] = (tid_entry){.tid = tid, .kind = SW_UNKNOWN};
  w->tids_used++;
  return &w->tids[i];
}

void tm_tid_remove(tm_switch_track *w, tid_entry *e) {
  tid_entry *tids = w->tids;
  uint32_t i = (uint32_t)(e - tids), mask = w->tids_cap - 1;
  /* Backward shift: move up every later entry of the run that may sit
   * before its home slot, so no probe sequence is broken. */
  for (uint32_t j = (i + 1) & mask; tids[j].tid; j = (j + 1) & mask) {
    uint32_t home = tid_hash(w, tids[j].tid);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      tids[i] = tids[j];
      i = j;
    }
  }
  tids[i].tid = 0;
  tids[i].st = NULL;
  w->tids_used--;
}

void tm_tids_prune(tm_switch_track *w, uint64_t tick_no) {
  for (uint32_t i = 0; i < w->tids_cap;) {
    tid_entry *e = &w->tids[i];
    if (e->tid && !e->st && e->tick + PENDING_TICKS < tick_no) {
      tm_tid_remove(w, e); /* may shift a later entry into i: look again */
      continue;
    }
    i++;
  }
}

/* ---- switch records ---- */

void tm_switch_record(void *arg, uint32_t tid, uint64_t time_ns, uint32_t cpu, int kind) {
  tm_sampler *m = arg;
  tm_frames *fr = &m->fr;
  m->sw.drained++;
  if (fr->switches.n < BATCH_MAX * 4) tm_batch_push(&fr->switches, time_ns, tid, kind, cpu, 0, 0);
  if (tid != m->sw.probe_tid) m->program_ran = fr->switches_urgent = true;
  tid_entry *e = tm_tid_get(&m->sw, tid);
  if (!e) return;
  tm_sampler_thread *st = e->st;
  if (!st) { /* not met by the walk yet: remember the latest record */
    if (e->kind == SW_UNKNOWN || time_ns >= e->time_ns) {
      e->kind = kind;
      e->cpu = (int)cpu;
      e->time_ns = time_ns;
    }
    e->tick = m->tick_no;
    if (kind == TM_SWITCH_OUT) e->vol++;
    else if (kind == TM_SWITCH_OUT_PREEMPT) e->invol++;
    return;
  }
  st->covered = true;
  st->sw_tick = m->tick_no;
  tm_visit_mark(&m->plan, st->slot);
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

void tm_switch_forget(tm_sampler *m) {
  for (tm_sampler_thread *st = m->threads.all; st; st = st->next) {
    st->sw_kind = SW_UNKNOWN;
    st->status_base = false;
  }
  for (uint32_t i = 0; i < m->sw.tids_cap; i++)
    if (m->sw.tids[i].tid && !m->sw.tids[i].st) m->sw.tids[i].counts_lost = true;
}

/* ---- the switch-rate limit ---- */

bool tm_switch_rate_exceeded(tm_switch_track *w, uint64_t max_rate, int ncpu, uint64_t now,
                             uint64_t records) {
  if (!max_rate) return false;
  if (!w->rate_window_start || now < w->rate_window_start) {
    w->rate_window_start = now;
    w->rate_window_records = 0;
  }
  w->rate_window_records += records;
  uint64_t span = now - w->rate_window_start;
  uint64_t cpus = ncpu > 0 ? (uint64_t)ncpu : 1;
  /* max_rate counts switches, and a switch is two records (out, then in):
   * comparing records with it paused at half the rate asked for (MariaDB
   * under sysbench, 11,700 switches a second per CPU, lost its records). */
  uint64_t allowed = 2 * max_rate * cpus * span;
  if (span >= SWITCH_QUICK_NS && span < SWITCH_LIMIT_NS &&
      w->rate_window_records * 1000000000u > SWITCH_QUICK_TIMES * allowed) {
    w->rate_window_start = now;
    w->rate_window_records = 0;
    return true;
  }
  if (span < SWITCH_LIMIT_NS) return false;
  bool over = w->rate_window_records * 1000000000u > allowed;
  w->rate_window_start = now;
  w->rate_window_records = 0;
  return over;
}

uint64_t tm_switch_pause_for(tm_switch_track *w, uint64_t now) {
  bool soon = w->resumed_at && now - w->resumed_at < SWITCH_CALM_NS;
  if (!w->backoff_ns || !soon) w->backoff_ns = SWITCH_PAUSE_NS;
  else if (w->backoff_ns < SWITCH_PAUSE_MAX_NS) w->backoff_ns *= 2;
  w->resume_at = now + w->backoff_ns;
  w->pauses++;
  return w->backoff_ns;
}

/* Half-second windows, two in a row: a pool of a few thousand threads made
 * at start-up keeps its records, a program that goes on making threads
 * loses them within a second. */
#define CREATE_WINDOW_NS 500000000ull
#define CREATE_WINDOWS_OVER 2

/* A window of thread creations from *start (claimed: the registry's
 * running count, *base at the start): once it is span_ns long, whether it
 * made threads faster than times x max_rate copies (threads x CPUs) a
 * second; the next window starts then. -1 while it is shorter. */
static int creations_over(uint64_t *start, uint64_t *base, uint64_t span_ns, uint64_t times,
                          uint64_t max_rate, int ncpu, uint64_t now, uint64_t claimed) {
  if (!*start || now < *start) {
    *start = now;
    *base = claimed;
    return -1;
  }
  uint64_t span = now - *start;
  if (span < span_ns) return -1;
  uint64_t copies = (claimed - *base) * (uint64_t)(ncpu > 0 ? ncpu : 1);
  *start = now;
  *base = claimed;
  return copies * 1000000000u > times * max_rate * span;
}

bool tm_create_rate_exceeded(tm_switch_track *w, uint64_t max_rate, int ncpu, uint64_t now,
                             uint64_t claimed) {
  if (!max_rate) return false;
  int over = creations_over(&w->create_window_start, &w->create_window_base, CREATE_WINDOW_NS, 1,
                            max_rate, ncpu, now, claimed);
  if (over < 0) return false;
  w->create_windows_over = over ? w->create_windows_over + 1 : 0;
  return w->create_windows_over >= CREATE_WINDOWS_OVER;
}

#define CREATE_STORM_NS 50000000ull
#define CREATE_STORM_TIMES 4

bool tm_create_storm(tm_switch_track *w, uint64_t max_rate, int ncpu, uint64_t now,
                     uint64_t claimed) {
  if (!max_rate) return false;
  return creations_over(&w->storm_window_start, &w->storm_window_base, CREATE_STORM_NS,
                        CREATE_STORM_TIMES, max_rate, ncpu, now, claimed) == 1;
}

void tm_switch_resumed(tm_switch_track *w, uint64_t now) {
  w->resumed_at = now;
  w->resume_at = 0;
  w->rate_window_start = w->rate_window_records = 0;
  w->storm_window_start = 0;
}
