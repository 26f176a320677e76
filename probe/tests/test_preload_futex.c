/* syscall() under the probe (shim/wrap_futex.c): every other number passes
 * through with its result and errno; futex waits keep theirs (EAGAIN on a
 * changed value, ETIMEDOUT, EINTR by a signal, EFAULT, EDEADLK), a wake
 * from a signal handler or another thread ends a wait, PI locks lock, and a
 * forked child's calls work. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "preload_check.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

static _Atomic uint32_t word;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts,
                  uint32_t val3) {
  return syscall(SYS_futex, w, op, val, ts, NULL, val3);
}

static void test_pass_through(void) {
  errno = 777;
  CHECK_EQ(syscall(SYS_gettid), gettid());
  CHECK_EQ(syscall(SYS_getpid), getpid());
  CHECK_EQ(errno, 777);
  CHECK_EQ(syscall(SYS_close, -1), -1);
  CHECK_EQ(errno, EBADF);
  errno = 0;
  CHECK_EQ(syscall(-1L), -1); /* no such system call */
  CHECK_EQ(errno, ENOSYS);
  /* Six arguments reach the kernel: a wake of nobody with all of them set. */
  CHECK_EQ(syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0), 0);
}

static void test_wait_errors(void) {
  atomic_store(&word, 1);
  errno = 0;
  CHECK_EQ(futex(&word, FUTEX_WAIT_PRIVATE, 0, NULL, 0), -1);
  CHECK_EQ(errno, EAGAIN);
  CHECK_EQ(futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, FUTEX_BITSET_MATCH_ANY), -1);
  CHECK_EQ(errno, EAGAIN);
  /* Relative timeout (FUTEX_WAIT), absolute on CLOCK_REALTIME (BITSET). */
  struct timespec rel = {0, 20000000};
  double t0 = now_s();
  CHECK_EQ(futex(&word, FUTEX_WAIT_PRIVATE, 1, &rel, 0), -1);
  CHECK_EQ(errno, ETIMEDOUT);
  CHECKF(now_s() - t0 >= 0.019, "waited %.4f s of 0.02", now_s() - t0);
  struct timespec abs;
  clock_gettime(CLOCK_REALTIME, &abs);
  abs.tv_nsec += 20000000;
  if (abs.tv_nsec >= 1000000000) abs.tv_sec++, abs.tv_nsec -= 1000000000;
  errno = 0;
  CHECK_EQ(futex(&word, FUTEX_WAIT_BITSET_PRIVATE | FUTEX_CLOCK_REALTIME, 1, &abs,
                 FUTEX_BITSET_MATCH_ANY),
           -1);
  CHECK_EQ(errno, ETIMEDOUT);
  /* A bad address is the kernel's EFAULT, not a crash in the probe. */
  CHECK_EQ(syscall(SYS_futex, (void *)8, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0), -1);
  CHECK_EQ(errno, EFAULT);
  CHECK_EQ(syscall(SYS_futex_waitv, (void *)8, 1, 0, NULL, CLOCK_MONOTONIC), -1);
  CHECK(errno == EFAULT || errno == ENOSYS);
}

/* futex_waitv (Linux 5.16): a value that differs is EAGAIN. */
static void test_waitv(void) {
  struct {
    uint64_t val, uaddr;
    uint32_t flags, reserved;
  } w = {0, (uint64_t)(uintptr_t)&word, FUTEX_32 | FUTEX_PRIVATE_FLAG, 0};
  atomic_store(&word, 1);
  errno = 0;
  CHECK_EQ(syscall(SYS_futex_waitv, &w, 1, 0, NULL, CLOCK_MONOTONIC), -1);
  CHECK(errno == EAGAIN || errno == ENOSYS);
}

/* A handler's own futex wait, during the interrupted one: EAGAIN. */
static _Atomic uint32_t handler_word = 1;
static volatile long handler_rc, handler_errno;

static void on_usr1(int sig) {
  (void)sig;
  int saved = errno;
  handler_rc = syscall(SYS_futex, &handler_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  handler_errno = errno;
  errno = saved;
}

static void on_usr2(int sig) {
  (void)sig;
  int saved = errno;
  atomic_store(&word, 0);
  syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); /* async-signal-safe */
  errno = saved;
}

static void *signal_later(void *arg) {
  struct timespec ts = {0, 30000000};
  nanosleep(&ts, NULL);
  pthread_kill(*(pthread_t *)arg, SIGUSR1);
  return NULL;
}

static void *wake_later(void *arg) {
  (void)arg;
  struct timespec ts = {0, 30000000};
  nanosleep(&ts, NULL);
  atomic_store(&word, 0);
  CHECK(futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, 0) >= 0);
  return NULL;
}

static void test_wakes(void) {
  pthread_t self = pthread_self(), th;
  /* EINTR: a handler without SA_RESTART interrupts the wait. */
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
  atomic_store(&word, 1);
  CHECK_EQ(pthread_create(&th, NULL, signal_later, &self), 0);
  errno = 0;
  CHECK_EQ(futex(&word, FUTEX_WAIT_PRIVATE, 1, NULL, 0), -1);
  CHECK_EQ(errno, EINTR);
  CHECK_EQ(handler_rc, -1);
  CHECK_EQ(handler_errno, EAGAIN);
  CHECK_EQ(pthread_join(th, NULL), 0);

  /* Woken by another thread: 0. */
  atomic_store(&word, 1);
  CHECK_EQ(pthread_create(&th, NULL, wake_later, NULL), 0);
  while (atomic_load(&word) == 1) {
    long rc = futex(&word, FUTEX_WAIT_PRIVATE, 1, NULL, 0);
    CHECK(rc == 0 || errno == EAGAIN);
  }
  CHECK_EQ(pthread_join(th, NULL), 0);

  /* Woken by a wake made in a signal handler (a timer's). */
  sa.sa_handler = on_usr2;
  CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
  timer_t timer;
  struct sigevent sev = {0};
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGUSR2;
  CHECK_EQ(timer_create(CLOCK_MONOTONIC, &sev, &timer), 0);
  struct itimerspec once = {{0, 0}, {0, 30000000}};
  atomic_store(&word, 1);
  CHECK_EQ(timer_settime(timer, 0, &once, NULL), 0);
  while (atomic_load(&word) == 1) {
    long rc = futex(&word, FUTEX_WAIT_PRIVATE, 1, NULL, 0);
    CHECK(rc == 0 || errno == EAGAIN || errno == EINTR);
  }
  timer_delete(timer);
}

/* PI locks: the word holds the owner's tid; relocking is EDEADLK. */
static void test_pi(void) {
  static _Atomic uint32_t pi;
  CHECK_EQ(futex(&pi, FUTEX_LOCK_PI_PRIVATE, 0, NULL, 0), 0);
  CHECK_EQ(atomic_load(&pi) & FUTEX_TID_MASK, (uint32_t)gettid());
  errno = 0;
  CHECK_EQ(futex(&pi, FUTEX_LOCK_PI_PRIVATE, 0, NULL, 0), -1);
  CHECK_EQ(errno, EDEADLK);
  CHECK_EQ(futex(&pi, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, 0), 0);
  CHECK_EQ(atomic_load(&pi), 0);
}

static void test_fork(void) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    atomic_store(&word, 1);
    int ok = syscall(SYS_gettid) == getpid() &&
             futex(&word, FUTEX_WAIT_PRIVATE, 0, NULL, 0) == -1 && errno == EAGAIN;
    _exit(ok ? 0 : 1);
  }
  int status;
  CHECK_EQ(waitpid(pid, &status, 0), pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void) {
  CHECK_INTERPOSED(syscall);
  test_pass_through();
  test_wait_errors();
  test_waitv();
  test_wakes();
  test_pi();
  test_fork();
  return 0;
}
