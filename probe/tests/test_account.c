/* Wait accounting, hold sampling and the thread registry life cycle, driven
 * directly (no preload). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probe.h"
#include "sites.h"
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

/* A contended wait's call site is unwound when the wait begins, not once
 * the lock is acquired: an unwind while holding it would make every other
 * waiter (a spinner) wait for it too. */
static void test_site_unwound_before_acquire(tm_thread *t) {
  static int lock_word;
  tm_object *o = tm_object_get(&lock_word, TM_KIND_SPIN);
  CHECK(o != NULL);
  uint64_t unwinds = tm_sites_unwinds();
  tm_wait w;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_SPIN, 0, NULL);
  CHECK_EQ(tm_sites_unwinds(), unwinds + 1);
  CHECK(w.site_pair != 0);
  tm_wait_end(&w, TM_ACQ_EXCLUSIVE); /* "holding" it: no unwind here */
  CHECK_EQ(tm_sites_unwinds(), unwinds + 1);
  uint64_t counted = 0;
  for (uint32_t i = 0, n = tm_sites_pair_count(); i < n; i++) {
    uint32_t oid, stack;
    uint64_t count, wait_ns;
    if (tm_site_pair(i, &oid, &stack, &count, &wait_ns) && oid == o->id) counted += count;
  }
  CHECK_EQ(counted, 1);
  drain_all(t);
}

/* A wait on an object whose adder has not numbered it yet (preempted
 * between claiming its slot and storing its id, objects.c; planted here),
 * found as the uncontended path finds it, in its home slot: the wait goes
 * out with its object, numbered by the waiter, and counts for a call site
 * of that object. Without it serialise's report read "work_lock: its wait
 * counter says 3606.8 ms, its 2 waits 1803.2 ms" in a CI run. */
static void test_wait_on_an_unnumbered_object(tm_thread *t) {
  static int lock_word;
  tm_object *o = tm_object_home_slot(&lock_word);
  CHECK_EQ(atomic_load(&o->address), 0); /* free: plant the adder's claim */
  atomic_store(&o->address, (uintptr_t)&lock_word);
  CHECK(tm_object_home(&lock_word) == o);
  drain_all(t);
  tm_wait w;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_MUTEX, 0, NULL);
  tm_wait_end(&w, TM_ACQ_EXCLUSIVE);
  const uint32_t id = o->id;
  CHECK(id != 0);
  tm_event ev[4];
  CHECK_EQ(tm_ring_drain(&t->ring, ev, 4), 2);
  CHECK_EQ(ev[0].state, TM_STATE_BLOCKED_MUTEX);
  CHECK_EQ(ev[0].object_id, id);
  uint64_t counted = 0;
  for (uint32_t i = 0, n = tm_sites_pair_count(); i < n; i++) {
    uint32_t oid, stack;
    uint64_t count, wait_ns;
    if (tm_site_pair(i, &oid, &stack, &count, &wait_ns) && oid == id) counted += count;
  }
  CHECK_EQ(atomic_load(&o->contentions), 1);
  CHECK_EQ(counted, 1);
  CHECK(tm_object_get(&lock_word, TM_KIND_MUTEX) == o);
  CHECK_EQ(o->id, id);
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
  /* Mutexes never locked here (their counts are driven by hand): the hold
   * sampler reads a mutex's type and recursion count. */
  static pthread_mutex_t lock_word = PTHREAD_MUTEX_INITIALIZER,
                         other_word = PTHREAD_MUTEX_INITIALIZER,
                         third_word = PTHREAD_MUTEX_INITIALIZER;
  tm_object *o = tm_object_get(&lock_word, TM_KIND_MUTEX);
  o->acquisitions = 0;
  CHECK(tm_hold_addr[0] == NULL && tm_hold_addr[1] == NULL);
  /* The first TM_HOLD_EXACT holds are all timed: a lock taken a few times
   * for long (the case that read 0) is exact. */
  for (unsigned i = 0; i < TM_HOLD_EXACT; i++) {
    tm_count_exclusive(&lock_word, TM_KIND_MUTEX);
    CHECK(tm_hold_timing(&lock_word));
    if (i == 10) sleep_ms(2);
    tm_hold_release(&lock_word, TM_KIND_MUTEX);
  }
  CHECK_EQ(atomic_load(&o->hold_samples), TM_HOLD_EXACT);
  CHECK(atomic_load(&o->hold_ns) >= 2000000u && atomic_load(&o->hold_ns) < 50000000u);
  /* Then about one in TM_HOLD_DENSE_EVERY up to TM_HOLD_DENSE_UNTIL, one
   * in TM_HOLD_SAMPLE_EVERY after, each weighing for the acquisitions since
   * the previous timed one. */
  uint64_t timed = 0, gaps_max = 0, prev = TM_HOLD_EXACT;
  uint64_t dense_timed = 0, dense_gaps_max = 0;
  while (o->acquisitions < TM_HOLD_DENSE_UNTIL + 64 * 200) {
    tm_count_exclusive(&lock_word, TM_KIND_MUTEX);
    if (tm_hold_timing(&lock_word)) {
      bool dense = prev < TM_HOLD_DENSE_UNTIL;
      uint64_t gap = o->acquisitions - prev;
      if (dense) {
        dense_timed++;
        if (gap > dense_gaps_max) dense_gaps_max = gap;
      } else {
        timed++;
        if (gap > gaps_max) gaps_max = gap;
      }
      prev = o->acquisitions;
    }
    tm_hold_release(&lock_word, TM_KIND_MUTEX);
  }
  uint64_t dense_expect = (TM_HOLD_DENSE_UNTIL - TM_HOLD_EXACT) / TM_HOLD_DENSE_EVERY;
  CHECK(dense_timed > dense_expect * 3 / 4 && dense_timed < dense_expect * 5 / 4);
  CHECK(dense_gaps_max < 2 * TM_HOLD_DENSE_EVERY);
  CHECK(timed > 100 && timed < 400);
  CHECK(gaps_max < 2 * TM_HOLD_SAMPLE_EVERY);
  CHECK_EQ(atomic_load(&o->hold_last), prev);
  /* A lock taken inside a timed one is timed too (memcached's slabs_lock
   * inside its LRU maintainer's lock, whose holds are all timed). */
  tm_object *b = tm_object_get(&other_word, TM_KIND_MUTEX);
  tm_count_exclusive(&other_word, TM_KIND_MUTEX);
  CHECK(tm_hold_timing(&other_word));
  /* A recursive mutex taken again is one hold: the second slot stays free,
   * and the inner acquisition is timed as holding it for no time. */
  tm_count_exclusive(&other_word, TM_KIND_MUTEX);
  CHECK(tm_hold_addr[1] == NULL);
  CHECK_EQ(atomic_load(&b->hold_samples), 1);
  uint64_t inner_timed = 0;
  for (int i = 0; i < 64 * 20; i++) {
    tm_count_exclusive(&lock_word, TM_KIND_MUTEX);
    if (tm_hold_timing(&lock_word)) {
      inner_timed++;
      CHECK(tm_hold_timing(&other_word));
    }
    tm_hold_release(&lock_word, TM_KIND_MUTEX);
  }
  CHECK(inner_timed > 5 && inner_timed < 60);
  /* With both slots taken, a hold that cannot be timed is counted by the
   * next timed one. */
  tm_count_exclusive(&third_word, TM_KIND_MUTEX);
  CHECK(tm_hold_timing(&third_word));
  tm_count_exclusive(&lock_word, TM_KIND_MUTEX);
  while (atomic_load(&o->hold_next) > o->acquisitions) {
    tm_hold_release(&lock_word, TM_KIND_MUTEX); /* not timed: both slots are */
    tm_count_exclusive(&lock_word, TM_KIND_MUTEX);
  }
  CHECK(!tm_hold_timing(&lock_word));
  uint64_t skipped_at = o->acquisitions;
  tm_hold_release(&lock_word, TM_KIND_MUTEX);
  tm_hold_release(&third_word, TM_KIND_MUTEX);
  tm_hold_release(&other_word, TM_KIND_MUTEX);
  CHECK_EQ(atomic_load(&b->hold_samples), 2);
  CHECK(atomic_load(&o->hold_last) < skipped_at);
  tm_count_exclusive(&lock_word, TM_KIND_MUTEX);
  CHECK(tm_hold_timing(&lock_word)); /* the skipped one's weight with it */
  tm_hold_release(&lock_word, TM_KIND_MUTEX);
  CHECK_EQ(atomic_load(&o->hold_last), skipped_at + 1);
  CHECK(tm_hold_addr[0] == NULL && tm_hold_addr[1] == NULL);
  (void)t;
}

/* A recursive mutex: the hold is the outermost lock's to the outermost
 * unlock. An acquisition that finds it held by its caller already (not
 * timed as the outer one, in the sampled stretch) holds it for no time of
 * its own, and an inner unlock does not end the outer hold. */
static void test_hold_recursive(void) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  static pthread_mutex_t rm;
  CHECK_EQ(pthread_mutex_init(&rm, &a), 0);
  tm_object *o = tm_object_get(&rm, TM_KIND_MUTEX);
  CHECK(o != NULL);
  CHECK_EQ(pthread_mutex_lock(&rm), 0); /* the real ones: not interposed here */
  CHECK(!tm_hold_inner(&rm, TM_KIND_MUTEX));
  tm_count_exclusive(&rm, TM_KIND_MUTEX);
  CHECK(tm_hold_timing(&rm));
  CHECK_EQ(pthread_mutex_lock(&rm), 0);
  CHECK(tm_hold_inner(&rm, TM_KIND_MUTEX));
  tm_count_exclusive(&rm, TM_KIND_MUTEX);
  CHECK_EQ(atomic_load(&o->hold_samples), 1); /* the inner one, as 0 */
  CHECK_EQ(atomic_load(&o->hold_ns), 0);
  sleep_ms(3);
  CHECK(tm_hold_inner(&rm, TM_KIND_MUTEX)); /* the unlock wrapper's test */
  CHECK_EQ(pthread_mutex_unlock(&rm), 0);
  CHECK(tm_hold_timing(&rm));
  CHECK(!tm_hold_inner(&rm, TM_KIND_MUTEX));
  tm_hold_release(&rm, TM_KIND_MUTEX);
  CHECK_EQ(pthread_mutex_unlock(&rm), 0);
  CHECK_EQ(atomic_load(&o->hold_samples), 2);
  CHECK(atomic_load(&o->hold_ns) >= 3000000u); /* outer hold, weight 1 */
  /* Past the exact stretch, an inner acquisition the sampler picks while
   * the outer is untimed is a hold of 0 too, its weight taken. */
  atomic_store(&o->hold_next, o->acquisitions + 2);
  CHECK_EQ(pthread_mutex_lock(&rm), 0);
  tm_count_exclusive(&rm, TM_KIND_MUTEX);
  CHECK(!tm_hold_timing(&rm));
  CHECK_EQ(pthread_mutex_lock(&rm), 0);
  uint64_t before = atomic_load(&o->hold_ns);
  tm_count_exclusive(&rm, TM_KIND_MUTEX);
  CHECK(!tm_hold_timing(&rm));
  CHECK_EQ(atomic_load(&o->hold_samples), 3);
  CHECK_EQ(atomic_load(&o->hold_ns), before);
  CHECK_EQ(atomic_load(&o->hold_last), o->acquisitions);
  CHECK_EQ(pthread_mutex_unlock(&rm), 0);
  CHECK_EQ(pthread_mutex_unlock(&rm), 0);
  pthread_mutexattr_destroy(&a);
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
  /* Its creator may still name it through its pthread_t until it is sealed. */
  uintptr_t handle = (uintptr_t)th;
  tm_thread_set_handle(c, handle);
  CHECK(tm_thread_rename_ended(handle, "named-late"));
  CHECK(strcmp(c->name, "named-late") == 0);
  tm_thread_release(c); /* not sealed yet: stays */
  CHECK_EQ(atomic_load(&c->slot_state), TM_SLOT_EXITED);
  tm_thread_seal(c);
  CHECK_EQ(atomic_load(&c->slot_state), TM_SLOT_SEALED);
  tm_thread_rename_ended(handle, "too-late"); /* earlier records may share the handle */
  CHECK(strcmp(c->name, "named-late") == 0);
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

/* ---- releaser: who ended a wait ---- */

typedef struct {
  pthread_mutex_t m;
  pthread_cond_t c;
  int stage;
  _Atomic uint32_t tid;
} rel_case;

static uint32_t last_releaser(tm_thread *t, uint32_t *state_before) {
  tm_event ev[8];
  uint32_t n = tm_ring_drain(&t->ring, ev, 8);
  CHECK(n >= 2);
  *state_before = ev[n - 2].state;
  CHECK_EQ(ev[n - 1].state, TM_STATE_RUNNING);
  return ev[n - 1].releaser_tid;
}

static void *mutex_holder(void *arg) {
  rel_case *rc = arg;
  pthread_mutex_lock(&rc->m);
  atomic_store(&rc->tid, (uint32_t)gettid());
  sleep_ms(30); /* the main thread blocks on m meanwhile */
  pthread_mutex_unlock(&rc->m);
  return NULL;
}

/* Mutex: the thread holding it when the wait began released it (the
 * wrapper passes the owner glibc records; this is what it reads). */
static void test_releaser_mutex(tm_thread *t) {
  rel_case rc = {.m = PTHREAD_MUTEX_INITIALIZER};
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, mutex_holder, &rc), 0);
  while (!atomic_load(&rc.tid)) sleep_ms(1);
  tm_object *o = tm_object_get(&rc.m, TM_KIND_MUTEX);
  drain_all(t);
  CHECK_EQ(pthread_mutex_trylock(&rc.m), EBUSY);
  uint32_t owner = (uint32_t)rc.m.__data.__owner;
  CHECK_EQ(owner, atomic_load(&rc.tid));
  tm_wait w;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_MUTEX, owner, NULL);
  CHECK_EQ(pthread_mutex_lock(&rc.m), 0);
  tm_wait_end(&w, TM_ACQ_EXCLUSIVE);
  pthread_mutex_unlock(&rc.m);
  uint32_t before;
  CHECK_EQ(last_releaser(t, &before), atomic_load(&rc.tid));
  CHECK_EQ(before, TM_STATE_BLOCKED_MUTEX);
  pthread_join(th, NULL);
  /* A wait that failed (timed out) was released by nobody. */
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_MUTEX, 77, NULL);
  tm_wait_end(&w, TM_ACQ_NONE);
  CHECK_EQ(last_releaser(t, &before), 0);
}

static void *cond_signaller(void *arg) {
  rel_case *rc = arg;
  tm_thread *me = tm_thread_register_self(NULL, 0);
  CHECK(me != NULL);
  atomic_store(&rc->tid, me->tid);
  sleep_ms(20); /* let the main thread block first */
  pthread_mutex_lock(&rc->m);
  rc->stage = 1;
  /* What the pthread_cond_signal wrapper does before signalling. */
  tm_note_releaser(me, &rc->c, TM_KIND_COND);
  pthread_cond_signal(&rc->c);
  pthread_mutex_unlock(&rc->m);
  tm_thread_mark_exited(me);
  return NULL;
}

/* Cond: the waiter's RUNNING event names the thread that signalled it,
 * and another object's releaser stays apart. */
static void test_releaser_cond(tm_thread *t) {
  rel_case rc = {.m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER};
  static int other_cond;
  tm_note_releaser(t, &other_cond, TM_KIND_COND);
  tm_object *o = tm_object_get(&rc.c, TM_KIND_COND);
  CHECK(o != NULL);
  drain_all(t);
  pthread_t th;
  pthread_mutex_lock(&rc.m);
  CHECK_EQ(pthread_create(&th, NULL, cond_signaller, &rc), 0);
  tm_wait w;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_COND, 0, NULL);
  while (rc.stage == 0) pthread_cond_wait(&rc.c, &rc.m);
  tm_wait_released_by_object(&w);
  tm_wait_end(&w, TM_ACQ_SHARED);
  pthread_mutex_unlock(&rc.m);
  pthread_join(th, NULL);
  uint32_t before;
  uint32_t rel = last_releaser(t, &before);
  CHECK_EQ(before, TM_STATE_BLOCKED_COND);
  CHECK(rel != 0 && rel != t->tid);
  CHECK_EQ(rel, atomic_load(&rc.tid));
  CHECK_EQ(atomic_load(&tm_object_get(&other_cond, TM_KIND_COND)->releaser_tid), t->tid);
}

/* The TSC clock agrees with CLOCK_MONOTONIC once calibrated (the sampler
 * calibrates every tick; here by hand). */
static void test_wait_clock(void) {
  tm_clock_calibrate();
  sleep_ms(25);
  tm_clock_calibrate();
  for (int i = 0; i < 5; i++) {
    sleep_ms(3);
    uint64_t a = tm_now_ns();
    uint64_t c = tm_wait_clock();
    uint64_t b = tm_now_ns();
    /* A little slack either side: calibration error over a few ms. */
    CHECK(c + 20000 >= a && c <= b + 20000);
  }
}

int main(void) {
  tm_thread *t = tm_thread_register_self(NULL, 0);
  CHECK(t != NULL);
  CHECK_EQ(t->tid, getpid());
  CHECK(t->name[0] != '\0'); /* comm read at registration */
  test_wait_accounting(t);
  test_site_unwound_before_acquire(t);
  test_wait_on_an_unnumbered_object(t);
  test_cancelled_wait(t);
  test_hold_sampling(t);
  test_hold_recursive();
  test_releaser_mutex(t);
  test_releaser_cond(t);
  test_wait_clock();
  test_registry(t);
  return 0;
}
