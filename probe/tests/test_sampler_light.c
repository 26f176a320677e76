/* A thread that wakes every 20 ms for a few microseconds, in a wrapped
 * sleep the rest of the time: the sampler reads its counters at most every
 * ~200 ms while it does (sampler.c, LIGHT_REREAD_NS), and still gets them
 * right once it rests. Runs preloaded and reads its own capture back. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "test_session_util.h"
#include "tm_check.h"

#define WAKES 30
#define NAP_MS 20
#define REST_MS 400

static uint32_t tid;
static uint64_t wake0_ns, wake1_ns, rest1_ns, cpu_at_rest_ns;
static struct rusage ru;

static void *napper(void *arg) {
  (void)arg;
  tid = (uint32_t)gettid();
  wake0_ns = clock_ns(CLOCK_MONOTONIC);
  for (int i = 0; i < WAKES; i++) {
    uint64_t until = clock_ns(CLOCK_THREAD_CPUTIME_ID) + 20000; /* 20 us of work */
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < until) {
    }
    nap_ms(NAP_MS);
  }
  wake1_ns = clock_ns(CLOCK_MONOTONIC);
  getrusage(RUSAGE_THREAD, &ru);
  cpu_at_rest_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  nap_ms(REST_MS);
  rest1_ns = clock_ns(CLOCK_MONOTONIC);
  return NULL;
}

int main(void) {
  const char *path = getenv("THREADMON_OUTPUT");
  if (!path || !path[0]) {
    fprintf(stderr, "run preloaded with THREADMON_OUTPUT set\n");
    return 1;
  }
  nap_ms(100); /* well after the probe opened its events */
  pthread_t th;
  CHECK(pthread_create(&th, NULL, napper, NULL) == 0);
  CHECK(pthread_join(th, NULL) == 0);

  capture c;
  for (int tries = 0;; tries++) {
    CHECK(tries < 500);
    if (capture_load(path, &c) == 0) {
      const Threadmon__Frame *last = capture_last(&c, THREADMON__FRAME__BODY_TICK);
      if (last && last->tick->time_ns > rest1_ns) break;
      capture_free(&c);
    }
    nap_ms(10);
  }
  CHECK(!c.damaged);
  const Threadmon__Hello *h = c.frames[0]->hello;
  bool have_switch = false;
  for (size_t i = 0; i < h->n_sources; i++)
    if (h->sources[i] == THREADMON__SOURCE__SOURCE_PERF_SWITCH) have_switch = true;

  size_t waking = 0;
  const Threadmon__LwpSample *rest = NULL;
  for (size_t i = 0; i < c.n; i++) {
    if (c.frames[i]->body_case != THREADMON__FRAME__BODY_TICK) continue;
    const Threadmon__Tick *t = c.frames[i]->tick;
    for (size_t k = 0; k < t->n_lwps; k++) {
      const Threadmon__LwpSample *l = t->lwps[k];
      if (l->tid != tid) continue;
      if (t->time_ns > wake0_ns && t->time_ns <= wake1_ns) waking++;
      if (t->time_ns > wake1_ns && t->time_ns <= rest1_ns) rest = l;
    }
  }
  double wake_s = (double)(wake1_ns - wake0_ns) / 1e9;
  printf("tid %u: %zu samples in %.2f s of %d wake-ups; at rest: vol %llu (getrusage %ld + 1), "
         "oncpu %llu (>= %llu) ns\n",
         tid, waking, wake_s, WAKES, rest ? (unsigned long long)rest->vol_ctxsw : 0ull,
         ru.ru_nvcsw, rest ? (unsigned long long)rest->oncpu_ns : 0ull,
         (unsigned long long)cpu_at_rest_ns);
  /* Without records every wake-up is read: nothing to bound. */
  if (have_switch) CHECK((double)waking <= wake_s / 0.2 + 2);
  CHECK(rest != NULL);
  CHECK_EQ(rest->vol_ctxsw, (uint64_t)ru.ru_nvcsw + 1);
  CHECK(rest->oncpu_ns >= cpu_at_rest_ns && rest->oncpu_ns < cpu_at_rest_ns + 2000000);
  capture_free(&c);
  return 0;
}
