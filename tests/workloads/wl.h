/* wl: what every workload shares: flag parsing, clocks, calibrated work.
 *
 * Workloads print their own truth (what they did and what they measured
 * themselves) as one JSON line on stdout at exit, so that end-to-end tests
 * compare threadmon's view with numbers taken inside the program rather than
 * with numbers assumed from the flags.
 */
#ifndef WL_H
#define WL_H

#include <stdint.h>

typedef enum wl_flag_type { WL_INT, WL_DOUBLE, WL_STRING, WL_BOOL } wl_flag_type;

typedef struct wl_flag {
  const char *name; /* without the leading "--" */
  wl_flag_type type;
  void *value;      /* int *, double *, const char **, int * */
  const char *help;
} wl_flag;

/* Parses "--name value" / "--name=value" / "--flag". Prints usage and exits 0
 * on --help; prints one line and exits 2 on a bad flag. */
void wl_parse_flags(int argc, char **argv, const char *about, const wl_flag *flags, int nflags);

double wl_now_s(void);        /* CLOCK_MONOTONIC */
double wl_thread_cpu_s(void); /* this thread's CPU time */
/* This thread's run-queue time so far (schedstat run_delay: 0 at its
 * create), or -1 when the kernel does not keep it. */
double wl_run_delay_s(void);
/* CPU time of this thread between the read that gave c0 and now, less what
 * the two reads themselves spend in between: CPU inside a call the reads
 * bracket. */
double wl_cpu_inside_s(double c0);

/* Spins until this thread has used ms of CPU time, so the on-CPU share of a
 * thread does not depend on how loaded the machine is. */
void wl_spin_cpu_ms(double ms);

/* Sleeps ms (restarting after signals); returns the wall time really slept. */
double wl_sleep_ms(double ms);

/* Loops n times doing nothing the compiler can remove. */
void wl_busy_loop(uint64_t n);

/* Row i of C = A x B (size x size, row-major), in i-k-j order so the inner
 * loop streams: the papers' matrix multiply. */
void wl_matrix_row(double *c, const double *a, const double *b, int size, int i);

/* Names the calling thread "prefix-index" (kernel limit: 15 characters). */
void wl_name_self(const char *prefix, int index);

/* Exits with one line on stderr when a pthread call returned an error. */
void wl_check(int err, const char *what);

#endif
