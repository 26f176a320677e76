/* Switch tracking (switch_track.c) with synthetic PERF_RECORD_SWITCH
 * records: the tid table under growth and removal, what records say of a
 * thread before and after the walk meets it, lost records, and the
 * switch-rate limit's windows. No perf events, no threads. */
#include <stdlib.h>
#include <string.h>

#include "perf_switch.h"
#include "sampler_state.h"
#include "tm_check.h"

#define MS 1000000ull

static tm_sampler m;

static void test_tid_table(void) {
  enum { N = 20000 };
  for (uint32_t i = 1; i <= N; i++) CHECK(tm_tid_get(&m.sw, i * 7) != NULL);
  CHECK_EQ(m.sw.tids_used, N);
  CHECK(m.sw.tids_cap >= 2 * N); /* kept at most half full */
  for (uint32_t i = 1; i <= N; i++) CHECK_EQ(tm_tid_find(&m.sw, i * 7)->tid, i * 7);
  CHECK(tm_tid_find(&m.sw, 5) == NULL);
  /* Removing every other entry shifts runs back: the rest stay findable. */
  for (uint32_t i = 1; i <= N; i += 2) tm_tid_remove(&m.sw, tm_tid_find(&m.sw, i * 7));
  CHECK_EQ(m.sw.tids_used, N / 2);
  for (uint32_t i = 1; i <= N; i++) {
    tid_entry *e = tm_tid_find(&m.sw, i * 7);
    if (i % 2) CHECK(e == NULL);
    else CHECK(e != NULL && e->tid == i * 7);
  }
  /* Entries without a state and no record for PENDING_TICKS go. */
  tm_tid_get(&m.sw, 3)->tick = 1000;
  for (uint32_t i = 2; i <= N; i += 2) tm_tid_find(&m.sw, i * 7)->tick = 10;
  tm_tids_prune(&m.sw, 1001);
  CHECK_EQ(m.sw.tids_used, 1);
  CHECK(tm_tid_find(&m.sw, 3) != NULL);
  tm_sampler_reset(&m);
}

/* A registry record without the registry: the stages only read it. */
static tm_thread *fake_thread(uint32_t tid, uint64_t start_ns) {
  tm_thread *t = calloc(1, sizeof *t);
  CHECK(t != NULL);
  t->tid = tid;
  t->start_ns = start_ns;
  return t;
}

static void test_records(void) {
  m.tick_no = 5;
  m.started_ns = 100 * MS;
  m.sw.probe_tid = 99;
  /* Records of a thread the walk has not met: the latest by time (rings
   * drain CPU by CPU, so out of order), and its switch-outs counted. */
  tm_switch_record(&m, 42, 300 * MS, 1, TM_SWITCH_IN);
  tm_switch_record(&m, 42, 310 * MS, 1, TM_SWITCH_OUT);
  tm_switch_record(&m, 42, 305 * MS, 0, TM_SWITCH_OUT_PREEMPT);
  CHECK(m.program_ran && m.fr.switches_urgent);
  CHECK_EQ(m.fr.switches.n, 3);
  CHECK_EQ(m.sw.drained, 3);
  tid_entry *e = tm_tid_find(&m.sw, 42);
  CHECK(e && !e->st);
  CHECK_EQ(e->kind, TM_SWITCH_OUT);
  CHECK_EQ(e->cpu, 1);
  CHECK_EQ(e->vol, 1);
  CHECK_EQ(e->invol, 1);
  /* The sampler's own records are batched but say no program thread ran. */
  m.program_ran = m.fr.switches_urgent = false;
  tm_switch_record(&m, 99, 311 * MS, 0, TM_SWITCH_OUT);
  CHECK(!m.program_ran && !m.fr.switches_urgent);

  /* Met by the walk: born after the records began, so covered and its
   * context switch counts are the records' (no status read needed). */
  tm_thread *t = fake_thread(42, 200 * MS);
  m.tick_no = 6;
  tm_sampler_thread *st = tm_state_new(&m, t, 3);
  CHECK(st && t->sampler == st && tm_state_of_slot(&m.threads, 3) == st);
  CHECK(st->covered && st->born_covered && st->status_base);
  CHECK_EQ(st->sw_kind, TM_SWITCH_OUT);
  CHECK_EQ(st->vol, 1);
  CHECK_EQ(st->invol, 1);
  /* From now on records go to the state: run time, latest kind, counts,
   * and the slot is marked for this tick's visit. */
  tm_switch_record(&m, 42, 400 * MS, 1, TM_SWITCH_IN);
  tm_switch_record(&m, 42, 403 * MS, 1, TM_SWITCH_OUT_PREEMPT);
  tm_switch_record(&m, 42, 404 * MS, 0, TM_SWITCH_IN);
  CHECK_EQ(st->ran_ns, 3 * MS);
  CHECK_EQ(st->in_time, 404 * MS);
  CHECK_EQ(st->sw_kind, TM_SWITCH_IN);
  CHECK_EQ(st->sw_cpu, 0);
  CHECK_EQ(st->sw_tick, 6);
  CHECK_EQ(st->invol, 2);
  CHECK(m.plan.visit[0] & (1ull << 3));
  /* A record older than the latest does not move where it is. */
  tm_switch_record(&m, 42, 402 * MS, 1, TM_SWITCH_OUT);
  CHECK_EQ(st->sw_kind, TM_SWITCH_IN);
  CHECK_EQ(st->vol, 2);
  /* Switch-outs before a status read are in its counts already. */
  st->ctx_after_ns = 500 * MS;
  tm_switch_record(&m, 42, 450 * MS, 0, TM_SWITCH_OUT);
  CHECK_EQ(st->vol, 2);

  /* A thread born before the records began needs a status read. */
  tm_thread *old = fake_thread(43, 50 * MS);
  tm_sampler_thread *st2 = tm_state_new(&m, old, 70);
  CHECK(st2 && !st2->covered && !st2->born_covered && !st2->status_base);
  CHECK_EQ(st2->sw_kind, SW_UNKNOWN);

  /* Records lost: nothing known of any thread, pending counts incomplete. */
  tm_switch_record(&m, 44, 460 * MS, 0, TM_SWITCH_OUT);
  tm_switch_forget(&m);
  CHECK_EQ(st->sw_kind, SW_UNKNOWN);
  CHECK(!st->status_base);
  CHECK(tm_tid_find(&m.sw, 44)->counts_lost);
  tm_thread *late = fake_thread(44, 300 * MS);
  tm_sampler_thread *st3 = tm_state_new(&m, late, 71);
  CHECK(st3 && !st3->born_covered && !st3->status_base);

  /* Freeing a state drops its tid; reset frees the rest. */
  tm_state_free(&m, st2);
  CHECK(tm_tid_find(&m.sw, 43) == NULL);
  CHECK(old->sampler == NULL);
  CHECK_EQ(m.threads.count, 2);
  tm_sampler_reset(&m);
  CHECK(t->sampler == NULL && late->sampler == NULL);
  CHECK(m.threads.all == NULL && m.sw.tids == NULL && m.fr.switches.tid == NULL);
  free(t);
  free(old);
  free(late);
}

static void test_rate_limit(void) {
  tm_switch_track w = {0};
  /* Off: never. */
  CHECK(!tm_switch_rate_exceeded(&w, 0, 2, 1000 * MS, 1000000));
  /* 1,000 switches a second per CPU on 2 CPUs: 100 in 50 ms is the
   * limit, 200 records (each switch is two: out and in). */
  uint64_t t0 = 1000 * MS;
  CHECK(!tm_switch_rate_exceeded(&w, 1000, 2, t0, 0));
  CHECK(!tm_switch_rate_exceeded(&w, 1000, 2, t0 + 20 * MS, 120));
  CHECK(!tm_switch_rate_exceeded(&w, 1000, 2, t0 + 50 * MS, 80)); /* exactly at it */
  CHECK(!tm_switch_rate_exceeded(&w, 1000, 2, t0 + 70 * MS, 140));
  CHECK(tm_switch_rate_exceeded(&w, 1000, 2, t0 + 100 * MS, 80)); /* 110 in 50 ms */
  /* A new window after each judgement: a burst does not carry over. */
  CHECK(!tm_switch_rate_exceeded(&w, 1000, 2, t0 + 150 * MS, 10));
  /* A clock before the window (a final tick elsewhere) starts a new one. */
  CHECK(!tm_switch_rate_exceeded(&w, 1000, 2, t0, 1000));
  /* Over four times the limit for 10 ms (the limit: 40 records in 10 ms)
   * pauses at once; four times exactly waits for the window's end. */
  tm_switch_track q = {0};
  CHECK(!tm_switch_rate_exceeded(&q, 1000, 2, t0, 0));
  CHECK(!tm_switch_rate_exceeded(&q, 1000, 2, t0 + 5 * MS, 500)); /* under 10 ms */
  CHECK(tm_switch_rate_exceeded(&q, 1000, 2, t0 + 10 * MS, 0));   /* 500 > 160 */
  CHECK(!tm_switch_rate_exceeded(&q, 1000, 2, t0 + 20 * MS, 160));
  CHECK(!tm_switch_rate_exceeded(&q, 1000, 2, t0 + 40 * MS, 100));
  CHECK(tm_switch_rate_exceeded(&q, 1000, 2, t0 + 60 * MS, 1)); /* 261 > 200 in 50 ms */

  /* Pauses: 1 s, doubling while the rate trips again within 10 s of a
   * resume, at most 64 s; calm for 10 s, back to 1 s. */
  tm_switch_track p = {0};
  uint64_t now = 100 * MS, want = 1000 * MS;
  for (int i = 0; i < 9; i++) {
    CHECK_EQ(tm_switch_pause_for(&p, now), want);
    CHECK_EQ(p.resume_at, now + want);
    now = p.resume_at;
    tm_switch_resumed(&p, now);
    CHECK_EQ(p.rate_window_start, 0);
    now += 60 * MS;
    if (want < 64000 * MS) want *= 2;
  }
  CHECK_EQ(p.pauses, 9);
  CHECK_EQ(tm_switch_pause_for(&p, now + 10000 * MS), 1000 * MS);
}

/* The thread-creation limit: 4,000 event copies a second on 2 CPUs is
 * 2,000 threads a second, judged over half-second windows, two in a row. */
static void test_create_limit(void) {
  tm_switch_track w = {0};
  CHECK(!tm_create_rate_exceeded(&w, 0, 2, 1000 * MS, 1000000));
  uint64_t t0 = 1000 * MS, claimed = 50;
  CHECK(!tm_create_rate_exceeded(&w, 4000, 2, t0, claimed));
  /* A pool's start-up burst: 5,000 threads in one window, then calm. */
  CHECK(!tm_create_rate_exceeded(&w, 4000, 2, t0 + 500 * MS, claimed += 5000));
  CHECK_EQ(w.create_windows_over, 1);
  CHECK(!tm_create_rate_exceeded(&w, 4000, 2, t0 + 1000 * MS, claimed += 10));
  CHECK_EQ(w.create_windows_over, 0);
  /* Exactly at the limit is not over it; between ticks nothing is judged. */
  CHECK(!tm_create_rate_exceeded(&w, 4000, 2, t0 + 1500 * MS, claimed += 1000));
  CHECK(!tm_create_rate_exceeded(&w, 4000, 2, t0 + 1700 * MS, claimed += 1000));
  /* Going on: over in two windows in a row. */
  CHECK(!tm_create_rate_exceeded(&w, 4000, 2, t0 + 2000 * MS, claimed += 1000));
  CHECK(tm_create_rate_exceeded(&w, 4000, 2, t0 + 2500 * MS, claimed += 1001));
  /* More CPUs, more copies per thread: 1,001 in half a second is over on 4. */
  tm_switch_track v = {0};
  CHECK(!tm_create_rate_exceeded(&v, 4000, 4, t0, 0));
  CHECK(!tm_create_rate_exceeded(&v, 4000, 4, t0 + 500 * MS, 1001));
  CHECK(tm_create_rate_exceeded(&v, 4000, 4, t0 + 1000 * MS, 2002));

  /* A storm: over four times the limit within 50 ms (4,000 copies a second
   * on 2 CPUs: 400 threads in 50 ms), judged window by window. */
  tm_switch_track st = {0};
  CHECK(!tm_create_storm(&st, 0, 2, t0, 1000000));
  CHECK(!tm_create_storm(&st, 4000, 2, t0, 0));
  CHECK(!tm_create_storm(&st, 4000, 2, t0 + 40 * MS, 5000)); /* under 50 ms */
  CHECK(tm_create_storm(&st, 4000, 2, t0 + 50 * MS, 5000));
  CHECK(!tm_create_storm(&st, 4000, 2, t0 + 100 * MS, 5400)); /* 400 exactly */
  CHECK(tm_create_storm(&st, 4000, 2, t0 + 150 * MS, 5801));
  tm_switch_resumed(&st, t0 + 200 * MS); /* a new window after a resume */
  CHECK(!tm_create_storm(&st, 4000, 2, t0 + 200 * MS, 1000000));
  CHECK(!tm_create_storm(&st, 4000, 2, t0 + 250 * MS, 1000000));
}

int main(void) {
  test_tid_table();
  test_records();
  test_rate_limit();
  test_create_limit();
  return 0;
}
