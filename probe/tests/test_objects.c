/* The object table: one id per address even when many threads add it at
 * once, stable 1-based ids, first kind/flags kept, and a full table that
 * stops tracking new objects (counted) while known ones keep working. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "probe.h"
#include "tm_check.h"
#include "wrap.h"

#define THREADS 8
#define SHARED 2000

static char shared_objects[SHARED];
static pthread_barrier_t start;
static tm_object *seen[THREADS][SHARED];

/* Every adder must get the same slot. The id is read after the join: an
 * adder preempted between claiming a slot and giving its id makes the
 * others give it after a bounded wait (objects.c, ready()), which may skip
 * an id. */
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
    CHECK(id >= 1 && id <= tm_objects_last_id()); /* 1-based */
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
  /* The sampler's view: every used slot has an address and an id of its
   * own. Ids may have been skipped (test_concurrent_same_address's
   * preempted adders, on a loaded machine), so there may be fewer slots
   * than the highest id, never more. */
  const uint32_t last_id = tm_objects_last_id();
  unsigned char *id_used = calloc((size_t)last_id + 1, 1);
  CHECK(id_used != NULL);
  uint32_t used = 0, max_id = 0;
  for (uint32_t i = 0; i < tm_objects_capacity(); i++) {
    tm_object *o = tm_object_slot(i);
    if (atomic_load(&o->address) == 0) continue;
    used++;
    CHECK(o->id != 0 && o->id <= last_id);
    CHECK(!id_used[o->id]);
    id_used[o->id] = 1;
    if (o->id > max_id) max_id = o->id;
  }
  free(id_used);
  CHECK(used <= max_id);
  printf("table full after %u objects, %llu refused\n", used,
         (unsigned long long)tm_objects_untracked());
}

/* An adder preempted between claiming a slot and giving its id (planted
 * here: the address without an id) does not leave the threads that find
 * the object without one, so their waits keep their object: after the
 * bounded wait they give a new id, the same for all of them. */
static void test_adder_preempted(void) {
  uintptr_t key = ((uintptr_t)1 << 41) + 4096;
  tm_object *tab = atomic_load(&tm_object_table);
  uint32_t i = tm_object_hash(key);
  while (atomic_load(&tab[i].address) != 0) i = (i + 1) & (TM_MAX_OBJECTS - 1);
  const uint32_t before = tm_objects_last_id();
  atomic_store(&tab[i].address, key);
  tm_object *o = tm_object_find((void *)key, TM_KIND_MUTEX, 0);
  CHECK(o == &tab[i]);
  const uint32_t id = __atomic_load_n(&o->id, __ATOMIC_ACQUIRE);
  CHECK(id > before && id <= tm_objects_last_id());
  CHECK(tm_object_find((void *)key, TM_KIND_MUTEX, 0) == o);
  CHECK_EQ(__atomic_load_n(&o->id, __ATOMIC_ACQUIRE), id);
}

int main(void) {
  test_concurrent_same_address();
  test_first_sight_wins();
  test_full_table();
  test_adder_preempted();
  return 0;
}
