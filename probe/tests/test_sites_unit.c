/* The call-site tables without a session: one stack per call site however
 * often it is unwound, the per-thread unwind rate, waits that were not
 * unwound going to the last stack of their object or to TM_SITE_UNKNOWN.
 * Also prints what a contended wait costs here (cached and unwound). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "probe.h"
#include "sites.h"
#include "tm_check.h"

static tm_thread self;

typedef struct totals {
  uint64_t contentions, wait_ns;
} totals;

static totals pair_totals(uint32_t object_id, uint32_t stack_id) {
  totals t = {0, 0};
  for (uint32_t i = 0, n = tm_sites_pair_count(); i < n; i++) {
    uint32_t o, s;
    uint64_t c, w;
    if (tm_site_pair(i, &o, &s, &c, &w) && o == object_id && s == stack_id) t = (totals){c, w};
  }
  return t;
}

/* Two distinct call sites of a contended wait. */
__attribute__((noinline)) static void site_a(tm_object *o, uint64_t now) {
  tm_site_end(tm_site_begin(&self, o->id, now), 10);
  __asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) static void site_b(tm_object *o, uint64_t now) {
  tm_site_end(tm_site_begin(&self, o->id, now), 20);
  __asm__ volatile("" ::: "memory");
}

static uint64_t clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void) {
  static int obj_a, obj_b, obj_c;
  tm_object *a = tm_object_get(&obj_a, TM_KIND_MUTEX);
  tm_object *b = tm_object_get(&obj_b, TM_KIND_MUTEX);
  tm_object *c = tm_object_get(&obj_c, TM_KIND_MUTEX);
  CHECK(a && b && c);
  uint64_t now = 1000000000000u;

  /* A token every time (1 s apart): 100 unwinds, one stack. */
  uint32_t before = tm_sites_stacks_published();
  uint64_t unwinds = tm_sites_unwinds();
  for (int i = 0; i < 100; i++) site_a(a, now += 1000000000u);
  CHECK_EQ(tm_sites_unwinds() - unwinds, 100);
  CHECK_EQ(tm_sites_stacks_published(), before + 1);
  uint32_t stack_a = tm_sites_stacks_published();
  CHECK(tm_site_stack(stack_a, (void *[TM_SITE_FRAMES]){0}) >= 2);
  CHECK_EQ(pair_totals(a->id, stack_a).contentions, 100);
  CHECK_EQ(pair_totals(a->id, stack_a).wait_ns, 1000);

  /* Another call site: another stack. */
  site_b(a, now += 1000000000u);
  CHECK_EQ(tm_sites_stacks_published(), stack_a + 1);
  uint32_t stack_b = stack_a + 1;

  /* 1,000 waits at one instant (from a new place in main: a new stack):
   * TM_SITE_BURST unwinds, the rest count for the stack this thread last
   * unwound for the object. */
  now += 1000000000u;
  unwinds = tm_sites_unwinds();
  for (int i = 0; i < 1000; i++) site_a(a, now);
  CHECK_EQ(tm_sites_unwinds() - unwinds, TM_SITE_BURST);
  CHECK_EQ(tm_sites_stacks_published(), stack_b + 1);
  uint32_t stack_burst = stack_b + 1;
  CHECK_EQ(pair_totals(a->id, stack_burst).contentions, 1000);
  CHECK_EQ(pair_totals(a->id, stack_a).contentions, 100);
  CHECK_EQ(pair_totals(a->id, stack_b).contentions, 1);

  /* Out of tokens, an object never unwound counts as not unwound. */
  site_b(b, now);
  CHECK_EQ(pair_totals(b->id, TM_SITE_UNKNOWN).contentions, 1);
  CHECK_EQ(tm_sites_stacks_published(), stack_burst);

  /* Interning: the same frames give the same id; exact_top is part of it. */
  void *pcs[3] = {(void *)0x1000, (void *)0x2000, (void *)0x3000};
  uint32_t id = tm_site_intern(pcs, 3, false);
  CHECK(id > stack_burst);
  CHECK_EQ(tm_site_intern(pcs, 3, false), id);
  CHECK(tm_site_intern(pcs, 3, true) != id);
  CHECK(tm_site_stack_exact_top(tm_site_intern(pcs, 3, true)));
  CHECK(!tm_site_stack_exact_top(id));
  CHECK_EQ(tm_site_intern(pcs, 0, false), TM_SITE_UNKNOWN);

  /* Cost per contended wait: counted into the cached pair, and unwound
   * (timing only, printed for docs/benchmarks: a busy machine varies). */
  enum { N = 1000000, U = 20000 };
  uint64_t t0 = clock_ns();
  for (int i = 0; i < N; i++) site_a(c, now);
  uint64_t cached = clock_ns() - t0;
  t0 = clock_ns();
  for (int i = 0; i < U; i++) site_a(c, now += 1000000000u);
  uint64_t unwound = clock_ns() - t0;
  printf("site cost: %.1f ns per wait counted, %.0f ns per wait unwound\n",
         (double)cached / N, (double)unwound / U);
  printf("test_sites_unit: ok\n");
  return 0;
}
