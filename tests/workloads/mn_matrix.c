/* mn_matrix: the ThreadMon paper's matrix multiply on an M:N scheduler.
 *
 * T user threads (default 6, the paper's) multiply their share of the rows
 * of C = A x B, --rounds times, on N LWPs (default 2: pthreads) that take
 * them from one shared run queue (mn_sched.h). A user thread gives its LWP
 * back after every --yield-rows rows, which puts it at the end of the queue:
 * with more user threads than LWPs, most of them are dispatchable (ready,
 * waiting for an LWP) most of the time. --yield-rows 0: each runs to
 * completion once on an LWP, as Solaris's user-level scheduler ran them in
 * the paper (no time-slicing): the run time then goes in waves of N (the
 * paper's table, bench/tmbench/mn.py).
 *
 * Truth printed per user thread: mn_sched.h's (lifetime, on an LWP, on a
 * CPU, dispatchable, seconds per LWP).
 */
#include <stdio.h>
#include <stdlib.h>

#include "mn_sched.h"
#include "wl.h"

static int uthreads = 6, lwps = 2, size = 360, rounds = 60, yield_rows = 2;
static double *a, *b, *c;

static void ut_main(int index) {
  mn_begin();
  int first = (int)((long)size * index / uthreads);
  int last = (int)((long)size * (index + 1) / uthreads);
  for (int r = 0; r < rounds; r++) {
    for (int i = first; i < last; i++) {
      wl_matrix_row(c, a, b, size, i);
      if (yield_rows && (i - first + 1) % yield_rows == 0) mn_yield();
    }
  }
  mn_finish();
  /* Returning ends it: glibc goes on to uc_link (its LWP's scheduler). */
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
  if (uthreads < 1 || uthreads > MN_MAX_UT || lwps < 1 || lwps > MN_MAX_LWP || size < 1 ||
      yield_rows < 0) {
    fprintf(stderr, "mn_matrix: need 1..%d user threads, 1..%d LWPs, size >= 1, yield-rows >= 0\n",
            MN_MAX_UT, MN_MAX_LWP);
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
  if (mn_init(uthreads, lwps, ut_main)) return 1;
  double wall = mn_run();
  double checksum = 0;
  for (size_t i = 0; i < n; i++) checksum += c[i];
  printf("{\"workload\":\"mn_matrix\",\"wall_s\":%.6f,\"uthreads\":%d,\"lwps\":%d,"
         "\"size\":%d,\"rounds\":%d,\"yield_rows\":%d,\"checksum\":%.0f",
         wall, uthreads, lwps, size, rounds, yield_rows, checksum);
  mn_print_truth(stdout, "ut_main");
  printf("}\n");
  free(a);
  free(b);
  free(c);
  return 0;
}
