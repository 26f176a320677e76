/* Wait accounting and hold sampling shared by all wrappers (see wrap.h). */
#include "wrap.h"

#include "unwind.h"

void tm_count_acquire(tm_object *o, enum tm_acquire acq) {
  if (!o) return;
  if (acq == TM_ACQ_EXCLUSIVE)
    o->acquisitions++;
  else if (acq == TM_ACQ_SHARED)
    __atomic_fetch_add(&o->acquisitions, 1, __ATOMIC_RELAXED);
}

void tm_wait_begin(tm_wait *w, tm_thread *t, tm_object *o, uint32_t state, uint32_t holder_tid,
                   const void *caller) {
  w->t = t;
  w->o = o;
  w->start_ns = tm_now_ns();
  uint32_t id = o ? __atomic_load_n(&o->id, __ATOMIC_ACQUIRE) : 0;
  tm_push_state(t, state, id, holder_tid, w->start_ns);
  if (o && caller && TM_UNLIKELY(atomic_load_explicit(&o->has_stack, memory_order_relaxed) == 0))
    tm_unwind_first_contention(t, o, caller);
}

static void wait_finish(tm_wait *w) {
  uint64_t now = tm_now_ns();
  uint64_t waited = now > w->start_ns ? now - w->start_ns : 0;
  tm_push_state(w->t, TM_STATE_RUNNING, 0, 0, now);
  tm_object *o = w->o;
  if (!o) return;
  atomic_fetch_add_explicit(&o->contentions, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&o->wait_ns, waited, memory_order_relaxed);
  uint64_t max = atomic_load_explicit(&o->max_wait_ns, memory_order_relaxed);
  while (waited > max && !atomic_compare_exchange_weak_explicit(&o->max_wait_ns, &max, waited,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed)) {
  }
}

void tm_wait_end(tm_wait *w, enum tm_acquire acq) {
  wait_finish(w);
  tm_count_acquire(w->o, acq);
}

void tm_wait_cancelled(void *w) { wait_finish(w); }

void tm_hold_begin(tm_thread *t, const void *addr) {
  t->hold_countdown = 64;
  if (t->hold_object) return; /* one measurement at a time */
  t->hold_object = addr;
  t->hold_start_ns = tm_now_ns();
}

void tm_hold_end(tm_thread *t, const void *addr, uint32_t kind) {
  uint64_t now = tm_now_ns();
  uint64_t held = now > t->hold_start_ns ? now - t->hold_start_ns : 0;
  t->hold_object = NULL;
  tm_object *o = tm_object_get(addr, kind);
  if (!o) return;
  atomic_fetch_add_explicit(&o->hold_ns, held, memory_order_relaxed);
  atomic_fetch_add_explicit(&o->hold_samples, 1, memory_order_relaxed);
}
