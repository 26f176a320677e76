/* A thread cancelled while blocked in a wrapped call (cond wait, join,
 * sem_wait, nanosleep) still runs its cleanup handlers, exits as
 * PTHREAD_CANCELED, and leaves the program working: the cond's mutex is
 * re-acquired by the handler's owner and can be taken again. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>

#include "preload_check.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sem_t never;
static _Atomic int cleanups;
static _Atomic int blocked;

static void unlock_cleanup(void *arg) {
  CHECK_EQ(pthread_mutex_unlock(arg), 0); /* we own it again after cancel */
  cleanups++;
}
static void count_cleanup(void *arg) {
  (void)arg;
  cleanups++;
}

static void *wait_cond(void *arg) {
  CHECK_EQ(pthread_mutex_lock(&m), 0);
  pthread_cleanup_push(unlock_cleanup, &m);
  blocked = 1;
  for (;;) pthread_cond_wait(&c, &m);
  pthread_cleanup_pop(0);
  return arg;
}

static void *sleeper(void *arg) {
  (void)arg;
  struct timespec forever = {1000, 0};
  for (;;) nanosleep(&forever, NULL);
  return NULL;
}

static void *wait_join(void *arg) {
  pthread_cleanup_push(count_cleanup, NULL);
  blocked = 1;
  pthread_join(*(pthread_t *)arg, NULL); /* the target never ends */
  pthread_cleanup_pop(0);
  return NULL;
}

static void *wait_sem(void *arg) {
  pthread_cleanup_push(count_cleanup, NULL);
  blocked = 1;
  sem_wait(&never);
  pthread_cleanup_pop(0);
  return arg;
}

static void *wait_sleep(void *arg) {
  pthread_cleanup_push(count_cleanup, NULL);
  blocked = 1;
  sleeper(arg);
  pthread_cleanup_pop(0);
  return NULL;
}

static void cancel_blocked(void *(*fn)(void *), void *arg) {
  pthread_t th;
  void *ret;
  int before = cleanups;
  blocked = 0;
  CHECK_EQ(pthread_create(&th, NULL, fn, arg), 0);
  while (!blocked) usleep(1000);
  usleep(20000); /* let it reach the blocking call */
  CHECK_EQ(pthread_cancel(th), 0);
  CHECK_EQ(pthread_join(th, &ret), 0);
  CHECK(ret == PTHREAD_CANCELED);
  CHECK_EQ(cleanups, before + 1);
}

int main(void) {
  CHECK_INTERPOSED(pthread_cond_wait);
  CHECK_INTERPOSED(pthread_join);
  CHECK_EQ(sem_init(&never, 0, 0), 0);
  cancel_blocked(wait_cond, NULL);
  CHECK_EQ(pthread_mutex_trylock(&m), 0); /* released by the cleanup handler */
  CHECK_EQ(pthread_mutex_unlock(&m), 0);

  pthread_t forever;
  CHECK_EQ(pthread_create(&forever, NULL, sleeper, NULL), 0);
  cancel_blocked(wait_join, &forever);
  cancel_blocked(wait_sem, NULL);
  cancel_blocked(wait_sleep, NULL);
  CHECK_EQ(pthread_cancel(forever), 0);
  CHECK_EQ(pthread_join(forever, NULL), 0);

  /* The program's cond still works after a cancelled waiter. */
  CHECK_EQ(pthread_mutex_lock(&m), 0);
  CHECK_EQ(pthread_cond_signal(&c), 0);
  CHECK_EQ(pthread_mutex_unlock(&m), 0);
  return 0;
}
