/* The probe's own thread and the session state it shares with session.c.
 *
 * Every tick (absolute deadlines, no drift) the sampler drains the threads'
 * event rings, describes new threads and objects, samples /proc and perf,
 * and sends the frames. It is the only thread that encodes or sends while a
 * session runs; the thread that ends a session first stops it (join), then
 * runs the final tick itself. */
#ifndef THREADMON_SAMPLER_H
#define THREADMON_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "cpustat.h"
#include "encode.h"
#include "perf_switch.h"
#include "transport.h"

#define TM_MAX_NOTICES 8

typedef struct tm_session {
  tm_config cfg;
  tm_transport tx;
  tm_encoder enc;
  uint32_t pid, parent_pid;
  uint64_t session_id;
  uint64_t start_ns, start_realtime_ns;
  bool src_proc_task, src_proc_stat, src_perf_switch, src_perf_sw, src_perf_hw, src_futex;
  tm_perf_switch perf;
  tm_cpustat cpus;
  char notices[TM_MAX_NOTICES][160]; /* sent after Hello */
  unsigned notice_count;
  uint32_t probe_tid;
  uint64_t seq;
  uint64_t events_dropped; /* of threads already released */
  uint64_t events_dropped_total; /* as of the last tick */
  /* Hello strings, gathered when the session opens. */
  char exe[TM_PATH_BYTES];
  char host[256], kernel[128];
  uint32_t cpu_count; /* online CPUs: sysconf opens a file, not on the probe's thread */
  char *cmdline; /* NUL-separated */
  size_t cmdline_len;
  bool net_reported; /* the launcher was told why the display has no data */
} tm_session;

/* Packs and sends one frame (to: TM_TO_*). */
void tm_emit(tm_session *s, const Threadmon__Frame *f, int to);
void tm_emit_notice(tm_session *s, const char *text, int to);

/* Implemented by session.c: the Hello of this session (probe_tid known). */
void tm_session_send_hello(tm_session *s, int to);
/* Implemented by session.c: tells the launcher (THREADMON_STATUS), once,
 * that the display refused the session or was given up on; when ending,
 * also that it was never reached. */
void tm_session_report_net(tm_session *s, bool ending);

/* Starts the sampler thread; it sends Hello and the notices first.
 * Returns 0, or -1 with errno set. */
int tm_sampler_start(tm_session *s);
/* Stops and joins it (no-op when it is not running). */
void tm_sampler_stop(void);
/* One sampling pass: used by the sampler thread and for the final tick. */
void tm_sampler_tick(tm_session *s);
/* The session's last pass: reads every thread and writes the batch out. */
void tm_sampler_final_tick(tm_session *s);
/* Runs fn on the sampler thread and waits for it, at most timeout_ms: for a
 * thread that may be in a signal handler or hold locks fn needs (_exit).
 * Only futex calls on the caller's side. False if it did not run in time. */
bool tm_sampler_handoff(void (*fn)(void), int timeout_ms);
/* Called by handed-off work that ended the session: the thread stops. */
void tm_sampler_stop_after_handoff(void);
/* While set, the sampler does not start a tick (fork in progress). Pausing
 * returns whether the sampler is idle now (it waits a tick out, bounded):
 * idle, it holds no lock of libc's. */
bool tm_sampler_pause(bool paused);
/* Whether glibc would see this process single-threaded but for the probe's
 * thread: the program never created a thread and only main is alive. */
bool tm_sampler_program_single_threaded(void);
/* In a fork child: forgets every per-thread and per-object state. */
void tm_sampler_forget(void);

#endif
