/* A user-thread switch is timed at the wrapper's entry, before the probe
 * looks up whose context it goes to. A switch to a copy of a made context
 * (an address no wrapper saw) is looked up by its stack pointer, newest
 * made first: behind COUNT other user threads, the lookup takes long enough
 * that an event timed after it is measurably late. The program reads its
 * clock just before its call, as an M:N scheduler's own accounting does;
 * the event must be nearer that than the fiber's first instruction (a CI
 * run lost 8.7 ms of a user thread to a preemption between a workload's
 * clock and the probe's, after the lookups). Runs preloaded and reads its
 * own capture back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "test_session_util.h"
#include "tm_check.h"

#define COUNT 16000    /* user threads made after the target */
#define TINY_STACK 512 /* theirs: never run */
#define STACK 65536

static ucontext_t main_ctx, target_ctx, copy_ctx, back_ctx;
static char stack[STACK] __attribute__((aligned(16)));
static uint64_t called_ns, entered_ns;

static void fiber(void) {
  entered_ns = clock_ns(CLOCK_MONOTONIC);
  swapcontext(&back_ctx, &main_ctx);
}

static void unused(void) {}

/* The time of the first switch 0 -> 1 on tid, or 0. */
static uint64_t switch_time(const capture *c, uint32_t tid) {
  for (size_t i = 0; i < c->n; i++) {
    if (c->frames[i]->body_case != THREADMON__FRAME__BODY_USER_SWITCHES) continue;
    const Threadmon__UserSwitches *s = c->frames[i]->user_switches;
    uint64_t t = s->base_ns;
    for (size_t k = 0; k < s->n_tid && k < s->n_delta_ns; k++) {
      t += (uint64_t)s->delta_ns[k];
      if (s->tid[k] == tid && k < s->n_to_id && s->to_id[k] == 1 && k < s->n_from_id &&
          s->from_id[k] == 0)
        return t;
    }
  }
  return 0;
}

int main(void) {
  const char *path = getenv("THREADMON_OUTPUT");
  if (!path || !path[0]) {
    fprintf(stderr, "run preloaded with THREADMON_OUTPUT set\n");
    return 1;
  }
  nap_ms(100); /* the session is up, its clock calibrated */
  CHECK_EQ(getcontext(&target_ctx), 0);
  target_ctx.uc_stack.ss_sp = stack;
  target_ctx.uc_stack.ss_size = STACK;
  target_ctx.uc_link = &main_ctx;
  makecontext(&target_ctx, fiber, 0); /* user thread 1 */
  ucontext_t *others = calloc(COUNT, sizeof *others);
  char *tiny = aligned_alloc(64, (size_t)COUNT * TINY_STACK);
  CHECK(others && tiny);
  for (int i = 0; i < COUNT; i++) {
    others[i] = target_ctx;
    others[i].uc_stack.ss_sp = tiny + (size_t)i * TINY_STACK;
    others[i].uc_stack.ss_size = TINY_STACK;
    makecontext(&others[i], unused, 0);
  }
  memcpy(&copy_ctx, &target_ctx, sizeof copy_ctx);
  called_ns = clock_ns(CLOCK_MONOTONIC);
  CHECK_EQ(swapcontext(&main_ctx, &copy_ctx), 0);
  const uint64_t back_ns = clock_ns(CLOCK_MONOTONIC);
  CHECK(entered_ns > called_ns);

  capture c;
  uint64_t at = 0;
  for (int tries = 0;; tries++) {
    CHECK(tries < 500);
    if (capture_load(path, &c) == 0) {
      const Threadmon__Frame *last = capture_last(&c, THREADMON__FRAME__BODY_TICK);
      if (last && last->tick->time_ns > back_ns && (at = switch_time(&c, (uint32_t)gettid())))
        break;
      capture_free(&c);
    }
    nap_ms(10);
  }
  CHECK(!c.damaged);
  const int64_t late = (int64_t)(at - called_ns), whole = (int64_t)(entered_ns - called_ns);
  printf("switch event %lld ns after the call; the fiber ran %lld ns after it\n", (long long)late,
         (long long)whole);
  /* The lookup is most of the call; the event is timed before it. A few
   * microseconds of clock conversion error either way are allowed. */
  CHECK(late > -5000);
  CHECK(late < whole / 4 + 5000);
  capture_free(&c);
  free(others);
  free(tiny);
  return 0;
}
