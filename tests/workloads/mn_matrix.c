/* mn_matrix: the ThreadMon paper's matrix multiply on an M:N scheduler.
 *
 * T user threads (default 6, the paper's) multiply their share of the rows
 * of C = A x B, --rounds times, on N LWPs (default 2: pthreads) that take
 * them from one shared run queue (a mutex and a condition variable). A user
 * thread is a ucontext made with makecontext; it gives its LWP back after
 * every --yield-rows rows (swapcontext to the LWP's scheduler), which puts
 * it at the end of the queue: with more user threads than LWPs, most of
 * them are dispatchable (ready, waiting for an LWP) most of the time.
 * --yield-rows 0: each runs to completion once on an LWP, as Solaris's
 * user-level scheduler ran them in the paper (no time-slicing): the run
 * time then goes in waves of N (the paper's table, bench/tmbench/mn.py).
 *
 * A user thread ends by returning from its function: glibc then switches to
 * its uc_link, a copy of its current LWP's scheduler context (taken with
 * getcontext) that the scheduler refreshes before each switch to it.
 *
 * Truth printed per user thread, measured by the program itself:
 * lifetime_s from just before its makecontext to its end; on_lwp_s, the sum
 * of its spans from its LWP's call to switch to it (the scheduler's clock
 * read just before its swapcontext) to its own call to give the LWP back
 * (read just before that swapcontext), the rule of docs/format.md: a
 * preemption inside the switch itself (its sigprocmask) is time on the
 * LWP; cpu_s, its LWP's CPU clock over those spans; dispatchable_s =
 * lifetime - on_lwp; lwps: seconds on each LWP (by tid).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "wl.h"

#define MAX_UT 64
#define MAX_LWP 16
#define STACK_BYTES (256 * 1024)

static int uthreads = 6, lwps = 2, size = 360, rounds = 60, yield_rows = 2;
static double *a, *b, *c;

typedef struct uthread {
  ucontext_t ctx;
  ucontext_t exit_ctx; /* its uc_link: the current LWP's scheduler, refreshed */
  int index;
  int finished;
  double created_s, done_s, lifetime_s;
  double on_lwp_s, cpu_s;
  double in_s, in_cpu_s; /* at its latest resume */
  double per_lwp_s[MAX_LWP];
  void *stack;
} uthread;

typedef struct lwp {
  pthread_t thread;
  int index;
  pid_t tid;
  ucontext_t sched_ctx; /* where a user thread gives the LWP back to */
  ucontext_t exit_ctx;  /* getcontext snapshot: where a finished one ends up */
  uthread *current;
  int dispatches;
} lwp;

static uthread uts[MAX_UT];
static lwp lws[MAX_LWP];
static __thread lwp *self_lwp;

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static uthread *queue[MAX_UT];
static int q_head, q_len, remaining;

static void enqueue(uthread *u) {
  queue[(q_head + q_len) % MAX_UT] = u;
  q_len++;
}

/* Read by the scheduler just before it switches to u. */
/* The CPU clock first (a syscall, where a loaded machine preempts), the
 * wall clock last: the span starts as near the switch as can be. */
__attribute__((noinline)) static void dispatching(uthread *u) {
  u->in_cpu_s = wl_thread_cpu_s();
  u->in_s = wl_now_s();
}

/* The same order: the span ends as near the switch as can be. */
__attribute__((noinline)) static void leaving(uthread *u) {
  u->cpu_s += wl_thread_cpu_s() - u->in_cpu_s;
  double span = wl_now_s() - u->in_s;
  u->on_lwp_s += span;
  u->per_lwp_s[self_lwp->index] += span;
}

/* Gives the LWP back to its scheduler; returns when dispatched again
 * (perhaps on another LWP). */
static void yield_lwp(uthread *u) {
  leaving(u);
  swapcontext(&u->ctx, &self_lwp->sched_ctx);
}

static void ut_main(int index) {
  uthread *u = &uts[index];
  int first = (int)((long)size * index / uthreads);
  int last = (int)((long)size * (index + 1) / uthreads);
  for (int r = 0; r < rounds; r++) {
    for (int i = first; i < last; i++) {
      wl_matrix_row(c, a, b, size, i);
      if (yield_rows && (i - first + 1) % yield_rows == 0) yield_lwp(u);
    }
  }
  leaving(u);
  u->done_s = wl_now_s();
  u->finished = 1;
  /* Returning ends it: glibc goes on to uc_link (this LWP's exit_ctx). */
}

static void *lwp_main(void *arg) {
  lwp *l = arg;
  self_lwp = l;
  l->tid = gettid();
  wl_name_self("lwp", l->index);
  /* A finished user thread comes back here (through its uc_link) with
   * l->current still set; volatile: getcontext returns twice. */
  volatile int first = 1;
  getcontext(&l->exit_ctx);
  if (!first) {
    uthread *u = l->current;
    l->current = NULL;
    pthread_mutex_lock(&queue_lock);
    remaining--;
    pthread_cond_broadcast(&queue_cond);
    pthread_mutex_unlock(&queue_lock);
    (void)u;
  }
  first = 0;
  for (;;) {
    pthread_mutex_lock(&queue_lock);
    while (q_len == 0 && remaining > 0) pthread_cond_wait(&queue_cond, &queue_lock);
    if (q_len == 0) {
      pthread_mutex_unlock(&queue_lock);
      return NULL;
    }
    uthread *u = queue[q_head];
    q_head = (q_head + 1) % MAX_UT;
    q_len--;
    pthread_mutex_unlock(&queue_lock);
    l->current = u;
    l->dispatches++;
    memcpy(&u->exit_ctx, &l->exit_ctx, sizeof u->exit_ctx);
    dispatching(u);
    swapcontext(&l->sched_ctx, &u->ctx);
    /* It gave the LWP back (it ends through exit_ctx instead). */
    l->current = NULL;
    pthread_mutex_lock(&queue_lock);
    enqueue(u);
    pthread_cond_signal(&queue_cond);
    pthread_mutex_unlock(&queue_lock);
  }
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"uthreads", WL_INT, &uthreads, "user threads (ucontext)"},
      {"lwps", WL_INT, &lwps, "LWPs (pthreads) that run them"},
      {"size", WL_INT, &size, "matrix dimension"},
      {"rounds", WL_INT, &rounds, "multiplications"},
      {"yield-rows", WL_INT, &yield_rows,
       "rows a user thread computes before giving its LWP back (0: runs to completion)"},
  };
  wl_parse_flags(argc, argv, "User threads multiply matrices on fewer LWPs (M:N, ucontext).",
                 flags, (int)(sizeof flags / sizeof flags[0]));
  if (uthreads < 1 || uthreads > MAX_UT || lwps < 1 || lwps > MAX_LWP || size < 1 ||
      yield_rows < 0) {
    fprintf(stderr, "mn_matrix: need 1..%d user threads, 1..%d LWPs, size >= 1, yield-rows >= 0\n",
            MAX_UT, MAX_LWP);
    return 2;
  }
  size_t n = (size_t)size * (size_t)size;
  a = malloc(n * sizeof *a);
  b = malloc(n * sizeof *b);
  c = malloc(n * sizeof *c);
  if (!a || !b || !c) return 1;
  for (size_t i = 0; i < n; i++) {
    a[i] = (double)(i % 7);
    b[i] = (double)(i % 5);
  }
  double start = wl_now_s();
  remaining = uthreads;
  for (int i = 0; i < uthreads; i++) {
    uthread *u = &uts[i];
    u->index = i;
    u->stack = malloc(STACK_BYTES);
    if (!u->stack) return 1;
    u->created_s = wl_now_s();
    getcontext(&u->ctx);
    u->ctx.uc_stack.ss_sp = u->stack;
    u->ctx.uc_stack.ss_size = STACK_BYTES;
    u->ctx.uc_link = &u->exit_ctx;
    makecontext(&u->ctx, (void (*)(void))ut_main, 1, i);
    enqueue(u);
  }
  for (int i = 0; i < lwps; i++) {
    lws[i].index = i;
    wl_check(pthread_create(&lws[i].thread, NULL, lwp_main, &lws[i]), "pthread_create");
  }
  for (int i = 0; i < lwps; i++) wl_check(pthread_join(lws[i].thread, NULL), "pthread_join");
  double wall = wl_now_s() - start;
  double checksum = 0;
  for (size_t i = 0; i < n; i++) checksum += c[i];
  printf("{\"workload\":\"mn_matrix\",\"wall_s\":%.6f,\"uthreads\":%d,\"lwps\":%d,\"cpus\":%ld,"
         "\"size\":%d,\"rounds\":%d,\"yield_rows\":%d,\"checksum\":%.0f,\"lwp_tids\":[",
         wall, uthreads, lwps, sysconf(_SC_NPROCESSORS_ONLN), size, rounds, yield_rows, checksum);
  for (int i = 0; i < lwps; i++) printf("%s%d", i ? "," : "", (int)lws[i].tid);
  printf("],\"user_threads\":[");
  for (int i = 0; i < uthreads; i++) {
    uthread *u = &uts[i];
    u->lifetime_s = u->done_s - u->created_s;
    double disp = u->lifetime_s - u->on_lwp_s;
    printf("%s{\"index\":%d,\"function\":\"ut_main\",\"lifetime_s\":%.6f,\"on_lwp_s\":%.6f,"
           "\"cpu_s\":%.6f,\"dispatchable_s\":%.6f,\"on_lwp_pct\":%.2f,\"on_cpu_pct\":%.2f,"
           "\"dispatchable_pct\":%.2f,\"lwps\":{",
           i ? "," : "", i, u->lifetime_s, u->on_lwp_s, u->cpu_s, disp,
           100.0 * u->on_lwp_s / u->lifetime_s, 100.0 * u->cpu_s / u->lifetime_s,
           100.0 * disp / u->lifetime_s);
    for (int k = 0, sep = 0; k < lwps; k++) {
      if (u->per_lwp_s[k] <= 0) continue;
      printf("%s\"%d\":%.6f", sep++ ? "," : "", (int)lws[k].tid, u->per_lwp_s[k]);
    }
    printf("}}");
  }
  printf("]}\n");
  for (int i = 0; i < uthreads; i++) free(uts[i].stack);
  free(a);
  free(b);
  free(c);
  return 0;
}
