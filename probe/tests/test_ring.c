/* The per-thread event ring: order, wrap-around, drop+count when full, and
 * a producer thread against a consumer thread (sequence must be gap-free
 * apart from counted drops), and the marker of where a loss begins; a
 * grown ring taken only when empty, mid-stream too, and freed with its slot. */
#include <pthread.h>
#include <string.h>

#include "probe.h"
#include "tm_check.h"

#define N TM_RING_EVENTS


static void test_order_and_wrap(tm_thread *t) {
  tm_event out[N];
  /* Several passes over the ring so indices wrap. */
  for (uint32_t round = 0; round < 5; round++) {
    for (uint32_t i = 0; i < N / 2 + 7; i++)
      tm_push_state(t, TM_STATE_BLOCKED_MUTEX, round * 10000 + i, i + 1, 0, 100 + i);
    uint32_t n = tm_ring_drain(&t->ring, out, N);
    CHECK_EQ(n, N / 2 + 7);
    for (uint32_t i = 0; i < n; i++) {
      CHECK_EQ(out[i].object_id, round * 10000 + i);
      CHECK_EQ(out[i].holder_tid, i + 1);
      CHECK_EQ(out[i].time_ns, 100 + i);
      CHECK_EQ(out[i].state, TM_STATE_BLOCKED_MUTEX);
    }
  }
  CHECK_EQ(t->cur_state, TM_STATE_BLOCKED_MUTEX);
}

static void test_fold_when_full(tm_thread *t) {
  tm_event out[N];
  uint64_t folded0 = atomic_load(&t->folded);
  for (uint32_t i = 0; i < N + 100; i++) tm_push_state(t, TM_STATE_BLOCKED_MUTEX, i, 7, 0, i);
  /* N - 1 events fit; the last slot marks where the 101 folded ones begin;
   * nothing is dropped. */
  CHECK_EQ(atomic_load(&t->folded) - folded0, 101);
  CHECK_EQ(atomic_load(&t->ring.dropped), 0);
  CHECK_EQ(t->cur_state, TM_STATE_BLOCKED_MUTEX);
  /* Partial drain respects max and leaves the rest in order. */
  CHECK_EQ(tm_ring_drain(&t->ring, out, 10), 10);
  CHECK_EQ(out[9].object_id, 9);
  CHECK_EQ(tm_ring_drain(&t->ring, out, N), N - 10);
  CHECK_EQ(out[0].object_id, 10);
  CHECK_EQ(out[N - 12].object_id, N - 2);
  const tm_event *gap = &out[N - 11];
  CHECK_EQ(gap->state, TM_STATE_UNKNOWN);
  CHECK_EQ(gap->time_ns, N - 1);
  CHECK_EQ(gap->object_id, 0);
  CHECK_EQ(gap->holder_tid, 0);
  CHECK_EQ(tm_ring_drain(&t->ring, out, N), 0);
  /* Room again: events flow, and a ring never filled gets no marker. The
   * folded time is the gap's, from its marker to this change: all of it
   * blocked on the mutex. */
  tm_push_state(t, TM_STATE_RUNNING, 1, 0, 0, 5000);
  CHECK_EQ(tm_ring_drain(&t->ring, out, N), 1);
  CHECK_EQ(out[0].state, TM_STATE_RUNNING);
  CHECK_EQ(atomic_load(&t->folded) - folded0, 101);
  uint64_t f[TM_FOLD_STATES];
  tm_thread_folded(t, 6000, f);
  CHECK_EQ(f[TM_STATE_BLOCKED_MUTEX], 5000 - (N - 1));
}

/* The time of each folded state, exactly, and the open one as time passes. */
static void test_fold_times(tm_thread *t) {
  tm_event out[N];
  uint64_t base[TM_FOLD_STATES], f[TM_FOLD_STATES];
  uint64_t folded0 = tm_thread_folded(t, 0, base);
  for (uint32_t i = 0; i < N - 1; i++) tm_push_state(t, TM_STATE_RUNNING, 0, 0, 0, 10000 + i);
  tm_push_state(t, TM_STATE_BLOCKED_MUTEX, 3, 0, 0, 20000); /* the marker's change */
  tm_push_state(t, TM_STATE_RUNNING, 0, 0, 0, 20010);
  tm_push_state(t, TM_STATE_BLOCKED_COND, 4, 0, 0, 20030);
  tm_push_state(t, TM_STATE_RUNNING, 0, 0, 0, 20100);
  CHECK_EQ(tm_thread_folded(t, 20150, f) - folded0, 4);
  CHECK_EQ(f[TM_STATE_BLOCKED_MUTEX] - base[TM_STATE_BLOCKED_MUTEX], 10);
  CHECK_EQ(f[TM_STATE_BLOCKED_COND] - base[TM_STATE_BLOCKED_COND], 70);
  CHECK_EQ(f[TM_STATE_RUNNING] - base[TM_STATE_RUNNING], 20 + 50); /* 50 still open */
  CHECK_EQ(tm_ring_drain(&t->ring, out, N), N);
  CHECK_EQ(out[N - 1].state, TM_STATE_UNKNOWN);
  CHECK_EQ(out[N - 1].time_ns, 20000);
  /* The gap ends with the first change that fits; sums are then final. */
  tm_push_state(t, TM_STATE_SLEEPING, 0, 0, 0, 20200);
  CHECK_EQ(tm_thread_folded(t, 99999, f) - folded0, 4);
  CHECK_EQ(f[TM_STATE_RUNNING] - base[TM_STATE_RUNNING], 20 + 100);
  CHECK_EQ(f[TM_STATE_SLEEPING] - base[TM_STATE_SLEEPING], 0);
  CHECK_EQ(atomic_load(&t->fold_from), 0);
  CHECK_EQ(tm_ring_drain(&t->ring, out, N), 1);
  CHECK_EQ(out[0].state, TM_STATE_SLEEPING);
  CHECK_EQ(t->cur_state, TM_STATE_SLEEPING);
  /* An ended thread's folded EXITED is no time of its life. */
  for (uint32_t i = 0; i < N; i++) tm_push_state(t, TM_STATE_RUNNING, 0, 0, 0, 30000 + i);
  tm_push_state(t, TM_STATE_EXITED, 0, 0, 0, 40000);
  uint64_t before = f[TM_STATE_RUNNING];
  tm_thread_folded(t, 50000, f);
  CHECK_EQ(f[TM_STATE_RUNNING] - before, 40000 - (30000 + N - 1));
  CHECK_EQ(f[TM_STATE_EXITED], base[TM_STATE_EXITED]);
  tm_ring_drain(&t->ring, out, N);
}

/* A ring offered growth keeps its events; the thread takes the larger one
 * at its next push to an empty ring, which then holds TM_RING_GROWN_EVENTS
 * without folding. */
static void test_growth(tm_thread *t) {
  static tm_event out[TM_RING_GROWN_EVENTS];
  for (uint32_t i = 0; i < 3; i++) tm_push_state(t, TM_STATE_BLOCKED_MUTEX, 500 + i, 0, 0, i);
  CHECK(tm_ring_offer_growth(t));
  CHECK(!tm_ring_offer_growth(t)); /* one offer at a time */
  tm_push_state(t, TM_STATE_RUNNING, 503, 0, 0, 3); /* not empty: still the slot's ring */
  CHECK_EQ(tm_ring_capacity(&t->ring), N);
  CHECK_EQ(tm_ring_drain(&t->ring, out, N), 4);
  for (uint32_t i = 0; i < 4; i++) CHECK_EQ(out[i].object_id, 500 + i);
  uint64_t folded0 = atomic_load(&t->folded);
  const uint32_t many = 4 * N;
  for (uint32_t i = 0; i < many; i++) tm_push_state(t, TM_STATE_RUNNING, 1000 + i, 0, 0, 100 + i);
  CHECK_EQ(tm_ring_capacity(&t->ring), TM_RING_GROWN_EVENTS);
  CHECK_EQ(atomic_load(&t->folded), folded0);
  CHECK_EQ(tm_ring_drain(&t->ring, out, TM_RING_GROWN_EVENTS), many);
  for (uint32_t i = 0; i < many; i++) CHECK_EQ(out[i].object_id, 1000 + i);
  CHECK(!tm_ring_offer_growth(t)); /* grown already */
  /* Full at its new size: folds as before, the last slot the marker. */
  for (uint32_t i = 0; i < TM_RING_GROWN_EVENTS + 5; i++)
    tm_push_state(t, TM_STATE_RUNNING, i, 0, 0, 200000 + i);
  CHECK_EQ(atomic_load(&t->folded) - folded0, 6);
  CHECK_EQ(tm_ring_drain(&t->ring, out, TM_RING_GROWN_EVENTS), TM_RING_GROWN_EVENTS);
  CHECK_EQ(out[TM_RING_GROWN_EVENTS - 1].state, TM_STATE_UNKNOWN);
  tm_push_state(t, TM_STATE_RUNNING, 7, 0, 0, 300000);
  CHECK_EQ(tm_ring_drain(&t->ring, out, 1), 1);
}

#define STREAM 300000u
static _Atomic int producer_done;

static void *producer(void *arg) {
  tm_thread *t = tm_thread_register_self(NULL, 0);
  tm_event registered;
  CHECK_EQ(tm_ring_drain(&t->ring, &registered, 1), 1); /* its RUNNING event */
  atomic_store((_Atomic(tm_thread *) *)arg, t);
  for (uint32_t i = 1; i <= STREAM; i++) {
    /* Wait for room so that every event crosses threads (drops are tested
     * above); the consumer runs concurrently on the other side. */
    while (atomic_load(&t->ring.head) - atomic_load(&t->ring.tail) >=
           tm_ring_capacity(&t->ring) - 1)
      __builtin_ia32_pause();
    tm_push_state(t, TM_STATE_RUNNING, i, 0, 0, i);
  }
  atomic_store(&producer_done, 1);
  return NULL;
}

static void test_concurrent(void) {
  _Atomic(tm_thread *) handed = NULL;
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, producer, (void *)&handed), 0);
  tm_thread *t;
  while (!(t = atomic_load(&handed))) sched_yield();
  static tm_event out[N];
  uint64_t received = 0, last = 0;
  bool offered = false;
  for (;;) {
    int done = atomic_load(&producer_done);
    uint32_t n = tm_ring_drain(&t->ring, out, N);
    for (uint32_t i = 0; i < n; i++) {
      CHECK(out[i].object_id > last); /* strictly increasing: no torn or repeated event */
      CHECK_EQ(out[i].time_ns, out[i].object_id);
      last = out[i].object_id;
    }
    received += n;
    /* A third of the way: the producer takes it when it finds its ring
     * empty, between two of these drains. */
    if (received >= STREAM / 3 && !offered) offered = tm_ring_offer_growth(t);
    if (done && n == 0) break;
  }
  pthread_join(th, NULL);
  CHECK(offered);
  CHECK_EQ(received, STREAM);
  CHECK_EQ(last, STREAM);
  CHECK_EQ(atomic_load(&t->folded), 0);
  CHECK_EQ(tm_ring_capacity(&t->ring), TM_RING_GROWN_EVENTS);
  /* Ended and released: the slot's own ring again, for its next thread. */
  tm_thread_mark_exited(t);
  tm_thread_seal(t);
  tm_thread_release(t);
  CHECK_EQ(tm_ring_capacity(&t->ring), N);
  CHECK(atomic_load(&t->ring.grow) == NULL);
  printf("concurrent: %llu received, %llu dropped\n", (unsigned long long)received,
         (unsigned long long)atomic_load(&t->ring.dropped));
}

int main(void) {
  tm_thread *t = tm_thread_register_self(NULL, 0);
  CHECK(t != NULL);
  CHECK(tm_self == t);
  CHECK(t->is_main);
  CHECK_EQ(atomic_load(&t->slot_state), TM_SLOT_LIVE);
  tm_event first;
  CHECK_EQ(tm_ring_drain(&t->ring, &first, 1), 1); /* registration pushes RUNNING */
  CHECK_EQ(first.state, TM_STATE_RUNNING);
  test_order_and_wrap(t);
  test_fold_when_full(t);
  test_fold_times(t);
  test_growth(t);
  test_concurrent();
  return 0;
}
