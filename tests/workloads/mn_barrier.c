/* mn_barrier: the M-to-N study's fine-grained barrier (section 5.1) with
 * bound or unbound user threads, on the scheduler of mn_sched.h.
 *
 * T user threads (default 4) each increment their own 2 x 2 matrix --work
 * times (the simulated work), then meet the others at a barrier, --rounds
 * times.
 * - Unbound (default): the T user threads share --lwps LWPs (default 2). The
 *   barrier is the user-level library's: a user thread that is not the last
 *   to arrive is detached from its LWP (parked on the barrier); the last one
 *   puts them all back in the run queue and goes on; an LWP with nothing to
 *   run parks in the kernel until a user thread is made ready. Every round
 *   costs each waiter a handoff: made ready, then picked up by an LWP that
 *   may first have to be woken (the latency the study measured).
 * - --bound: one user thread per LWP (T LWPs), never leaving it; the barrier
 *   is the appendix's mutex and condition variable (with a generation), so a
 *   waiting user thread blocks its LWP in the kernel.
 *
 * Truth: mn_sched.h's per user thread (no CPU clock: a syscall per switch
 * would be most of a fine-grained round), with blocked = wall time inside
 * pthread_mutex_lock and pthread_cond_wait at the bound barrier; wall_s for
 * the bound/unbound penalty (bench/tmbench/mn.py).
 */
#include <pthread.h>
#include <stdio.h>

#include "mn_sched.h"
#include "wl.h"

static int uthreads = 4, lwps = 2, rounds = 20000, work = 400, bound;
static int mats[MN_MAX_UT][2][2];

static pthread_mutex_t bar_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bar_cond = PTHREAD_COND_INITIALIZER;
static int bar_count, bar_gen;
static mn_uthread *bar_waiters[MN_MAX_UT];
static int bar_nwait;
static int seen_gen[MN_MAX_UT]; /* the round each parked user thread waits on */

static void lock_timed(void) {
  double t0 = wl_now_s();
  pthread_mutex_lock(&bar_lock);
  mn_blocked_add(t0);
}

/* The appendix's barrier: waiters block their LWP in the kernel. */
static void bound_barrier(void) {
  lock_timed();
  if (++bar_count == uthreads) {
    bar_count = 0;
    bar_gen++;
    pthread_cond_broadcast(&bar_cond);
  } else {
    int gen = bar_gen;
    while (gen == bar_gen) {
      double t0 = wl_now_s();
      pthread_cond_wait(&bar_cond, &bar_lock);
      mn_blocked_add(t0);
    }
  }
  pthread_mutex_unlock(&bar_lock);
}

/* On the LWP's scheduler, once u is off the LWP: it waits on the barrier,
 * unless the round ended while it was switching out. */
static void park_at_barrier(mn_uthread *u) {
  pthread_mutex_lock(&bar_lock);
  if (seen_gen[u->index] != bar_gen) {
    pthread_mutex_unlock(&bar_lock);
    mn_ready(u);
    return;
  }
  bar_waiters[bar_nwait++] = u;
  pthread_mutex_unlock(&bar_lock);
}

/* The user-level barrier: waiters give their LWP back. */
static void unbound_barrier(void) {
  mn_uthread *self = mn_self();
  lock_timed();
  if (++bar_count == uthreads) {
    mn_uthread *released[MN_MAX_UT];
    int n = bar_nwait;
    for (int i = 0; i < n; i++) released[i] = bar_waiters[i];
    bar_nwait = 0;
    bar_count = 0;
    bar_gen++;
    pthread_mutex_unlock(&bar_lock);
    for (int i = 0; i < n; i++) mn_ready(released[i]);
    return;
  }
  seen_gen[self->index] = bar_gen;
  pthread_mutex_unlock(&bar_lock);
  mn_park(park_at_barrier);
}

static void barrier_worker(int index) {
  mn_begin();
  for (int r = 0; r < rounds; r++) {
    for (int it = 0; it < work; it++)
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) ((volatile int(*)[2])mats[index])[i][j]++;
    if (bound) {
      bound_barrier();
    } else {
      unbound_barrier();
    }
  }
  mn_finish();
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"uthreads", WL_INT, &uthreads, "user threads (ucontext)"},
      {"lwps", WL_INT, &lwps, "LWPs in the pool (unbound; --bound uses one per user thread)"},
      {"rounds", WL_INT, &rounds, "barrier rounds"},
      {"work", WL_INT, &work, "2 x 2 matrix increments between barriers"},
      {"bound", WL_BOOL, &bound, "one user thread per LWP, blocking it at the barrier"},
  };
  wl_parse_flags(argc, argv,
                 "The M-to-N study's fine-grained barrier on bound or unbound user threads.",
                 flags, (int)(sizeof flags / sizeof flags[0]));
  if (bound) lwps = uthreads;
  if (uthreads < 1 || uthreads > MN_MAX_UT || lwps < 1 || lwps > MN_MAX_LWP) {
    fprintf(stderr, "mn_barrier: need 1..%d user threads and 1..%d LWPs\n", MN_MAX_UT,
            MN_MAX_LWP);
    return 2;
  }
  mn_cpu_truth = 0;
  if (mn_init(uthreads, lwps, barrier_worker)) return 1;
  double wall = mn_run();
  printf("{\"workload\":\"mn_barrier\",\"wall_s\":%.6f,\"bound\":%s,\"uthreads\":%d,\"lwps\":%d,"
         "\"rounds\":%d,\"work\":%d",
         wall, bound ? "true" : "false", uthreads, lwps, rounds, work);
  mn_print_truth(stdout, "barrier_worker");
  printf("}\n");
  return 0;
}
