/* The session: what one process's probe sends, from Hello to Goodbye, and
 * what it keeps meanwhile (the sampler's state included, in smp). Opened
 * by session.c (start, fork child, failed exec), ended there or by the exec
 * wrappers (session_exec.c). */
#ifndef THREADMON_SESSION_H
#define THREADMON_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "cpustat.h"
#include "encode.h"
#include "perf_switch.h"
#include "sampler_state.h"
#include "transport.h"

struct rusage;

#define TM_MAX_NOTICES 8

typedef struct tm_session {
  tm_config cfg;
  tm_transport tx;
  tm_encoder enc;
  uint32_t pid, parent_pid;
  uint64_t session_id;
  uint64_t start_ns, start_realtime_ns;
  bool src_proc_task, src_proc_stat, src_perf_switch, src_perf_sw, src_perf_hw, src_futex;
  /* Read from outside (threadmon-attach): no wrapper in the process, so no
   * transitions of its own, acquisitions or hold times, no unwinding at
   * acquisitions, no user threads; ppid is the target's. */
  bool external;
  uint32_t ppid;
  /* Switch records paused by the rate limit: the events stay open (perf)
   * unless perf_switch_dropped; src_perf_switch is false until they resume. */
  bool perf_switch_paused;
  /* Paused with the events closed (tm_perf_switch_drop): a program of a
   * few threads, whose events are opened again per thread at the resume. */
  bool perf_switch_dropped;
  tm_perf_switch perf;
  tm_cpustat cpus;
  char notices[TM_MAX_NOTICES][160]; /* sent after Hello */
  unsigned notice_count;
  uint32_t probe_tid;
  uint64_t seq;
  uint64_t events_dropped; /* of threads already released */
  uint64_t events_dropped_total; /* as of the last tick */
  uint64_t events_folded; /* of threads already released */
  /* Hello strings, gathered when the session opens. */
  char exe[TM_PATH_BYTES];
  char host[256], kernel[128];
  uint32_t cpu_count; /* online CPUs: sysconf opens a file, not on the probe's thread */
  char *cmdline; /* NUL-separated */
  size_t cmdline_len;
  bool net_reported; /* the launcher was told why the display has no data */
  tm_sampler smp;    /* the sampler's state: reset in a fork child */
} tm_session;

/* The Hello of this session (probe_tid known): session_wire.c. */
void tm_session_send_hello(tm_session *s, int to);
/* An Exec frame: the process now runs s->exe with s->cmdline (an exec seen
 * from outside; the session goes on): session_wire.c. */
void tm_session_send_exec(tm_session *s, uint64_t time_ns, int to);
/* The Hello's host, kernel release and online CPUs: session_wire.c. */
void tm_session_gather_host(tm_session *s);
/* Tells the launcher (THREADMON_STATUS), once, that the display refused
 * the session or was given up on; when ending, also that it was never
 * reached: session_wire.c. */
void tm_session_report_net(tm_session *s, bool ending);
/* At the session's end: one status line for the capture file, "ended" or
 * what it lost (base/status.h). */
void tm_session_report_file(tm_session *s);

/* Final tick, Goodbye(END_EXEC) and flush, before the image is replaced. */
void tm_session_end_for_exec(void);
/* From _exit: the probe's thread ends the session (final tick, Goodbye,
 * flush) while the caller waits, bounded; async-signal-safe for the caller. */
void tm_session_end_for__exit(int status);
/* fork(2) as glibc does it for this program: in a program that never made
 * a thread, without the locks glibc takes only in threaded processes. */
pid_t tm_session_fork(pid_t (*real_fork)(void));
/* The exec failed and the image stays: open a new session. */
void tm_session_exec_failed(void);
/* pthread_create's first step: a lazy process (in a tree, no session yet)
 * starts its session before its first thread. */
void tm_session_before_create(void);
/* A child of this process ended by signal sig (its parent reaped it; usage:
 * its CPU, NULL when not known): in a process tree, its end line, which it
 * could not write itself. Async-signal-safe. */
void tm_session_child_killed(pid_t pid, int sig, const struct rusage *usage);

#endif
