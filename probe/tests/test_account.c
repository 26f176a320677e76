/* Wait accounting, hold sampling and the thread registry life cycle, driven
 * directly (no preload). */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "tm_check.h"
#include "wrap.h"

static void drain_all(tm_thread *t) {
  tm_event ev[TM_RING_EVENTS];
  while (tm_ring_drain(&t->ring, ev, TM_RING_EVENTS)) {
  }
}

static void sleep_ms(long ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

static const void *wait_site;

__attribute__((noinline)) static void contended_wait(tm_thread *t, tm_object *o, long ms) {
  tm_wait w;
  const void *site = __builtin_return_address(0);
  if (!wait_site) wait_site = site; /* the stack is captured on the first wait */
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_MUTEX, 4242, site);
  sleep_ms(ms);
  tm_wait_end(&w, TM_ACQ_EXCLUSIVE);
}

static void test_wait_accounting(tm_thread *t) {
  static int lock_word;
  tm_object *o = tm_object_get(&lock_word, TM_KIND_MUTEX);
  CHECK(o != NULL);
  drain_all(t);
  contended_wait(t, o, 20);
  contended_wait(t, o, 5);
  tm_event ev[8];
  CHECK_EQ(tm_ring_drain(&t->ring, ev, 8), 4);
  CHECK_EQ(ev[0].state, TM_STATE_BLOCKED_MUTEX);
  CHECK_EQ(ev[0].object_id, o->id);
  CHECK_EQ(ev[0].holder_tid, 4242);
  CHECK_EQ(ev[1].state, TM_STATE_RUNNING);
  CHECK_EQ(ev[1].object_id, 0);
  CHECK(ev[1].time_ns - ev[0].time_ns >= 20000000u);
  CHECK_EQ(ev[3].state, TM_STATE_RUNNING);
  CHECK_EQ(t->cur_state, TM_STATE_RUNNING);
  CHECK_EQ(atomic_load(&o->contentions), 2);
  CHECK_EQ(o->acquisitions, 2);
  CHECK(atomic_load(&o->wait_ns) >= 25000000u);
  CHECK(atomic_load(&o->max_wait_ns) >= 20000000u);
  CHECK(atomic_load(&o->max_wait_ns) < atomic_load(&o->wait_ns));
  /* First contention: the stack starts at the caller's call site. */
  CHECK_EQ(atomic_load(&o->has_stack), 1);
  CHECK(o->stack_depth >= 2 && o->stack_depth <= 8);
  CHECK(o->first_contention_stack[0] == wait_site);
  CHECK_EQ(t->guard, 0);
}

static void test_cancelled_wait(tm_thread *t) {
  static int cond_word;
  tm_object *o = tm_object_get(&cond_word, TM_KIND_COND);
  drain_all(t);
  tm_wait w;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_COND, 0, NULL);
  tm_wait_cancelled(&w);
  tm_event ev[4];
  CHECK_EQ(tm_ring_drain(&t->ring, ev, 4), 2);
  CHECK_EQ(ev[0].state, TM_STATE_BLOCKED_COND);
  CHECK_EQ(ev[1].state, TM_STATE_RUNNING);
  CHECK_EQ(atomic_load(&o->contentions), 1);
  CHECK_EQ(o->acquisitions, 0);
  CHECK_EQ(atomic_load(&o->has_stack), 0); /* no caller given: no stack */
}

static void test_hold_sampling(tm_thread *t) {
  static int lock_word;
  tm_object *o = tm_object_get(&lock_word, TM_KIND_MUTEX);
  t->hold_countdown = 64;
  t->hold_object = NULL;
  for (int i = 0; i < 63; i++) {
    tm_hold_tick(t, &lock_word);
    tm_hold_release(t, &lock_word, TM_KIND_MUTEX);
  }
  CHECK_EQ(atomic_load(&o->hold_samples), 0);
  tm_hold_tick(t, &lock_word); /* the 64th acquisition is timed */
  CHECK(t->hold_object == &lock_word);
  sleep_ms(2);
  tm_hold_release(t, &lock_word, TM_KIND_MUTEX);
  CHECK(t->hold_object == NULL);
  CHECK_EQ(atomic_load(&o->hold_samples), 1);
  CHECK(atomic_load(&o->hold_ns) >= 2000000u);
}

static void *child_body(void *arg) {
  tm_thread *slot = arg;
  tm_thread_attach(slot);
  CHECK(tm_self == slot);
  tm_thread_mark_exited(slot);
  CHECK(tm_self == NULL);
  /* A lock taken by a TLS destructor after the exit must not register. */
  CHECK(tm_thread_register_lazy() == NULL);
  return NULL;
}

static void test_registry(tm_thread *me) {
  int dummy;
  tm_thread *c = tm_thread_claim(NULL, &dummy, me->tid);
  CHECK(c != NULL);
  CHECK_EQ(atomic_load(&c->slot_state), TM_SLOT_CLAIMED);
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, child_body, c), 0);
  pthread_join(th, NULL);
  CHECK_EQ(atomic_load(&c->slot_state), TM_SLOT_EXITED);
  CHECK(c->tid != 0 && c->tid != me->tid);
  CHECK_EQ(c->creator_tid, me->tid);
  CHECK(!c->is_main);
  CHECK(atomic_load(&c->end_ns) >= c->start_ns);
  tm_event ev[4];
  CHECK_EQ(tm_ring_drain(&c->ring, ev, 4), 2);
  CHECK_EQ(ev[0].state, TM_STATE_RUNNING);
  CHECK_EQ(ev[1].state, TM_STATE_EXITED);
  /* Released slots are reused before the high-water mark grows. */
  uint32_t hw = tm_threads_high_water();
  tm_thread_release(c);
  CHECK_EQ(atomic_load(&c->slot_state), TM_SLOT_FREE);
  tm_thread *again = tm_thread_claim(NULL, NULL, 0);
  CHECK(again == c);
  CHECK_EQ(tm_threads_high_water(), hw);
  CHECK_EQ(atomic_load(&again->ring.head), 0);
  tm_thread_unclaim(again);
  /* Lookups by tid and pthread_t find live records only. */
  CHECK(tm_thread_by_tid(me->tid) == me);
  CHECK(tm_thread_by_handle((uintptr_t)pthread_self()) == me);
  CHECK(tm_thread_by_tid(c->tid) == NULL);
  /* A thread the sampler registered from /proc is adopted, not duplicated. */
  tm_thread *foreign = tm_thread_register_foreign(999999);
  CHECK(foreign != NULL && tm_thread_by_tid(999999) == foreign);
}

int main(void) {
  tm_thread *t = tm_thread_register_self(NULL, 0);
  CHECK(t != NULL);
  CHECK_EQ(t->tid, getpid());
  CHECK(t->name[0] != '\0'); /* comm read at registration */
  test_wait_accounting(t);
  test_cancelled_wait(t);
  test_hold_sampling(t);
  test_registry(t);
  return 0;
}
