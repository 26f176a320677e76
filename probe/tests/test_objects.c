/* The object table: one id per address even when many threads add it at
 * once, stable 1-based ids, first kind/flags kept, and a full table that
 * stops tracking new objects (counted) while known ones keep working. */
#include <pthread.h>
#include <stdint.h>

#include "probe.h"
#include "tm_check.h"

#define THREADS 8
#define SHARED 2000

static char shared_objects[SHARED];
static pthread_barrier_t start;
static tm_object *seen[THREADS][SHARED];

/* Every adder must get the same slot. The id is read after the join: an
 * adder preempted between claiming a slot and publishing its id makes the
 * others go on without waiting for it (objects.c, ready()), by design. */
static void *adder(void *arg) {
  tm_object **objs = arg;
  pthread_barrier_wait(&start);
  for (int i = 0; i < SHARED; i++) {
    objs[i] = tm_object_get(&shared_objects[i], TM_KIND_MUTEX);
    CHECK(objs[i] != NULL);
  }
  return NULL;
}

static void test_concurrent_same_address(void) {
  pthread_t th[THREADS];
  pthread_barrier_init(&start, NULL, THREADS);
  for (int i = 0; i < THREADS; i++) CHECK_EQ(pthread_create(&th[i], NULL, adder, seen[i]), 0);
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  static unsigned char id_used[SHARED + 1];
  for (int i = 0; i < SHARED; i++) {
    for (int t = 1; t < THREADS; t++) CHECK(seen[t][i] == seen[0][i]);
    uint32_t id = __atomic_load_n(&seen[0][i]->id, __ATOMIC_ACQUIRE);
    CHECK(id >= 1 && id <= SHARED); /* 1-based, nothing skipped */
    CHECK(!id_used[id]);
    id_used[id] = 1;
  }
}

static void test_first_sight_wins(void) {
  static int a;
  tm_object *o = tm_object_find(&a, TM_KIND_RWLOCK, 0x11);
  CHECK(o != NULL);
  tm_object *again = tm_object_find(&a, TM_KIND_SEM, 0x22);
  CHECK(again == o);
  CHECK_EQ(o->kind, TM_KIND_RWLOCK);
  CHECK_EQ(o->flags, 0x11);
  CHECK_EQ(atomic_load(&o->address), (uintptr_t)&a);
  CHECK(o->first_seen_ns > 0);
  CHECK(tm_object_get(NULL, TM_KIND_MUTEX) == NULL);
}

static void test_full_table(void) {
  /* Fake addresses: the table only keys on them, never dereferences. */
  uintptr_t base = (uintptr_t)1 << 40;
  uint32_t added = 0;
  tm_object *first = tm_object_get((void *)base, TM_KIND_MUTEX);
  CHECK(first != NULL);
  for (uint32_t i = 1; i < tm_objects_capacity(); i++) {
    if (!tm_object_get((void *)(base + 64u * i), TM_KIND_MUTEX)) break;
    added++;
  }
  CHECK(added < tm_objects_capacity());
  CHECK(added > tm_objects_capacity() / 2);
  uint64_t untracked = tm_objects_untracked();
  CHECK(untracked >= 1);
  /* Still full: a new address is refused and counted, a known one found. */
  CHECK(tm_object_get((void *)(base - 64), TM_KIND_MUTEX) == NULL);
  CHECK_EQ(tm_objects_untracked(), untracked + 1);
  CHECK(tm_object_get((void *)base, TM_KIND_MUTEX) == first);
  CHECK(tm_object_get(&shared_objects[7], TM_KIND_MUTEX) != NULL);
  /* The sampler's view: every used slot has an address and an id. */
  uint32_t used = 0, max_id = 0;
  for (uint32_t i = 0; i < tm_objects_capacity(); i++) {
    tm_object *o = tm_object_slot(i);
    if (atomic_load(&o->address) == 0) continue;
    used++;
    CHECK(o->id != 0);
    if (o->id > max_id) max_id = o->id;
  }
  CHECK_EQ(used, max_id);
  printf("table full after %u objects, %llu refused\n", used,
         (unsigned long long)tm_objects_untracked());
}

int main(void) {
  test_concurrent_same_address();
  test_first_sight_wins();
  test_full_table();
  return 0;
}
