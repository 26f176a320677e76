#include "mn_sched.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wl.h"

#define STACK_BYTES (256 * 1024)

typedef struct lwp {
  pthread_t thread;
  int index;
  pid_t tid;
  ucontext_t sched_ctx; /* where a user thread gives the LWP back to */
  ucontext_t exit_ctx;  /* getcontext snapshot: where a finished one ends up */
  mn_uthread *current;
  double parked_s; /* in pthread_cond_wait on queue_cond */
} lwp;

int mn_cpu_truth = 1;

static mn_uthread uts[MN_MAX_UT];
static lwp lws[MN_MAX_LWP];
static int n_uts, n_lwps;
static __thread lwp *self_lwp;

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static mn_uthread *queue[MN_MAX_UT];
static int q_head, q_len, remaining;

/* Under queue_lock. */
static void enqueue(mn_uthread *u) {
  u->queued_s = wl_now_s();
  queue[(q_head + q_len) % MN_MAX_UT] = u;
  q_len++;
}

void mn_ready(mn_uthread *u) {
  pthread_mutex_lock(&queue_lock);
  enqueue(u);
  pthread_cond_signal(&queue_cond);
  pthread_mutex_unlock(&queue_lock);
}

/* The far side of a switch whose near side read `before`: a width beyond a
 * quiet switch's is how far the switch's stamp may lie from that read. */
static void switched(mn_uthread *u, int lwp_index, double before) {
  double width = wl_now_s() - before;
  u->switches++;
  if (width <= MN_SWITCH_SLACK_S) return;
  u->uncertain_switches++;
  u->uncertainty_s += width;
  if (lwp_index >= 0) u->per_lwp_uncertainty_s[lwp_index] += width;
}

/* Read by the scheduler just before it switches to u. The CPU clock first
 * (a syscall, where a loaded machine preempts), the wall clock last: the
 * span starts as near the switch as can be. */
__attribute__((noinline)) static void dispatching(mn_uthread *u) {
  if (mn_cpu_truth) u->in_cpu_s = wl_thread_cpu_s();
  u->in_s = wl_now_s();
  u->ready_s += u->in_s - u->queued_s;
  u->resuming = 1;
}

/* u runs again after its dispatch: the far side of that switch. */
static void resumed(mn_uthread *u) {
  u->resuming = 0;
  switched(u, self_lwp->index, u->in_s);
}

/* The same order: the span ends as near the switch as can be. */
__attribute__((noinline)) static void leaving(mn_uthread *u) {
  if (u->resuming) {
    /* Its first dispatch's far side would be this read: a whole span. */
    fprintf(stderr, "mn_sched: user thread %d did not call mn_begin first\n", u->index);
    abort();
  }
  if (mn_cpu_truth) u->cpu_s += wl_thread_cpu_s() - u->in_cpu_s;
  u->out_s = wl_now_s();
  double span = u->out_s - u->in_s;
  u->on_lwp_s += span;
  u->per_lwp_s[self_lwp->index] += span;
}

mn_uthread *mn_self(void) { return self_lwp->current; }
int mn_self_lwp(void) { return self_lwp->index; }

void mn_begin(void) {
  resumed(self_lwp->current);
}

void mn_yield(void) {
  mn_uthread *u = self_lwp->current;
  leaving(u);
  swapcontext(&u->ctx, &self_lwp->sched_ctx);
  resumed(u);
}

void mn_park(mn_park_fn then) {
  mn_uthread *u = self_lwp->current;
  u->park = then;
  leaving(u);
  swapcontext(&u->ctx, &self_lwp->sched_ctx);
  resumed(u); /* self_lwp: the LWP it was dispatched on, maybe another */
}

void mn_blocked_add(double t0) { self_lwp->current->blocked_s += wl_now_s() - t0; }

void mn_finish(void) {
  mn_uthread *u = self_lwp->current;
  leaving(u);
  u->done_s = wl_now_s();
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
    switched(l->current, l->index, l->current->out_s); /* its end, through uc_link */
    l->current = NULL;
    pthread_mutex_lock(&queue_lock);
    remaining--;
    pthread_cond_broadcast(&queue_cond);
    pthread_mutex_unlock(&queue_lock);
  }
  first = 0;
  for (;;) {
    pthread_mutex_lock(&queue_lock);
    while (q_len == 0 && remaining > 0) {
      double t0 = wl_now_s();
      pthread_cond_wait(&queue_cond, &queue_lock);
      l->parked_s += wl_now_s() - t0;
    }
    if (q_len == 0) {
      pthread_mutex_unlock(&queue_lock);
      return NULL;
    }
    mn_uthread *u = queue[q_head];
    q_head = (q_head + 1) % MN_MAX_UT;
    q_len--;
    pthread_mutex_unlock(&queue_lock);
    l->current = u;
    memcpy(&u->exit_ctx, &l->exit_ctx, sizeof u->exit_ctx);
    dispatching(u);
    swapcontext(&l->sched_ctx, &u->ctx);
    /* It gave the LWP back (it ends through exit_ctx instead). */
    switched(u, l->index, u->out_s);
    l->current = NULL;
    mn_park_fn then = u->park;
    u->park = NULL;
    if (then) {
      then(u);
    } else {
      mn_ready(u);
    }
  }
}

/* One user thread, made to start in fn(index). Its own function: getcontext
 * returns twice in principle, which would clobber mn_init's loop counter. */
static int make_uthread(mn_uthread *u, int index, void (*fn)(int index)) {
  u->index = index;
  u->stack = malloc(STACK_BYTES);
  if (!u->stack) return -1;
  u->created_s = wl_now_s();
  getcontext(&u->ctx);
  u->ctx.uc_stack.ss_sp = u->stack;
  u->ctx.uc_stack.ss_size = STACK_BYTES;
  u->ctx.uc_link = &u->exit_ctx;
  makecontext(&u->ctx, (void (*)(void))fn, 1, u->index);
  switched(u, -1, u->created_s);
  enqueue(u);
  return 0;
}

int mn_init(int uthreads, int lwps, void (*fn)(int index)) {
  n_uts = uthreads;
  n_lwps = lwps;
  remaining = uthreads;
  for (int i = 0; i < uthreads; i++)
    if (make_uthread(&uts[i], i, fn) < 0) return -1;
  return 0;
}

double mn_run(void) {
  double start = wl_now_s();
  for (int i = 0; i < n_lwps; i++) {
    lws[i].index = i;
    wl_check(pthread_create(&lws[i].thread, NULL, lwp_main, &lws[i]), "pthread_create");
  }
  for (int i = 0; i < n_lwps; i++) wl_check(pthread_join(lws[i].thread, NULL), "pthread_join");
  for (int i = 0; i < n_uts; i++) free(uts[i].stack);
  return wl_now_s() - start;
}

void mn_print_truth(FILE *out, const char *function) {
  fprintf(out, ",\"cpus\":%ld,\"lwp_tids\":[", sysconf(_SC_NPROCESSORS_ONLN));
  for (int i = 0; i < n_lwps; i++) fprintf(out, "%s%d", i ? "," : "", (int)lws[i].tid);
  fprintf(out, "],\"lwp_parked_s\":[");
  for (int i = 0; i < n_lwps; i++) fprintf(out, "%s%.6f", i ? "," : "", lws[i].parked_s);
  fprintf(out, "],\"user_threads\":[");
  for (int i = 0; i < n_uts; i++) {
    mn_uthread *u = &uts[i];
    double life = u->done_s - u->created_s;
    double disp = life - u->on_lwp_s;
    fprintf(out,
            "%s{\"index\":%d,\"function\":\"%s\",\"lifetime_s\":%.6f,\"on_lwp_s\":%.6f,"
            "\"dispatchable_s\":%.6f,\"ready_s\":%.6f,\"blocked_s\":%.6f,\"on_lwp_pct\":%.2f,"
            "\"dispatchable_pct\":%.2f,\"ready_pct\":%.2f,\"blocked_pct\":%.2f,"
            "\"switches\":%d,\"uncertain_switches\":%d,\"uncertainty_s\":%.6f",
            i ? "," : "", i, function, life, u->on_lwp_s, disp, u->ready_s, u->blocked_s,
            100.0 * u->on_lwp_s / life, 100.0 * disp / life, 100.0 * u->ready_s / life,
            100.0 * u->blocked_s / life, u->switches, u->uncertain_switches, u->uncertainty_s);
    if (mn_cpu_truth)
      fprintf(out, ",\"cpu_s\":%.6f,\"on_cpu_pct\":%.2f", u->cpu_s, 100.0 * u->cpu_s / life);
    fprintf(out, ",\"lwps\":{");
    for (int k = 0, sep = 0; k < n_lwps; k++) {
      if (u->per_lwp_s[k] <= 0) continue;
      fprintf(out, "%s\"%d\":%.6f", sep++ ? "," : "", (int)lws[k].tid, u->per_lwp_s[k]);
    }
    fprintf(out, "},\"lwps_uncertainty_s\":{");
    for (int k = 0, sep = 0; k < n_lwps; k++) {
      if (u->per_lwp_uncertainty_s[k] <= 0) continue;
      fprintf(out, "%s\"%d\":%.6f", sep++ ? "," : "", (int)lws[k].tid, u->per_lwp_uncertainty_s[k]);
    }
    fprintf(out, "}}");
  }
  fprintf(out, "]");
}
