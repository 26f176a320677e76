/* C11 threads (<threads.h>): the probe interposes thrd_*, mtx_* and cnd_*
 * (glibc's call its pthread functions past the names the probe wraps).
 * Each case prints every call's C11 result (thrd_success, thrd_busy,
 * thrd_timedout, thrd_error) and what a thread returned, compared with and
 * without the probe. */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <threads.h>

#include "conf.h"

static mtx_t shared_m;
static cnd_t shared_c;
static atomic_int stage;

/* A deadline ms from now on TIME_UTC (CLOCK_REALTIME), as C11 wants. */
static struct timespec utc_in(long ms) {
  return conf_deadline(CLOCK_REALTIME, ms);
}

static int returns_arg(void *arg) {
  return (int)(intptr_t)arg;
}

static int exits_with(void *arg) {
  thrd_exit((int)(intptr_t)arg);
}

/* An int result travels through the thread's pointer result: negative ones,
 * zero and thrd_exit's alike. */
static void create_join(void) {
  const int values[] = {42, -7, 0, 2147483647};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    thrd_t t;
    int res = 12345;
    CONF_SHOW(thrd_create(&t, returns_arg, (void *)(intptr_t)values[i]));
    CONF_SHOW(thrd_join(t, &res));
    say("returned %d", res);
  }
  thrd_t t;
  int res = 12345;
  CONF_SHOW(thrd_create(&t, exits_with, (void *)(intptr_t)-13));
  CONF_SHOW(thrd_join(t, &res));
  say("thrd_exit gave %d", res);
  CONF_SHOW(thrd_create(&t, returns_arg, (void *)5));
  CONF_SHOW(thrd_join(t, NULL)); /* no result wanted */
}

static int try_from_other(void *unused) {
  (void)unused;
  CONF_SHOW(mtx_trylock(&shared_m));
  struct timespec soon = utc_in(20);
  CONF_SHOW(mtx_timedlock(&shared_m, &soon));
  struct timespec past = utc_in(-1000);
  CONF_SHOW(mtx_timedlock(&shared_m, &past));
  return 0;
}

/* Busy and timed out, from another thread, on each mutex type. */
static void busy_and_timed_out(void) {
  const int types[] = {mtx_plain, mtx_timed, mtx_plain | mtx_recursive, mtx_timed | mtx_recursive};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    say("type %d", types[i]);
    CONF_SHOW(mtx_init(&shared_m, types[i]));
    CONF_SHOW(mtx_lock(&shared_m));
    thrd_t t;
    CONF_SHOW(thrd_create(&t, try_from_other, NULL));
    CONF_SHOW(thrd_join(t, NULL));
    CONF_SHOW(mtx_unlock(&shared_m));
    CONF_SHOW(mtx_trylock(&shared_m));
    CONF_SHOW(mtx_unlock(&shared_m));
    mtx_destroy(&shared_m);
  }
}

/* Taken three times by its owner, released three times. */
static void recursive(void) {
  mtx_t m;
  CONF_SHOW(mtx_init(&m, mtx_plain | mtx_recursive));
  CONF_SHOW(mtx_lock(&m));
  CONF_SHOW(mtx_trylock(&m));
  struct timespec soon = utc_in(20);
  CONF_SHOW(mtx_timedlock(&m, &soon)); /* not a recursive timed mutex: glibc's answer */
  CONF_SHOW(mtx_unlock(&m));
  CONF_SHOW(mtx_unlock(&m));
  CONF_SHOW(mtx_unlock(&m));
  mtx_destroy(&m);
}

static int waiter(void *arg) {
  int id = (int)(intptr_t)arg;
  mtx_lock(&shared_m);
  atomic_fetch_add(&stage, 1);
  int rc = thrd_success;
  while (atomic_load(&stage) < 100 && rc == thrd_success) rc = cnd_wait(&shared_c, &shared_m);
  mtx_unlock(&shared_m);
  return rc == thrd_success ? id : -1;
}

/* Signal wakes one, broadcast the rest; a timed wait times out holding the
 * mutex again. */
static void cond_waits(void) {
  CONF_SHOW(mtx_init(&shared_m, mtx_plain));
  CONF_SHOW(cnd_init(&shared_c));
  struct timespec soon = utc_in(20);
  CONF_SHOW(mtx_lock(&shared_m));
  CONF_SHOW(cnd_timedwait(&shared_c, &shared_m, &soon));
  CONF_SHOW(mtx_trylock(&shared_m)); /* held again: busy for a plain mutex */
  CONF_SHOW(mtx_unlock(&shared_m));
  CONF_SHOW(cnd_signal(&shared_c));    /* nobody waits */
  CONF_SHOW(cnd_broadcast(&shared_c)); /* nobody waits */
  atomic_store(&stage, 0);
  thrd_t t[3];
  for (int i = 0; i < 3; i++) CONF_SHOW(thrd_create(&t[i], waiter, (void *)(intptr_t)(i + 1)));
  while (atomic_load(&stage) < 3) conf_sleep_ms(1);
  mtx_lock(&shared_m); /* all three are inside cnd_wait now */
  atomic_store(&stage, 100);
  CONF_SHOW(cnd_signal(&shared_c));
  CONF_SHOW(cnd_broadcast(&shared_c));
  mtx_unlock(&shared_m);
  for (int i = 0; i < 3; i++) {
    int res = 0;
    CONF_SHOW(thrd_join(t[i], &res));
    say("waiter %d returned %d", i + 1, res);
  }
  cnd_destroy(&shared_c);
  mtx_destroy(&shared_m);
}

int main(int argc, char **argv) {
  static const conf_case cases[] = {
      CONF_CASE(create_join),
      CONF_CASE(busy_and_timed_out),
      CONF_CASE(recursive),
      CONF_CASE(cond_waits),
  };
  return conf_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
