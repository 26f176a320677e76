/* Sleeps: SLEEPING for the call. Return values, errno (EINTR) and the
 * remaining time are the real function's; all four are cancellation
 * points, hence the cleanup handlers. */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "observe.h"
#include "real.h"
#include "wrap.h"

enum sleep_kind { NANOSLEEP, CLOCK_NANOSLEEP, USLEEP, SLEEP };

typedef struct sleep_call {
  enum sleep_kind kind;
  clockid_t clk;
  int flags;
  const struct timespec *req;
  struct timespec *rem;
  unsigned amount; /* usleep microseconds, sleep seconds */
} sleep_call;

static long real_sleep(const sleep_call *c) {
  switch (c->kind) {
  case CLOCK_NANOSLEEP: return tm_real.clock_nanosleep(c->clk, c->flags, c->req, c->rem);
  case USLEEP: return tm_real.usleep(c->amount);
  case SLEEP: return (long)tm_real.sleep(c->amount);
  default: return tm_real.nanosleep(c->req, c->rem);
  }
}

static long sleep_common(const sleep_call *c) {
  tm_thread *t = tm_observer();
  if (!t) return real_sleep(c);
  tm_wait w;
  long rc;
  tm_wait_begin(&w, t, NULL, TM_STATE_SLEEPING, 0, NULL);
  pthread_cleanup_push(tm_wait_cancelled, &w);
  rc = real_sleep(c);
  pthread_cleanup_pop(0);
  int err = errno;
  tm_wait_end(&w, TM_ACQ_NONE);
  errno = err;
  return rc;
}

TM_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem) {
  sleep_call c = {NANOSLEEP, CLOCK_REALTIME, 0, req, rem, 0};
  return (int)sleep_common(&c);
}

TM_EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                              struct timespec *rem) {
  sleep_call c = {CLOCK_NANOSLEEP, clk, flags, req, rem, 0};
  return (int)sleep_common(&c);
}

TM_EXPORT int usleep(useconds_t usec) {
  sleep_call c = {USLEEP, CLOCK_REALTIME, 0, NULL, NULL, usec};
  return (int)sleep_common(&c);
}

TM_EXPORT unsigned sleep(unsigned seconds) {
  sleep_call c = {SLEEP, CLOCK_REALTIME, 0, NULL, NULL, seconds};
  return (unsigned)sleep_common(&c);
}
