#include "thread_state.h"

#include <stdlib.h>
#include <string.h>

#include "sampler_state.h"

tm_sampler_thread *tm_state_new(tm_sampler *m, tm_thread *t, uint32_t slot) {
  tm_thread_states *ts = &m->threads;
  if (slot >= ts->by_slot_cap) {
    uint32_t cap = ts->by_slot_cap ? ts->by_slot_cap : 64;
    while (cap <= slot) cap *= 2;
    tm_sampler_thread **p = realloc(ts->by_slot, cap * sizeof *p);
    if (!p) return NULL;
    memset(p + ts->by_slot_cap, 0, (cap - ts->by_slot_cap) * sizeof *p);
    ts->by_slot = p;
    ts->by_slot_cap = cap;
  }
  tid_entry *e = tm_tid_get(&m->sw, t->tid);
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
  st->met_tick = m->tick_no;
  st->covered = e->kind != SW_UNKNOWN;
  /* Born under the inherited switch events: its context switch counts are
   * the records since its birth, no status read needed for the base (a
   * process that makes thousands of threads a second paid most of the
   * sampler's time for those reads). */
  if (m->started_ns && !t->is_main && !t->is_probe && t->start_ns > m->started_ns &&
      !e->counts_lost) {
    st->vol = e->vol;
    st->invol = e->invol;
    st->status_base = st->born_covered = true;
    st->status_tick = m->tick_no; /* its records come in the next drains */
  }
  e->st = st;
  st->next = ts->all;
  st->pprev = &ts->all;
  if (ts->all) ts->all->pprev = &st->next;
  ts->all = st;
  ts->count++;
  ts->by_slot[slot] = st;
  t->sampler = st;
  return st;
}

void tm_state_free(tm_sampler *m, tm_sampler_thread *st) {
  tm_thread_states *ts = &m->threads;
  /* Unlinked in O(1): a thousand threads ending at once stay linear. */
  *st->pprev = st->next;
  if (st->next) st->next->pprev = st->pprev;
  ts->count--;
  tid_entry *e = tm_tid_find(&m->sw, st->tid);
  if (e && e->st == st) tm_tid_remove(&m->sw, e);
  if (st->slot < ts->by_slot_cap && ts->by_slot[st->slot] == st) ts->by_slot[st->slot] = NULL;
  ts->live_dropped -= st->dropped + st->udropped;
  ts->live_folded -= st->folded;
  tm_task_fds_close(&st->fds);
  tm_perf_counters_close(&st->pc);
  free(st->routine);
  if (st->owner && st->owner->sampler == st) st->owner->sampler = NULL;
  free(st);
}

