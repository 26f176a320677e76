/* Read planning (read_plan.c) on synthetic thread states: what a tick
 * reads of a thread from its records and events, when a deferred read
 * falls due, and which slots a tick visits. A regression here is a tick
 * whose cost grows with the threads that exist rather than those that ran. */
#include <stdlib.h>
#include <string.h>

#include "perf_switch.h"
#include "session.h"
#include "tm_check.h"

#define MS 1000000ull

static tm_session s;

static tm_sampler_thread *state(tm_thread *owner) {
  tm_sampler_thread *st = aligned_alloc(64, sizeof *st); /* line-aligned type */
  CHECK(st != NULL);
  memset(st, 0, sizeof *st);
  st->owner = owner;
  st->read_head = UINT64_MAX;
  return st;
}

static void test_with_records(tm_thread *t) {
  s.src_perf_switch = true;
  tm_sampler_thread *st = state(t);
  uint64_t due = 0;
  /* Never read, not covered: read. */
  CHECK_EQ(tm_read_plan(&s, 10, st, false, &due), READ_ALL);
  /* Born covered and blocked in a wrapped call since it was met: its
   * files are not even opened. */
  st->covered = st->born_covered = true;
  st->sw_kind = TM_SWITCH_OUT;
  st->sw_tick = st->met_tick = 10;
  t->cur_state = TM_STATE_BLOCKED_COND;
  CHECK_EQ(tm_read_plan(&s, 11, st, false, &due), READ_NONE);
  CHECK_EQ(due, 0); /* its next record brings it back */
  /* ... unless it runs outside a wrapped call. */
  t->cur_state = TM_STATE_RUNNING;
  CHECK_EQ(tm_read_plan(&s, 11, st, false, &due), READ_ALL);

  /* Read once (tick 20); woke for a moment at tick 30, blocked again in a
   * wrapped call: deferred 150 ms from the wake-up. */
  st->have_sched = true;
  st->read_tick = 20;
  st->syscall_ns = 200 * MS;
  st->sw_tick = 30;
  st->sw_time = 300 * MS;
  st->ran_ns = 100000; /* 0.1 ms */
  t->cur_state = TM_STATE_BLOCKED_COND;
  due = 0;
  CHECK_EQ(tm_read_plan(&s, 30, st, false, &due), READ_NONE);
  CHECK_EQ(due, 45);
  /* Due: it blocked after its last read, so that is read. */
  due = 0;
  CHECK_EQ(tm_read_plan(&s, 45, st, false, &due), READ_ALL);
  /* One that keeps waking is read every second at most. */
  st->sw_tick = 119;
  due = 0;
  CHECK_EQ(tm_read_plan(&s, 119, st, false, &due), READ_NONE);
  CHECK_EQ(due, 120);
  CHECK_EQ(tm_read_plan(&s, 120, st, false, &due), READ_ALL); /* 1 s after tick 20 */
  st->read_tick = 120;
  st->syscall_ns = 1200 * MS;
  st->sw_tick = 125;
  st->sw_time = 1250 * MS;
  CHECK_EQ(tm_read_plan(&s, 125, st, false, &due), READ_NONE);
  CHECK_EQ(due, 140);
  /* Ran a while (over 1 ms): read at once. */
  st->ran_ns = 2 * MS;
  CHECK_EQ(tm_read_plan(&s, 125, st, false, &due), READ_ALL);
  /* Preempted since its last read: only its run-queue wait can move. */
  st->ran_ns = 0;
  st->sw_kind = TM_SWITCH_OUT_PREEMPT;
  st->sw_tick = 120;
  CHECK_EQ(tm_read_plan(&s, 126, st, false, &due), READ_QUEUE);
  /* On a CPU, or nothing known after lost records: read. */
  st->sw_kind = TM_SWITCH_IN;
  CHECK_EQ(tm_read_plan(&s, 126, st, false, &due), READ_ALL);
  st->sw_kind = SW_UNKNOWN;
  CHECK_EQ(tm_read_plan(&s, 126, st, false, &due), READ_ALL);
  /* Blocked before its last read and read then: nothing moved. */
  st->sw_kind = TM_SWITCH_OUT;
  st->sw_time = 1180 * MS;
  st->ran_ns = 2 * MS;
  CHECK_EQ(tm_read_plan(&s, 126, st, false, &due), READ_NONE);
  /* ... but a read that took it for running missed the blocking. */
  st->read_on_cpu = true;
  CHECK_EQ(tm_read_plan(&s, 126, st, false, &due), READ_ALL);
  /* The final tick reads everything. */
  st->read_on_cpu = false;
  CHECK_EQ(tm_read_plan(&s, 126, st, true, &due), READ_ALL);
  free(st);
}

/* Without records: read at tick 100 while in a wrapped call, no event
 * since. */
static tm_sampler_thread *read_in_call(tm_thread *t) {
  s.src_perf_switch = false;
  tm_sampler_thread *st = state(t);
  uint64_t due = 0;
  /* Never read: read, unless it waits in a wrapped call since its records
   * said so (records paused) and pushed nothing since. */
  t->cur_state = TM_STATE_BLOCKED_COND;
  atomic_store(&t->ring.head, 3);
  CHECK_EQ(tm_read_plan(&s, 100, st, false, &due), READ_ALL);
  st->wait_head = 3;
  CHECK_EQ(tm_read_plan(&s, 100, st, false, &due), READ_NONE);
  CHECK_EQ(due, 0);
  atomic_store(&t->ring.head, 5);
  CHECK_EQ(tm_read_plan(&s, 100, st, false, &due), READ_ALL);
  st->wait_head = UINT64_MAX;
  st->have_sched = true;
  st->read_tick = 100;
  t->cur_state = TM_STATE_BLOCKED_MUTEX;
  atomic_store(&t->ring.head, 7);
  st->read_head = 7;
  return st;
}

static void test_without_records(tm_thread *t) {
  tm_sampler_thread *st = read_in_call(t);
  uint64_t due = 0;
  /* Not read again for 10 s. */
  CHECK_EQ(tm_read_plan(&s, 150, st, false, &due), READ_NONE);
  CHECK_EQ(due, 1100);
  CHECK_EQ(tm_read_plan(&s, 1100, st, false, &due), READ_ALL);
  /* Events since, but out of the call only for moments: a light read. */
  atomic_store(&t->ring.head, 9);
  st->ev_tick = 140;
  st->ev_ran_ns = 10000;
  due = 0;
  CHECK_EQ(tm_read_plan(&s, 150, st, false, &due), READ_NONE);
  CHECK_EQ(due, 155);
  /* Running: its events cannot say how long. */
  t->cur_state = TM_STATE_RUNNING;
  CHECK_EQ(tm_read_plan(&s, 150, st, false, &due), READ_ALL);
  free(st);
}

static void test_stat_due(tm_thread *t) {
  s.src_perf_switch = true;
  tm_sampler_thread *st = state(t);
  st->covered = st->have_stat = true;
  st->sw_kind = TM_SWITCH_IN;
  st->moved_reads = 3;
  st->stat_oncpu_ns = 100 * MS;
  /* On a CPU: every 8th read, or after 40 ms more CPU. */
  CHECK(!tm_stat_due(&s, st, TM_STATE_RUNNING, 110 * MS, false, true));
  CHECK(tm_stat_due(&s, st, TM_STATE_RUNNING, 140 * MS, false, true));
  st->moved_reads = 8;
  CHECK(tm_stat_due(&s, st, TM_STATE_RUNNING, 110 * MS, false, true));
  /* Blocked outside a wrapped call: only stat says in what. */
  st->moved_reads = 3;
  st->sw_kind = TM_SWITCH_OUT;
  CHECK(tm_stat_due(&s, st, TM_STATE_RUNNING, 100 * MS, false, true));
  /* In a wrapped call, after a read made blocked, woken for a moment: no. */
  st->stat_blocked = true;
  CHECK(!tm_stat_due(&s, st, TM_STATE_BLOCKED_COND, 100 * MS + 500000, false, true));
  CHECK(tm_stat_due(&s, st, TM_STATE_BLOCKED_COND, 102 * MS, false, true));
  /* A final tick on another thread reads it. */
  CHECK(tm_stat_due(&s, st, TM_STATE_BLOCKED_COND, 100 * MS, false, false));
  free(st);
}

static void test_visits(void) {
  tm_visits *v = calloc(1, sizeof *v);
  CHECK(v != NULL);
  /* Nothing known yet: every slot below the high water. */
  CHECK_EQ(tm_visit_collect(v, 130, false, false), 130);
  CHECK_EQ(v->order[129], 129);
  /* Then only the marked ones, in index order, each once. */
  CHECK_EQ(tm_visit_collect(v, 10000, false, false), 0);
  tm_visit_mark(v, 9000);
  tm_visit_hot(v, 5);
  tm_visit_mark(v, 5);
  tm_visit_at(v, 200, 70, 215); /* a deferred read */
  tm_visit_at(v, 200, 71, 0);   /* due already: next tick */
  tm_visit_take_due(v, 201);
  CHECK_EQ(tm_visit_collect(v, 10000, false, false), 3);
  CHECK_EQ(v->order[0], 5);
  CHECK_EQ(v->order[1], 71);
  CHECK_EQ(v->order[2], 9000);
  for (uint64_t tick = 202; tick < 215; tick++) {
    tm_visit_take_due(v, tick);
    CHECK_EQ(tm_visit_collect(v, 10000, false, false), 0);
  }
  tm_visit_take_due(v, 215);
  CHECK_EQ(tm_visit_collect(v, 10000, false, false), 1);
  CHECK_EQ(v->order[0], 70);
  /* A read due past a turn of the wheel (a blocked thread's, 10 s on)
   * waits out the turns without a visit. */
  tm_visit_at(v, 300, 80, 300 + 10 * WHEEL_TICKS);
  for (uint64_t tick = 301; tick < 300 + 10 * WHEEL_TICKS; tick++) {
    tm_visit_take_due(v, tick);
    CHECK_EQ(tm_visit_collect(v, 10000, false, false), 0);
  }
  tm_visit_take_due(v, 300 + 10 * WHEEL_TICKS);
  CHECK_EQ(tm_visit_collect(v, 10000, false, false), 1);
  /* A thread that wakes every 10 ticks defers its read 15 ticks from each
   * wake-up: the wheel brings it back once, when the read falls due, not
   * 15 ticks after every wake-up. */
  tm_visit_at(v, 400, 90, 415);
  for (uint64_t tick = 401; tick < 445; tick++) {
    if (tick % 10 == 0 && tick < 440) tm_visit_at(v, tick, 90, tick + 15); /* a wake-up */
    tm_visit_take_due(v, tick);
    CHECK_EQ(tm_visit_collect(v, 10000, false, false), 0);
  }
  tm_visit_take_due(v, 445);
  CHECK_EQ(tm_visit_collect(v, 10000, false, false), 1);
  CHECK_EQ(v->order[0], 90);
  /* Read meanwhile (or waiting for its next event): no visit at all. */
  tm_visit_at(v, 500, 91, 515);
  tm_visit_cancel(v, 91);
  for (uint64_t tick = 501; tick < 520; tick++) {
    tm_visit_take_due(v, tick);
    CHECK_EQ(tm_visit_collect(v, 10000, false, false), 0);
  }
  /* Brought forward: the earlier tick. */
  tm_visit_at(v, 600, 92, 650);
  tm_visit_at(v, 601, 92, 610);
  for (uint64_t tick = 602; tick < 610; tick++) {
    tm_visit_take_due(v, tick);
    CHECK_EQ(tm_visit_collect(v, 10000, false, false), 0);
  }
  tm_visit_take_due(v, 610);
  CHECK_EQ(tm_visit_collect(v, 10000, false, false), 1);
  for (uint64_t tick = 611; tick < 660; tick++) {
    tm_visit_take_due(v, tick);
    CHECK_EQ(tm_visit_collect(v, 10000, false, false), 0);
  }
  /* After lost or paused records: every slot but those resting in a
   * wrapped call, and those only if marked. */
  tm_visit_resting(v, 3, true);
  tm_visit_resting(v, 4, true);
  tm_visit_resting(v, 4, false);
  CHECK_EQ(tm_visit_collect(v, 10, false, true), 9);
  CHECK_EQ(v->order[3], 4);
  tm_visit_mark(v, 3);
  CHECK_EQ(tm_visit_collect(v, 10, false, true), 10);
  /* all: every slot. */
  CHECK_EQ(tm_visit_collect(v, 10000, true, false), 10000);
  for (unsigned i = 0; i < WHEEL_TICKS; i++) free(v->wheel[i].slot);
  free(v);
}

static void test_cpustat_ticks(void) {
  /* /proc/stat about every 50 ms: ticks 1, 6, 11... at 10 ms. */
  s.cfg.interval_ns = 10 * MS;
  CHECK(tm_cpustat_tick(&s, 1));
  CHECK(!tm_cpustat_tick(&s, 2));
  CHECK(tm_cpustat_tick(&s, 6));
  s.cfg.interval_ns = 100 * MS;
  CHECK(tm_cpustat_tick(&s, 2));
  s.cfg.interval_ns = 10 * MS;
}

/* On the budget's steps (ticks 4 times as long) the rereads stretch as
 * much: a thread that only wakes for moments is read 4 times as seldom. */
static void test_budget_stretch(tm_thread *t) {
  s.cfg.interval_asked_ns = 10 * MS;
  s.cfg.interval_ns = 40 * MS;
  tm_sampler_thread *st = read_in_call(t);
  uint64_t due = 0;
  CHECK_EQ(tm_read_plan(&s, 150, st, false, &due), READ_NONE);
  CHECK_EQ(due, 100 + 4 * 10000 / 40); /* 40 s, not 10 */
  atomic_store(&t->ring.head, 9); /* woke for moments at tick 140 */
  st->ev_tick = 140;
  st->ev_ran_ns = 10000;
  due = 0;
  CHECK_EQ(tm_read_plan(&s, 150, st, false, &due), READ_NONE);
  CHECK_EQ(due, 140 + 4 * 150 / 40); /* settles 600 ms after, not 150 */
  s.cfg.interval_ns = 10 * MS;
  s.cfg.interval_asked_ns = 0;
  free(st);
}

int main(void) {
  s.cfg.interval_ns = 10 * MS;
  tm_thread *t = calloc(1, sizeof *t);
  CHECK(t != NULL);
  test_with_records(t);
  test_without_records(t);
  test_budget_stretch(t);
  test_stat_due(t);
  test_visits();
  test_cpustat_ticks();
  free(t);
  return 0;
}
