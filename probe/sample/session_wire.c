/* What a session says about itself: its Hello (also to every new
 * connection), the image it went on in after an exec seen from outside,
 * and the launcher's status line when the display refused it or was never
 * reached. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "frames.h"
#include "session.h"
#include "status.h"
#include "tmwire.h"

#ifndef TM_PROBE_VERSION
#define TM_PROBE_VERSION "unknown"
#endif

/* The display refuses a Hello over TM_MAX_HELLO_BYTES before it checks
 * the token: argv gets at most this much of it, in whole arguments. */
#define HELLO_ARGV_BYTES (TM_MAX_HELLO_BYTES / 4)

#define ARGV_MAX 256

/* The session's cmdline as argv, cut to what a Hello may carry. */
static size_t split_argv(const tm_session *s, char *argv[ARGV_MAX]) {
  size_t argc = 0, argv_bytes = 0;
  for (size_t off = 0; off < s->cmdline_len && argc < ARGV_MAX; argc++) {
    size_t len = strnlen(s->cmdline + off, s->cmdline_len - off);
    if (argv_bytes + len + 3 > HELLO_ARGV_BYTES) break;
    argv_bytes += len + 3; /* with its tag and length */
    argv[argc] = s->cmdline + off;
    off += len + 1;
  }
  return argc;
}

void tm_session_send_hello(tm_session *s, int to) {
  char *argv[ARGV_MAX];
  size_t argc = split_argv(s, argv);
  Threadmon__Source sources[11];
  size_t ns = 0;
  if (!s->external) sources[ns++] = THREADMON__SOURCE__SOURCE_INTERPOSE;
  if (s->src_proc_task) sources[ns++] = THREADMON__SOURCE__SOURCE_PROC_TASK;
  if (s->src_proc_stat) sources[ns++] = THREADMON__SOURCE__SOURCE_PROC_STAT;
  if (s->src_perf_switch || s->perf_switch_paused)
    sources[ns++] = THREADMON__SOURCE__SOURCE_PERF_SWITCH;
  if (s->src_perf_sw) sources[ns++] = THREADMON__SOURCE__SOURCE_PERF_SOFTWARE;
  if (s->src_perf_hw) sources[ns++] = THREADMON__SOURCE__SOURCE_PERF_HARDWARE;
  if (!s->external) sources[ns++] = THREADMON__SOURCE__SOURCE_UNWIND;
  if (s->src_futex) sources[ns++] = THREADMON__SOURCE__SOURCE_FUTEX_SAMPLING;
  if (!s->external) sources[ns++] = THREADMON__SOURCE__SOURCE_USER_CONTEXT; /* wrap_context.c */
  if (s->external) sources[ns++] = THREADMON__SOURCE__SOURCE_ATTACH;

  Threadmon__Hello h = THREADMON__HELLO__INIT;
  h.protocol_version = TM_PROTOCOL_VERSION;
  h.probe_version = TM_PROBE_VERSION;
  h.pid = s->pid;
  h.ppid = s->external ? s->ppid : (uint32_t)getppid();
  h.exe = s->exe;
  h.n_argv = argc;
  h.argv = argv;
  h.host = s->host;
  h.kernel = s->kernel;
  h.cpu_count = s->cpu_count;
  h.tick_interval_ns = s->cfg.interval_ns;
  h.n_sources = ns;
  h.sources = sources;
  h.token = s->cfg.token;
  h.start_monotonic_ns = s->start_ns;
  h.start_realtime_ns = s->start_realtime_ns;
  h.probe_tid = s->probe_tid;
  h.parent_pid = s->parent_pid;
  h.session_id = s->session_id;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_HELLO;
  f.hello = &h;
  tm_emit(s, &f, to);
}

void tm_session_send_exec(tm_session *s, uint64_t time_ns, int to) {
  char *argv[ARGV_MAX];
  Threadmon__Exec e = THREADMON__EXEC__INIT;
  e.time_ns = time_ns;
  e.exe = s->exe;
  e.n_argv = split_argv(s, argv);
  e.argv = argv;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_EXEC;
  f.exec = &e;
  tm_emit(s, &f, to);
}

void tm_session_gather_host(tm_session *s) {
  if (gethostname(s->host, sizeof s->host) != 0) s->host[0] = 0;
  s->host[sizeof s->host - 1] = 0;
  struct utsname u;
  snprintf(s->kernel, sizeof s->kernel, "%s", uname(&u) == 0 ? u.release : "");
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  s->cpu_count = cpus > 0 ? (uint32_t)cpus : 1;
}

/* The capture file's end for the launcher: finished whole, or what it lost. */
void tm_session_report_file(tm_session *s) {
  const tm_transport *t = &s->tx;
  if (!t->path) return;
  uint64_t now = tm_now_ns();
  tm_file_loss l;
  if (!tm_transport_file_loss(t, now, &l)) {
    tm_status_ended(s->cfg.status, t->path, 0, 0, 0, 0, 0);
    return;
  }
  uint64_t from = l.first_ns > s->start_ns ? l.first_ns - s->start_ns : 0;
  tm_status_ended(s->cfg.status, t->path, from / 1000000u, (l.lost_ns + 999999u) / 1000000u,
                  l.bytes, l.first_errno, l.reopen_errno);
}

void tm_session_report_net(tm_session *s, bool ending) {
  const tm_transport *t = &s->tx;
  if (s->net_reported || t->net == TM_NET_OFF) return;
  char text[224];
  const char *kind = "unreachable";
  if (t->net == TM_NET_REFUSED) {
    kind = t->untrusted ? "untrusted" : "refused";
    snprintf(text, sizeof text, "%s", t->refusal);
  } else if (t->net == TM_NET_GAVE_UP) {
    snprintf(text, sizeof text, "%s; gave up after %u attempts in a row: %s",
             t->ever_connected ? "connection lost" : "never connected", t->attempts,
             strerror(t->last_errno));
  } else if (ending && !t->ever_connected) {
    snprintf(text, sizeof text, "not connected when the session ended%s%s",
             t->last_errno ? ": " : "", t->last_errno ? strerror(t->last_errno) : "");
  } else {
    return;
  }
  s->net_reported = true;
  tm_status_net(s->cfg.status, kind, t->host, t->port, text);
}

