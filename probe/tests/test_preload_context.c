/* ucontext under the probe: swapcontext's return value, errno and signal
 * mask, getcontext returning twice, makecontext arguments (within the
 * trampoline's five and past them), uc_link after a function returns, and
 * a context that migrates between threads. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "preload_check.h"

#define STACK 65536
static char stack_a[STACK] __attribute__((aligned(16)));
static char stack_b[STACK] __attribute__((aligned(16)));
static ucontext_t main_ctx, fib_ctx, link_ctx;

static volatile int errno_seen, step;
static sigset_t mask_seen;

static void fiber_errno(void) {
  errno_seen = errno;                 /* the switch must not touch errno */
  pthread_sigmask(SIG_SETMASK, NULL, &mask_seen);
  errno = ERANGE;
  step = 1;
  CHECK_EQ(swapcontext(&fib_ctx, &main_ctx), 0);
  step = 2;
  errno = EDOM;
  CHECK_EQ(swapcontext(&fib_ctx, &main_ctx), 0);
}

static void test_swap(void) {
  sigset_t main_mask, fiber_mask, now;
  sigemptyset(&main_mask);
  sigaddset(&main_mask, SIGUSR1);
  CHECK_EQ(pthread_sigmask(SIG_SETMASK, &main_mask, NULL), 0);
  CHECK_EQ(getcontext(&fib_ctx), 0);
  fib_ctx.uc_stack.ss_sp = stack_a;
  fib_ctx.uc_stack.ss_size = STACK;
  fib_ctx.uc_link = &main_ctx;
  sigemptyset(&fiber_mask);
  sigaddset(&fiber_mask, SIGUSR2);
  fib_ctx.uc_sigmask = fiber_mask;
  makecontext(&fib_ctx, fiber_errno, 0);
  errno = EILSEQ;
  CHECK_EQ(swapcontext(&main_ctx, &fib_ctx), 0);
  CHECK_EQ(step, 1);
  CHECK_EQ(errno_seen, EILSEQ);
  CHECK_EQ(errno, ERANGE);
  /* The fiber ran with its own mask; we are back to ours. */
  CHECK(sigismember(&mask_seen, SIGUSR2) && !sigismember(&mask_seen, SIGUSR1));
  CHECK_EQ(pthread_sigmask(SIG_SETMASK, NULL, &now), 0);
  CHECK(sigismember(&now, SIGUSR1) && !sigismember(&now, SIGUSR2));
  CHECK_EQ(swapcontext(&main_ctx, &fib_ctx), 0);
  CHECK_EQ(step, 2);
  CHECK_EQ(errno, EDOM);
  sigemptyset(&main_mask);
  CHECK_EQ(pthread_sigmask(SIG_SETMASK, &main_mask, NULL), 0);
}

static void test_getcontext_twice(void) {
  volatile int n = 0;
  ucontext_t c;
  errno = 4242;
  int rc = getcontext(&c);
  CHECK_EQ(rc, 0);
  CHECK_EQ(errno, 4242);
  if (++n < 4) setcontext(&c);
  CHECK_EQ(n, 4);
}

static volatile long args_seen[8];
static volatile int args_n;

static void fiber_args5(int a, int b, int c, int d, int e) {
  args_seen[0] = a, args_seen[1] = b, args_seen[2] = c, args_seen[3] = d, args_seen[4] = e;
  args_n = 5;
} /* returns: uc_link */

static void fiber_args8(int a, int b, int c, int d, int e, int f, int g, int h) {
  args_seen[0] = a, args_seen[1] = b, args_seen[2] = c, args_seen[3] = d;
  args_seen[4] = e, args_seen[5] = f, args_seen[6] = g, args_seen[7] = h;
  args_n = 8;
}

static void after_link(void) { step = 100; }

static void test_args_and_link(void) {
  /* uc_link: a context that runs after_link, then returns to main. */
  CHECK_EQ(getcontext(&link_ctx), 0);
  link_ctx.uc_stack.ss_sp = stack_b;
  link_ctx.uc_stack.ss_size = STACK;
  link_ctx.uc_link = &main_ctx;
  makecontext(&link_ctx, after_link, 0);

  CHECK_EQ(getcontext(&fib_ctx), 0);
  fib_ctx.uc_stack.ss_sp = stack_a;
  fib_ctx.uc_stack.ss_size = STACK;
  fib_ctx.uc_link = &link_ctx;
  makecontext(&fib_ctx, (void (*)(void))fiber_args5, 5, 11, 22, 33, 44, 55);
  step = 0;
  CHECK_EQ(swapcontext(&main_ctx, &fib_ctx), 0);
  CHECK_EQ(args_n, 5);
  CHECK_EQ(args_seen[0], 11);
  CHECK_EQ(args_seen[4], 55);
  CHECK_EQ(step, 100);

  /* The same ucontext made anew, past the trampoline's five arguments. */
  CHECK_EQ(getcontext(&fib_ctx), 0);
  fib_ctx.uc_stack.ss_sp = stack_a;
  fib_ctx.uc_stack.ss_size = STACK;
  fib_ctx.uc_link = &main_ctx;
  makecontext(&fib_ctx, (void (*)(void))fiber_args8, 8, 1, 2, 3, 4, 5, 6, 7, 8);
  CHECK_EQ(swapcontext(&main_ctx, &fib_ctx), 0);
  CHECK_EQ(args_n, 8);
  for (int i = 0; i < 8; i++) CHECK_EQ(args_seen[i], i + 1);
}

/* A fiber started by one thread and finished by another. */
static ucontext_t thread_ctx[2], mig_ctx;
static __thread int which_thread;
static volatile int mig_steps;

/* Read afresh after every switch: a compiler may keep a TLS address across
 * calls, and this fiber resumes on another thread. */
__attribute__((noinline)) static int current_thread(void) { return which_thread; }

static void migrant(void) {
  for (;;) {
    mig_steps++;
    CHECK_EQ(swapcontext(&mig_ctx, &thread_ctx[current_thread()]), 0);
  }
}

static void *run_once(void *arg) {
  which_thread = (int)(intptr_t)arg;
  CHECK_EQ(swapcontext(&thread_ctx[which_thread], &mig_ctx), 0);
  return NULL;
}

static void test_migration(void) {
  CHECK_EQ(getcontext(&mig_ctx), 0);
  mig_ctx.uc_stack.ss_sp = stack_b;
  mig_ctx.uc_stack.ss_size = STACK;
  mig_ctx.uc_link = NULL;
  makecontext(&mig_ctx, migrant, 0);
  for (int i = 0; i < 6; i++) {
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, run_once, (void *)(intptr_t)(i % 2)), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
  }
  CHECK_EQ(mig_steps, 6);
}

int main(void) {
  CHECK_INTERPOSED(swapcontext);
  CHECK_INTERPOSED(setcontext);
  CHECK_INTERPOSED(makecontext);
  CHECK_INTERPOSED(getcontext);
  test_swap();
  test_getcontext_twice();
  test_args_and_link();
  test_migration();
  return 0;
}
