/* User threads (ucontext): what a program sees of makecontext, swapcontext,
 * setcontext and getcontext is the same with the probe: return values and
 * errno, arguments, uc_link chains and a NULL uc_link ending the process,
 * getcontext returning twice, contexts resumed on other threads, switches
 * made from a signal handler (preemptive user threads), and fork inside a
 * user thread. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "conf.h"

#define STACK (128 * 1024)
static ucontext_t main_ctx;

static void *new_stack(void) {
  void *p = malloc(STACK);
  if (!p) abort();
  return p;
}

/* makecontext with the program's own argument list (forwarded as glibc
 * reads them: up to 8 here). */
static void make(ucontext_t *c, ucontext_t *link, void (*fn)(void), int argc, ...) {
  va_list ap;
  long a[8] = {0};
  va_start(ap, argc);
  for (int i = 0; i < argc && i < 8; i++) a[i] = va_arg(ap, long);
  va_end(ap);
  getcontext(c);
  sigdelset(&c->uc_sigmask, SIGALRM); /* the preemptive case blocks it elsewhere */
  c->uc_stack.ss_sp = new_stack();
  c->uc_stack.ss_size = STACK;
  c->uc_link = link;
  makecontext(c, fn, argc, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
}

/* ---- ping-pong: return values and errno across switches ---- */
static ucontext_t ping_ctx;
static void pinger(void) {
  for (int i = 0;; i++) {
    errno = 100 + i;
    int rc = swapcontext(&ping_ctx, &main_ctx);
    if (rc != 0) say("pinger: swapcontext %d", rc);
  }
}
static void ping_pong(void) {
  make(&ping_ctx, NULL, pinger, 0);
  for (int i = 0; i < 5; i++) {
    errno = 7;
    int rc = swapcontext(&main_ctx, &ping_ctx);
    say("round %d: rc %d errno %d", i, rc, errno);
  }
}

/* ---- arguments, within and past the probe's trampoline ---- */
static int args_given; /* only these were passed: the rest are whatever registers held */
static void show_args(int a, int b, int c, int d, int e, int f, int g) {
  int v[7] = {a, b, c, d, e, f, g};
  char line[64];
  int at = 0;
  for (int i = 0; i < args_given; i++) at += snprintf(line + at, sizeof line - (size_t)at, " %d", v[i]);
  line[at] = 0;
  say("args:%s", line);
}
static void arguments(void) {
  ucontext_t c;
  for (int n = 0; n <= 7; n++) {
    args_given = n;
    make(&c, &main_ctx, (void (*)(void))show_args, n, 1L, 2L, 3L, 4L, 5L, 6L, 7L);
    swapcontext(&main_ctx, &c);
    say("back after %d arguments", n);
  }
}

/* ---- uc_link chains ---- */
static ucontext_t link_a, link_b;
static void chain_a(void) { say("a runs"); }
static void chain_b(void) { say("b runs"); }
static void uc_link_chain(void) {
  make(&link_b, &main_ctx, chain_b, 0);
  make(&link_a, &link_b, chain_a, 0);
  setcontext(&link_a);
  say("not reached");
}
static void uc_link_chain_case(void) {
  volatile int once = 0;
  getcontext(&main_ctx);
  if (once++ == 0) uc_link_chain();
  say("main again");
}

/* ---- a NULL uc_link: returning ends the process with status 0 ---- */
static void last_words(void) { say("last user thread returns"); }
static void null_link_exits(void) {
  ucontext_t c;
  make(&c, NULL, last_words, 0);
  setcontext(&c);
}

/* ---- getcontext returns twice ---- */
static void getcontext_twice(void) {
  volatile int n = 0;
  ucontext_t c;
  errno = 33;
  int rc = getcontext(&c);
  say("getcontext rc %d errno %d n %d", rc, errno, n);
  if (++n < 3) setcontext(&c);
}

/* ---- M:N: 4 user threads on 2 pthreads, shared run queue ---- */
#define MN_UT 4
static ucontext_t mn_ctx[MN_UT];
static ucontext_t mn_sched[2];
static __thread int mn_lwp;
static pthread_mutex_t mn_lock = PTHREAD_MUTEX_INITIALIZER;
static int mn_queue[64], mn_head, mn_len, mn_left;
static long mn_sum[MN_UT];
static int mn_done[MN_UT];

__attribute__((noinline)) static int my_lwp(void) { return mn_lwp; }

static void mn_fiber(int id) {
  for (int i = 0; i < 50; i++) {
    mn_sum[id] += i * (id + 1);
    swapcontext(&mn_ctx[id], &mn_sched[my_lwp()]);
  }
  pthread_mutex_lock(&mn_lock);
  mn_done[id] = 1; /* never queued again: its context stays as it is */
  mn_left--;
  pthread_mutex_unlock(&mn_lock);
  swapcontext(&mn_ctx[id], &mn_sched[my_lwp()]);
}

static void *mn_lwp_main(void *arg) {
  mn_lwp = (int)(intptr_t)arg;
  for (;;) {
    pthread_mutex_lock(&mn_lock);
    if (mn_left == 0) {
      pthread_mutex_unlock(&mn_lock);
      return NULL;
    }
    int id = -1;
    if (mn_len) {
      id = mn_queue[mn_head];
      mn_head = (mn_head + 1) % 64;
      mn_len--;
    }
    pthread_mutex_unlock(&mn_lock);
    if (id < 0) {
      sched_yield();
      continue;
    }
    swapcontext(&mn_sched[mn_lwp], &mn_ctx[id]);
    pthread_mutex_lock(&mn_lock);
    if (!mn_done[id]) {
      mn_queue[(mn_head + mn_len) % 64] = id;
      mn_len++;
    }
    pthread_mutex_unlock(&mn_lock);
  }
}

static void m_on_n(void) {
  for (int i = 0; i < MN_UT; i++) {
    make(&mn_ctx[i], NULL, (void (*)(void))mn_fiber, 1, (long)i);
    mn_queue[mn_len++] = i;
  }
  mn_left = MN_UT;
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, mn_lwp_main, (void *)(intptr_t)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < MN_UT; i++) say("user thread %d sum %ld", i, mn_sum[i]);
}

/* ---- preemptive: SIGALRM's handler switches to the scheduler ---- */
static ucontext_t pre_ctx[2], pre_sched;
static volatile int pre_cur = -1;
static volatile long pre_count[2];
static volatile int pre_stop;
/* Set by a spinner in its own code, cleared by the scheduler before it
 * swaps one in. A tick pending while the scheduler had SIGALRM blocked
 * arrives inside swapcontext itself, as its sigprocmask unblocks it and
 * before the spinner's registers are loaded: switching from there saved a
 * context half the scheduler's, and the bare run once spun forever with
 * pre_cur -1 (CI, load 10). A tick preempts only a spinner that runs. */
static volatile int pre_running;

static void on_tick(int sig) {
  (void)sig;
  int saved = errno;
  int cur = pre_cur;
  if (cur >= 0 && pre_running) swapcontext(&pre_ctx[cur], &pre_sched); /* preempted here */
  errno = saved;
}

static void spinner(int id) {
  while (!pre_stop) {
    pre_running = 1;
    pre_count[id]++;
  }
  for (;;) swapcontext(&pre_ctx[id], &pre_sched);
}

static void preempted_from_a_handler(void) {
  for (int i = 0; i < 2; i++) make(&pre_ctx[i], NULL, (void (*)(void))spinner, 1, (long)i);
  struct sigaction sa = {0};
  sa.sa_handler = on_tick;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  /* The scheduler runs with SIGALRM blocked (each swapcontext sets the
   * user thread's own mask, where it is not): a tick only ever interrupts
   * a user thread. */
  sigset_t alrm;
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &alrm, NULL);
  struct itimerval every = {{0, 2000}, {0, 2000}};
  setitimer(ITIMER_REAL, &every, NULL);
  /* 200 slices, then more (up to 20,000) until each spinner has counted: on
   * a loaded machine a tick can be pending whenever the scheduler swaps a
   * spinner in, which then yields before its first increment. What this
   * checks is that preemption from a handler works and both make progress,
   * not how fast. */
  int slices[2] = {0, 0};
  for (int s = 0; s < 20000 && (s < 200 || !(pre_count[0] > 0 && pre_count[1] > 0)); s++) {
    pre_cur = s % 2;
    pre_running = 0;
    slices[s % 2]++;
    swapcontext(&pre_sched, &pre_ctx[s % 2]);
    pre_cur = -1;
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
  say("slices %s, both counted: %d", slices[0] >= 100 && slices[1] >= 100 ? ">= 100 each" : "too few",
      pre_count[0] > 0 && pre_count[1] > 0);
}

/* ---- fork inside a user thread ---- */
static ucontext_t fork_ctx;
static void forker(void) {
  pid_t pid = fork();
  if (pid == 0) {
    say("child in the user thread");
    _exit(3);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  say("parent: child exited %d", WEXITSTATUS(st));
}
static void fork_in_user_thread(void) {
  make(&fork_ctx, &main_ctx, forker, 0);
  swapcontext(&main_ctx, &fork_ctx);
  say("main after the user thread");
}

static const conf_case cases[] = {
    CONF_CASE(ping_pong),
    CONF_CASE(arguments),
    CONF_CASE(uc_link_chain_case),
    CONF_CASE(null_link_exits),
    CONF_CASE(getcontext_twice),
    CONF_CASE(m_on_n),
    CONF_CASE(preempted_from_a_handler),
    CONF_CASE(fork_in_user_thread),
};

int main(int argc, char **argv) {
  return conf_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
