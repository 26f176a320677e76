#include "thread_state.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sampler_state.h"

#define SLAB_BYTES ((size_t)TM_MAX_THREADS * sizeof(tm_sampler_thread))
#define HUGE_PAGE ((uintptr_t)2 << 20)

static bool slab_map(tm_thread_states *ts) {
  void *p = mmap(NULL, SLAB_BYTES, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return false;
  /* Small pages for the first few thousand threads, as in threads.c. */
  uintptr_t from = ((uintptr_t)p + 2 * HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  if (from < (uintptr_t)p + SLAB_BYTES)
    madvise((void *)from, (uintptr_t)p + SLAB_BYTES - from, MADV_HUGEPAGE); /* advice */
  ts->slab = p;
  return true;
}

void tm_states_unmap(tm_thread_states *ts) {
  if (ts->slab) munmap(ts->slab, SLAB_BYTES);
  ts->slab = NULL;
}

tm_sampler_thread *tm_state_new(tm_sampler *m, tm_thread *t, uint32_t slot) {
  tm_thread_states *ts = &m->threads;
  if (slot >= TM_MAX_THREADS || (!ts->slab && !slab_map(ts))) return NULL;
  tid_entry *e = tm_tid_get(&m->sw, t->tid);
  if (!e) return NULL;
  tm_sampler_thread *st = &ts->slab[slot];
  memset(st, 0, sizeof *st);
  st->owner = t;
  st->tid = t->tid;
  st->slot = slot;
  st->read_head = st->wait_head = UINT64_MAX;
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
  ts->live_dropped -= st->dropped + st->udropped;
  ts->live_folded -= st->folded;
  tm_task_fds_close(&st->fds);
  tm_perf_counters_close(&st->pc);
  free(st->routine);
  if (st->owner && st->owner->sampler == st) st->owner->sampler = NULL;
  st->owner = NULL;
}

