/* mn_sched: the tiny M:N scheduler of the user-thread workloads (mn_matrix,
 * mn_barrier), and the truth they print.
 *
 * User threads are ucontexts made with makecontext; N LWPs (pthreads) take
 * them from one shared run queue (a mutex and a condition variable) and park
 * on it when it is empty, as Solaris's LWP pool did. A user thread gives its
 * LWP back with mn_yield (back to the end of the queue) or mn_park (its
 * caller makes it ready again later with mn_ready); it ends by returning from
 * its function: glibc then switches to its uc_link, a copy of its current
 * LWP's scheduler context (taken with getcontext) that the scheduler
 * refreshes before each switch to it.
 *
 * Truth measured per user thread: lifetime from just before its makecontext
 * to its end; on_lwp, the sum of its spans from its LWP's call to switch to
 * it (the scheduler's clock read just before its swapcontext) to its own
 * call to give the LWP back (read just before that swapcontext), the rule of
 * docs/format.md: a preemption inside the switch itself (its sigprocmask) is
 * time on the LWP; dispatchable = lifetime - on_lwp, of which ready is the
 * time in the run queue (the rest: parked by the workload); cpu (when
 * mn_cpu_truth), its LWP's CPU clock over the spans; blocked, what the
 * workload adds with mn_blocked_add (wall time in a wrapped primitive while
 * on its LWP); lwps, seconds on each LWP (by tid). Per LWP: parked, its
 * wall time inside pthread_cond_wait on the run queue's condition (its
 * scheduler idle, holding no user thread), the condition's waits.
 *
 * Uncertainty: a switch's clock read here and a profiler's stamp of the same
 * switch (at its swapcontext wrapper's entry) are a few instructions apart,
 * and a preemption between them moves the switch by its whole length (ms on
 * a loaded machine, against switches a microsecond apart). The workload
 * cannot read between them, but it reads again on the far side of the
 * switch: the stamp lies in between. A switch whose two reads are more than
 * MN_SWITCH_SLACK_S apart was disturbed (preempted, or a long interrupt):
 * its whole width is added to its user thread's uncertainty_s (and its
 * LWP's, in lwps_uncertainty_s), the most its spans can be off by there.
 * Narrower ones are the switch's own cost, which a comparison's fixed
 * tolerance covers. The same for its making (the read before makecontext to
 * the one after).
 */
#ifndef MN_SCHED_H
#define MN_SCHED_H

#include <stdio.h>
#include <sys/types.h>
#include <ucontext.h>

#define MN_MAX_UT 64
#define MN_MAX_LWP 16
/* A quiet switch (swapcontext with the probe's wrapper, both clock reads)
 * takes under 0.5 us (99% of them at load 22); a preempted one, ms. */
#define MN_SWITCH_SLACK_S 20e-6

typedef struct mn_uthread mn_uthread;
/* Runs on the LWP's scheduler once the user thread that parked is off it. */
typedef void (*mn_park_fn)(mn_uthread *u);

struct mn_uthread {
  ucontext_t ctx;
  ucontext_t exit_ctx; /* its uc_link: the current LWP's scheduler, refreshed */
  int index;
  double created_s, done_s;
  double on_lwp_s, cpu_s, ready_s, blocked_s;
  double in_s, in_cpu_s; /* at its latest dispatch */
  double out_s;          /* at its latest giving back of the LWP */
  int resuming;          /* dispatched, not yet seen running (mn_begin) */
  int switches, uncertain_switches;
  double uncertainty_s, per_lwp_uncertainty_s[MN_MAX_LWP];
  double queued_s;       /* when it last entered the run queue */
  double per_lwp_s[MN_MAX_LWP];
  mn_park_fn park; /* set by mn_park until its LWP's scheduler runs it */
  void *stack;
};

/* 1: also measure each user thread's CPU time on its LWPs (a system call per
 * switch; mn_matrix compares it, mn_barrier switches too often to afford it). */
extern int mn_cpu_truth;

/* Makes n user threads running fn(index), all ready; 0 or -1 (no memory). */
int mn_init(int uthreads, int lwps, void (*fn)(int index));
/* Called by a user thread's function as its first act: the far side of its
 * first dispatch (each later one ends inside mn_yield / mn_park). */
void mn_begin(void);
/* Runs them on the LWPs until all have returned; the wall time in seconds. */
double mn_run(void);

mn_uthread *mn_self(void); /* the user thread calling */
int mn_self_lwp(void);     /* index of the LWP it is on */
void mn_yield(void);       /* back to the end of the run queue */
/* Gives the LWP back without being queued: once it is off the LWP, its
 * scheduler calls then(self), which must see that mn_ready is called. */
void mn_park(mn_park_fn then);
void mn_ready(mn_uthread *u); /* into the run queue (any LWP may take it) */
/* Wall time inside a blocking call on the LWP, from t0 (wl_now_s) to now. */
void mn_blocked_add(double t0);
/* Called by a user thread's function as its last act (before returning). */
void mn_finish(void);

/* Prints ,"cpus":..,"lwp_tids":[..],"lwp_parked_s":[..],"user_threads":[..]
 * (the caller opens and closes the JSON object). */
void mn_print_truth(FILE *out, const char *function);

#endif
