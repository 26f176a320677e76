/* Read planning: which registry slots a tick visits, and what it reads of
 * each thread (nothing, its run-queue wait, or everything), from its
 * switch records, its events and when it was last read. Sampler-thread
 * only; decisions only, no /proc access. */
#ifndef THREADMON_READ_PLAN_H
#define THREADMON_READ_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "thread_state.h"

struct tm_session;

/* A thread that only wakes for moments: under LIGHT_RAN_NS on a CPU since
 * its last read, blocked in a wrapped call (read_plan.c). */
#define LIGHT_RAN_NS 1000000ull
/* Without records a light thread's stat and status are read on every
 * LIGHT_FULL_EVERY-th read only (schedstat on the others): with records
 * 10,000 light threads would switch 200,000 times a second, over the rate
 * limit, so this is how they are read, and opening every file at every read
 * (past the descriptor budget) was their main cost (docs/benchmarks.md,
 * "Behind the comments"). The states stay exact (the wrappers' events); the
 * counters of a thread that keeps waking for moments lag by
 * up to LIGHT_REREAD_NS, its context switch counts and its CPU time's
 * split into user and system by up to 4 s. */
#define LIGHT_FULL_EVERY 4

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
/* Deferred reads: bucket tick % WHEEL_TICKS holds the slots due then; one
 * due beyond a turn of the wheel waits in the last bucket of the turn.
 * Each slot has one deferred read at most, its tick in due[]: a thread
 * that wakes every 100 ms defers its read again at every visit: an entry
 * whose read is not due yet only moves to a later bucket, so that neither
 * those deferrals nor a turn of the wheel bring a visit of their own. */
#define WHEEL_TICKS 256

typedef struct wheel_bucket {
  uint32_t *slot;
  uint32_t n, cap;
} wheel_bucket;

typedef struct tm_visits {
  uint64_t visit[VISIT_WORDS]; /* this tick's, from records and the wheel */
  uint64_t hot[VISIT_WORDS];   /* asked by the previous visit */
  bool settled;                /* false: nothing is known yet (start, fork child) */
  wheel_bucket wheel[WHEEL_TICKS];
  uint32_t due[TM_MAX_THREADS]; /* tick of the slot's deferred read (low 32 bits), 0 = none */
  /* Left waiting in a wrapped call for its next record, event or
   * deferred read by its last visit: a tick after lost, paused or resumed
   * records need not visit it (that event, the record of its next run or
   * the wheel brings it back, and that visit settles it: tick.c), so such
   * a tick costs what the threads outside that rest do: the resume after a
   * pool's creation burst need not visit every thread made during the pause. */
  uint64_t resting[VISIT_WORDS];
  uint32_t order[TM_MAX_THREADS]; /* this tick's slots, in index order */
} tm_visits;

void tm_visit_mark(tm_visits *v, uint32_t slot);
void tm_visit_hot(tm_visits *v, uint32_t slot);
/* Slot is read again in tick `due` (the next at the earliest), instead of
 * any deferred read it had. */
void tm_visit_at(tm_visits *v, uint64_t tick_no, uint32_t slot, uint64_t due);
/* Slot has no deferred read any more (read now, or waiting for its next
 * record or event). */
void tm_visit_cancel(tm_visits *v, uint32_t slot);
/* Marks the slots due in this tick (and moves on those deferred further). */
void tm_visit_take_due(tm_visits *v, uint64_t tick_no);
/* Whether the slot's last visit left it resting (tm_visits.resting). */
void tm_visit_resting(tm_visits *v, uint32_t slot, bool resting);
/* Fills v->order with this tick's slots below hw (all of them when `all`,
 * or nothing is known yet; all but the resting ones when `unrested`) and
 * clears the marks; returns how many. */
uint32_t tm_visit_collect(tm_visits *v, uint32_t hw, bool all, bool unrested);

/* ---- what a visit reads ---- */

/* What this tick must read of a thread (READ_*), from its switch records.
 * A READ_NONE that only defers a read sets *due to the tick it is due in
 * (else it stays 0: the thread's next record or event brings it back). */
int tm_read_plan(const struct tm_session *s, uint64_t tick_no, const tm_sampler_thread *st,
                 bool full, uint64_t *due);
/* Whether a read of a thread that ran needs its stat file; cur: its
 * state now, oncpu_ns: its CPU time by this read's schedstat; own_thread:
 * false for a final tick on another thread, which reads everything. */
bool tm_stat_due(const struct tm_session *s, const tm_sampler_thread *st, uint32_t cur,
                 uint64_t oncpu_ns, bool light, bool own_thread);
/* Whether this tick reads /proc/stat (and the sampler itself): about every
 * CPUSTAT_NS, the first tick included. */
bool tm_cpustat_tick(const struct tm_session *s, uint64_t tick_no);

#endif
