/* Semaphores and sleeps under the probe: return values, errno (EAGAIN,
 * ETIMEDOUT, EINVAL, EINTR), remaining time, and sem_post from a signal
 * handler waking a thread blocked in sem_wait. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "preload_check.h"

static sem_t sem;

static void on_alarm(int sig) {
  (void)sig;
  int saved = errno;
  sem_post(&sem); /* async-signal-safe, also under the probe */
  errno = saved;
}

static void test_sem(void) {
  CHECK_EQ(sem_init(&sem, 0, 1), 0);
  errno = 777;
  CHECK_EQ(sem_wait(&sem), 0);
  CHECK_EQ(errno, 777); /* the probe's trywait must not leak EAGAIN */
  CHECK_EQ(sem_trywait(&sem), -1);
  CHECK_EQ(errno, EAGAIN);
  struct timespec soon;
  clock_gettime(CLOCK_REALTIME, &soon);
  soon.tv_nsec += 20000000;
  if (soon.tv_nsec >= 1000000000) soon.tv_sec++, soon.tv_nsec -= 1000000000;
  CHECK_EQ(sem_timedwait(&sem, &soon), -1);
  CHECK_EQ(errno, ETIMEDOUT);
  struct timespec bad = {0, 1000000000};
  CHECK_EQ(sem_timedwait(&sem, &bad), -1);
  CHECK_EQ(errno, EINVAL);
  CHECK_EQ(sem_clockwait(&sem, CLOCK_PROCESS_CPUTIME_ID, &soon), -1);
  CHECK_EQ(errno, EINVAL);
  CHECK_EQ(sem_post(&sem), 0);
  CHECK_EQ(sem_trywait(&sem), 0);

  /* Blocked in sem_wait; the post comes from a signal handler. */
  struct sigaction sa = {0};
  sa.sa_handler = on_alarm;
  CHECK_EQ(sigaction(SIGALRM, &sa, NULL), 0);
  struct itimerspec once = {{0, 0}, {0, 30000000}};
  timer_t timer;
  struct sigevent sev = {0};
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGALRM;
  CHECK_EQ(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
  CHECK_EQ(timer_settime(timer, 0, &once, NULL), 0);
  int rc;
  while ((rc = sem_wait(&sem)) == -1 && errno == EINTR) {
  }
  CHECK_EQ(rc, 0);
  timer_delete(timer);
}

static void on_usr1(int sig) { (void)sig; }

static void *interrupt_later(void *main_thread) {
  struct timespec ts = {0, 30000000};
  nanosleep(&ts, NULL);
  pthread_kill(*(pthread_t *)main_thread, SIGUSR1);
  return NULL;
}

static void test_sleeps(void) {
  CHECK_EQ(usleep(1000), 0);
  CHECK_EQ(sleep(0), 0);
  struct timespec req = {0, 1000000}, rem;
  CHECK_EQ(nanosleep(&req, &rem), 0);
  struct timespec bad = {0, -5};
  errno = 0;
  CHECK_EQ(nanosleep(&bad, NULL), -1);
  CHECK_EQ(errno, EINVAL);
  CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL), EINVAL); /* by value */
  CHECK_EQ(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &req, NULL), EINVAL);

  /* EINTR with the real remaining time (no SA_RESTART). */
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
  pthread_t self = pthread_self(), th;
  CHECK_EQ(pthread_create(&th, NULL, interrupt_later, &self), 0);
  struct timespec longer = {5, 0};
  errno = 0;
  CHECK_EQ(nanosleep(&longer, &rem), -1);
  CHECK_EQ(errno, EINTR);
  CHECK(rem.tv_sec >= 3 && rem.tv_sec <= 5);
  CHECK_EQ(pthread_join(th, NULL), 0);
  CHECK_EQ(pthread_create(&th, NULL, interrupt_later, &self), 0);
  unsigned left = sleep(5);
  CHECK(left >= 3 && left <= 5);
  CHECK_EQ(pthread_join(th, NULL), 0);
}

int main(void) {
  CHECK_INTERPOSED(sem_wait);
  CHECK_INTERPOSED(sem_post);
  CHECK_INTERPOSED(nanosleep);
  CHECK_INTERPOSED(sleep);
  test_sem();
  test_sleeps();
  return 0;
}
