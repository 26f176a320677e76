/* The conformance cases' harness: each program (one per group) holds a table
 * of cases, runs the one named on its command line and prints what it
 * observed, one flushed line at a time, so that the output with and without
 * the probe can be compared line by line (run_conformance.py). Output must
 * not depend on timing, pids, tids or addresses. */
#ifndef THREADMON_CONF_H
#define THREADMON_CONF_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The probe legitimately changes what this case prints (an extra thread or
 * descriptor): run both ways, require the same exit, but do not compare the
 * output; docs/interposition.md says what differs. */
#define CONF_DIFFERS 1u
/* A child process of the case dies by a signal: its capture has no exit
 * status (every other capture must have one). */
#define CONF_SIGNALLED_CHILD 2u

typedef struct conf_case {
  const char *name;
  void (*run)(void);
  unsigned flags;
  int repeat; /* processes to run each way (0: once), for rare failures */
} conf_case;

/* Runs argv[1]'s case and exits 0 when it returns; `--list` prints the table
 * as "name repeat flags" lines for the runner. */
int conf_main(int argc, char **argv, const conf_case *cases, size_t n);

/* printf to stdout, then fflush: lines survive an abort and are not
 * duplicated into a forked child's buffer. */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "EBUSY", "0", or the number for anything without a name. */
const char *err_name(int e);

pid_t conf_gettid(void);

/* Returns once thread tid sleeps in the kernel (state S or D in
 * /proc/self/task/TID/stat), which for the cases means it reached its
 * blocking call; gives up after 5 s and says so. */
void conf_wait_blocked(pid_t tid);
/* The same for thread tid of process pid. */
void conf_wait_blocked_in(pid_t pid, pid_t tid);

/* Returns once thread tid has ended (a main thread that called pthread_exit
 * stays a zombie until the process ends); gives up after 5 s. */
void conf_wait_exited(pid_t tid);

void conf_sleep_ms(long ms);

/* An absolute time ms milliseconds from now on clk (negative: in the past). */
struct timespec conf_deadline(clockid_t clk, long ms);

/* pthread_create that must succeed (the cases test other calls). */
pthread_t conf_spawn(void *(*fn)(void *), void *arg);

/* Prints the blocked signals of the calling thread as "label: SIGUSR1 ..." */
void conf_print_mask(const char *label);

#define CONF_CASE(fn) {#fn, fn, 0, 0}

/* errno before each shown call, so that a change shows ("kept" otherwise). */
#define CONF_ERRNO_MARK 1234

/* Prints "call -> value [its errno name], errno E" for call's result and
 * what errno became (errno is set to CONF_ERRNO_MARK before the call). */
#define CONF_SHOW(call)                         \
  do {                                          \
    errno = CONF_ERRNO_MARK;                    \
    long conf_rc_ = (long)(call);               \
    int conf_errno_ = errno;                    \
    conf_show(#call, conf_rc_, conf_errno_);    \
  } while (0)
void conf_show(const char *call, long rc, int err);

#ifdef __cplusplus
}
#endif

#endif
