/* A program bound to the old pthread_cond_*@GLIBC_2.2.5 ABI (as binaries
 * built before glibc 2.3.2 are): the probe must forward each call to the
 * old implementation. An unversioned wrapper sent such calls to the new one
 * and crashed. */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "preload_check.h"

__asm__(".symver old_cond_init, pthread_cond_init@GLIBC_2.2.5");
__asm__(".symver old_cond_destroy, pthread_cond_destroy@GLIBC_2.2.5");
__asm__(".symver old_cond_wait, pthread_cond_wait@GLIBC_2.2.5");
__asm__(".symver old_cond_timedwait, pthread_cond_timedwait@GLIBC_2.2.5");
__asm__(".symver old_cond_signal, pthread_cond_signal@GLIBC_2.2.5");
__asm__(".symver old_cond_broadcast, pthread_cond_broadcast@GLIBC_2.2.5");
int old_cond_init(pthread_cond_t *, const pthread_condattr_t *);
int old_cond_destroy(pthread_cond_t *);
int old_cond_wait(pthread_cond_t *, pthread_mutex_t *);
int old_cond_timedwait(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
int old_cond_signal(pthread_cond_t *);
int old_cond_broadcast(pthread_cond_t *);

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c;
static int turn, rounds_done;

#define ROUNDS 200

static void *pong(void *arg) {
  CHECK_EQ(pthread_mutex_lock(&m), 0);
  for (int i = 0; i < ROUNDS; i++) {
    while (turn != 1) CHECK_EQ(old_cond_wait(&c, &m), 0);
    turn = 0;
    rounds_done++;
    CHECK_EQ(old_cond_signal(&c), 0);
  }
  CHECK_EQ(pthread_mutex_unlock(&m), 0);
  return arg;
}

int main(void) {
  CHECK_INTERPOSED(old_cond_wait);
  CHECK_EQ(old_cond_init(&c, NULL), 0);
  pthread_t th;
  CHECK_EQ(pthread_create(&th, NULL, pong, NULL), 0);
  CHECK_EQ(pthread_mutex_lock(&m), 0);
  for (int i = 0; i < ROUNDS; i++) {
    turn = 1;
    CHECK_EQ(old_cond_broadcast(&c), 0);
    while (turn != 0) CHECK_EQ(old_cond_wait(&c, &m), 0);
  }
  struct timespec soon;
  clock_gettime(CLOCK_REALTIME, &soon);
  soon.tv_nsec += 10000000;
  if (soon.tv_nsec >= 1000000000) soon.tv_sec++, soon.tv_nsec -= 1000000000;
  CHECK_EQ(old_cond_timedwait(&c, &m, &soon), ETIMEDOUT);
  CHECK_EQ(pthread_mutex_unlock(&m), 0);
  CHECK_EQ(pthread_join(th, NULL), 0);
  CHECK_EQ(rounds_done, ROUNDS);
  CHECK_EQ(old_cond_destroy(&c), 0);
  return 0;
}
