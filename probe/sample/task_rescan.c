#include "task_rescan.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "sampler_state.h"

void tm_tid_set_add(uint32_t tid, void *arg) {
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

static void rescan_tasks(tm_sampler *m, uint64_t now) {
  tm_rescan *r = &m->rescan;
  r->listings++;
  r->seen_now.n = 0;
  if (tm_list_tasks(&m->proc, tm_tid_set_add, &r->seen_now) < 0 || r->seen_now.n == 0) return;
  qsort(r->seen_now.v, r->seen_now.n, sizeof *r->seen_now.v, cmp_tid);
  /* A thread just created may not have attached to its record yet: adopt
   * a tid only when two listings in a row found it unknown. */
  r->unknown_now.n = 0;
  for (size_t i = 0; i < r->seen_now.n; i++) {
    uint32_t tid = r->seen_now.v[i];
    tid_entry *e = tm_tid_find(&m->sw, tid);
    if (e && e->st) continue; /* the walk knows it */
    /* From outside no wrapper registers a thread: at once. */
    const tm_outside *o = m->outside;
    if (o && !tm_thread_by_tid(tid)) o->adopt(o->ctx, tid);
    else if (o) continue;
    else if (!tid_in(&r->unknown_before, tid))
      tm_tid_set_add(tid, &r->unknown_now); /* stays sorted */
    else if (!tm_thread_by_tid(tid)) tm_thread_register_foreign(tid);
  }
  tid_set swap = r->unknown_before;
  r->unknown_before = r->unknown_now;
  r->unknown_now = swap;
  /* Threads that left without passing a wrapper. Every LIVE slot the walk
   * met has a state; going through the states (one cache line each) rather
   * than the registry keeps this off the records. A LIVE slot the
   * walk has not met yet was attached since the last tick: too new to be
   * judged anyway. */
  for (tm_sampler_thread *st = m->threads.all; st; st = st->next) {
    if (tid_in(&r->seen_now, st->tid)) continue;
    tm_thread *t = st->owner;
    if (atomic_load_explicit(&t->slot_state, memory_order_acquire) == TM_SLOT_LIVE &&
        t->tid == st->tid && (m->outside || t->start_ns + RESCAN_NS / 2 < now))
      tm_thread_mark_exited(t);
  }
  /* Some entries have no state. */
  if (m->sw.tids_used > m->threads.count) tm_tids_prune(&m->sw, m->tick_no);
}

void tm_rescan_tick(tm_sampler *m, uint64_t now) {
  tm_rescan *r = &m->rescan;
  /* From outside, every tick: the count is one read of a few microseconds,
   * and threads must be followed at once (no wrapper reports them). */
  if (!m->outside && now - r->last_rescan_ns < RESCAN_NS) return;
  r->last_rescan_ns = now;
  long kernel = tm_kernel_thread_count(&m->proc);
  if (kernel < 0 || (uint32_t)kernel != r->known_live ||
      now - r->last_listing_ns >= RESCAN_QUIET_NS) {
    r->last_listing_ns = now;
    rescan_tasks(m, now);
  }
}

void tm_rescan_free(tm_rescan *r) {
  free(r->seen_now.v);
  free(r->unknown_now.v);
  free(r->unknown_before.v);
  *r = (tm_rescan){0};
}
