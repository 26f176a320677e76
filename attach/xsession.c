/* One target watched from outside (xsession.h). */
#include "xsession.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "remote.h"
#include "session.h"
#include "status.h"
#include "xexec.h"
#include "xgonames.h"
#include "xwaits.h"

#define FLUSH_MS 1000
/* How long the launcher's program may take to reach its exec (it lets it
 * go after at most 5 s without a sign of the session). */
#define EXEC_WAIT_NS 15000000000u
/* How long the launcher may take to pass on the status it reaped. */
#define STATUS_WAIT_MS 2000

/* The sampler's state is large (its visit plan covers every slot): one
 * session a process, as in the probe. */
static tm_session S;

static void say(const char *what, pid_t pid, const char *text) {
  fprintf(stderr, "threadmon-attach: %s%d: %s\n", what, (int)pid, text);
}

/* ---- the target's identity ---- */

static void gather_identity(tm_session *s, tm_xexec *image, pid_t pid) {
  char path[64], stat[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  long long ppid = tm_read_file(path, stat, sizeof stat) > 0 ? tm_stat_field(stat, 4) : -1;
  s->ppid = ppid > 0 ? (uint32_t)ppid : 0;
  tm_session_gather_host(s);
  tm_xexec_read(image, s, pid);
}

/* ---- sources ---- */

static void add_notice(tm_session *s, const char *text) {
  if (s->notice_count < TM_MAX_NOTICES)
    snprintf(s->notices[s->notice_count++], sizeof s->notices[0], "%.*s",
             (int)sizeof s->notices[0] - 1, text);
}

typedef struct tid_list {
  uint32_t *v;
  size_t n, cap;
} tid_list;

static void list_tid(uint32_t tid, void *arg) {
  tid_list *l = arg;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 256;
    uint32_t *grown = realloc(l->v, cap * sizeof *grown);
    if (!grown) return;
    l->v = grown;
    l->cap = cap;
  }
  l->v[l->n++] = tid;
}

/* Switch records on every thread that exists now; those it creates later
 * inherit them. */
static void open_perf(tm_session *s) {
  tid_list tids = {0};
  char why[160] = "";
  if (tm_list_tasks(&s->smp.proc, list_tid, &tids) == 0 && tids.n)
    s->src_perf_switch = tm_perf_switch_open_threads(&s->perf, tids.v, tids.n, why, sizeof why);
  if (!s->src_perf_switch) add_notice(s, why[0] ? why : "context switches unavailable");
  free(tids.v);
}

static void open_sources(tm_session *s, pid_t pid, const tm_access *a) {
  for (int i = 0; i < a->nrefusals; i++) {
    say("", pid, a->refusals[i]);
    add_notice(s, a->refusals[i]);
  }
  s->src_proc_task = a->visible;
  s->src_futex = a->ptrace;
  /* THREADMON_PERF=0 asks for /proc only, as it does of the probe. */
  if (a->perf && s->cfg.perf) open_perf(s);
  else if (a->perf) add_notice(s, "switch records not used: THREADMON_PERF=0 (/proc only)");
  s->src_proc_stat = tm_cpustat_open(&s->cpus);
  if (!s->src_proc_stat) add_notice(s, "per-CPU times unavailable: cannot read /proc/stat");
  char mode[TM_ACCESS_LINE + 96];
  snprintf(mode, sizeof mode, "attached from outside: %.*s; acquisitions and hold times are not "
           "known in this mode", TM_ACCESS_LINE - 1, a->mode);
  add_notice(s, mode);
  if (a->nrefusals) say("", pid, a->mode);
}

/* ---- the loop ---- */

/* Raised as far as allowed: two descriptors a thread (perf, one a CPU)
 * and the stages' kept /proc files. */
static void raise_fd_limit(void) {
  struct rlimit r;
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

static uint64_t ns_of(const struct timespec *ts) {
  return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/* Waits until deadline (CLOCK_MONOTONIC ns); returns 1 on a signal, 2
 * when the target ended, 0 at the deadline. */
static int wait_tick(int pidfd, int sigfd, uint64_t deadline) {
  for (;;) {
    uint64_t now = tm_now_ns();
    if (now >= deadline) return 0;
    struct pollfd p[2] = {{.fd = sigfd, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
    struct timespec ts = {(time_t)((deadline - now) / 1000000000u),
                          (long)((deadline - now) % 1000000000u)};
    int r = ppoll(p, pidfd >= 0 ? 2 : 1, &ts, NULL);
    if (r > 0 && (p[0].revents & POLLIN)) return 1;
    if (r > 0 && (p[1].revents & (POLLIN | POLLHUP))) return 2;
    if (r < 0 && errno != EINTR) return 1;
  }
}

/* How the target ended, from its zombie's stat (exit_code, field 52)
 * while its parent has not reaped it yet: END_EXIT or END_SIGNAL; or
 * END_UNSPECIFIED when it is gone already (a shell or service manager
 * reaps at once): it ended, how is not known (it did not run on, which
 * END_DETACH would say). */
static int end_reason(pid_t pid, int *status) {
  char path[64], stat[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  long long code = tm_read_file(path, stat, sizeof stat) > 0 ? tm_stat_field(stat, 52) : -1;
  if (code < 0) return THREADMON__END_REASON__END_UNSPECIFIED;
  if (code & 0x7f) {
    *status = (int)(code & 0x7f);
    return THREADMON__END_REASON__END_SIGNAL;
  }
  *status = (int)((code >> 8) & 0xff);
  return THREADMON__END_REASON__END_EXIT;
}

/* The target is gone: its threads end now. */
static void end_threads(void) {
  for (uint32_t i = 0, hw = tm_threads_high_water(); i < hw; i++) {
    tm_thread *t = tm_thread_slot(i);
    if (atomic_load_explicit(&t->slot_state, memory_order_acquire) == TM_SLOT_LIVE)
      tm_thread_mark_exited(t);
  }
}

/* The launcher's wait status for its program, read from fd (bounded):
 * END_EXIT or END_SIGNAL, or -1 when none came. */
static int launcher_status(int fd, int *status) {
  char buf[32];
  size_t got = 0;
  struct pollfd p = {.fd = fd, .events = POLLIN};
  uint64_t end = tm_now_ns() + STATUS_WAIT_MS * 1000000ull, now;
  while (got < sizeof buf - 1 && !memchr(buf, '\n', got) && (now = tm_now_ns()) < end) {
    int r = poll(&p, 1, (int)((end - now) / 1000000u) + 1);
    if (r < 0 && errno == EINTR) continue;
    ssize_t n = r > 0 ? read(fd, buf + got, sizeof buf - 1 - got) : -1;
    if (n <= 0) break;
    got += (size_t)n;
  }
  buf[got] = 0;
  char *end_text;
  int w = (int)strtol(buf, &end_text, 10);
  if (!got || end_text == buf || *end_text != '\n') return -1;
  if (WIFSIGNALED(w)) {
    *status = WTERMSIG(w);
    return THREADMON__END_REASON__END_SIGNAL;
  }
  *status = WEXITSTATUS(w);
  return THREADMON__END_REASON__END_EXIT;
}

static void drop_record(void *arg, uint32_t tid, uint64_t time_ns, uint32_t cpu, int kind) {
  (void)arg, (void)tid, (void)time_ns, (void)cpu, (void)kind;
}

/* The launcher's program, held before its exec: the events are open (its
 * threads inherit them from their first), the session waits for the image
 * it will run. Returns as wait_tick: 1 a signal, 2 the target ended, 0 it
 * exec'd (or failed to, or did not within the bound: described then). */
static int wait_exec(tm_session *s, int fd, int pidfd, int sigfd) {
  /* Streaming, the socket is the launcher's sign: connect now. */
  tm_transport_pump(&s->tx, tm_now_ns());
  uint64_t end = tm_now_ns() + EXEC_WAIT_NS, now;
  int how = 0;
  while ((now = tm_now_ns()) < end) {
    struct pollfd p[3] = {{.fd = fd, .events = POLLIN},
                          {.fd = sigfd, .events = POLLIN},
                          {.fd = pidfd, .events = POLLIN}};
    struct timespec ts = {(time_t)((end - now) / 1000000000u), (long)((end - now) % 1000000000u)};
    int r = ppoll(p, pidfd >= 0 ? 3 : 2, &ts, NULL);
    char b[64];
    if (r > 0 && p[0].revents && read(fd, b, sizeof b) > 0) continue;
    if (r > 0 && p[0].revents) break; /* EOF: its copy closed at the exec */
    if (r > 0 && (p[1].revents & POLLIN)) how = 1;
    if (r > 0 && pidfd >= 0 && (p[2].revents & (POLLIN | POLLHUP))) how = 2;
    if (how || (r < 0 && errno != EINTR)) break;
  }
  if (now >= end)
    add_notice(s, "the program's exec was not seen within 15 s: it is described as it was then");
  close(fd);
  /* What the held image did is not the program's: its records go, and the
   * session starts now. */
  if (s->src_perf_switch) tm_perf_switch_drain(&s->perf, drop_record, NULL);
  struct timespec rt;
  s->start_ns = s->smp.started_ns = tm_now_ns();
  clock_gettime(CLOCK_REALTIME, &rt);
  s->start_realtime_ns = ns_of(&rt);
  return how;
}

static void finish(tm_session *s, int reason, int status) {
  s->smp.final_tick = true;
  tm_tick_run(s, true);
  Threadmon__Goodbye b = THREADMON__GOODBYE__INIT;
  b.time_ns = tm_now_ns();
  b.reason = (Threadmon__EndReason)reason;
  b.exit_status = status;
  b.frames_dropped = s->tx.frames_dropped;
  b.events_dropped = s->events_dropped_total;
  b.bytes_written = s->tx.bytes_written;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_GOODBYE;
  f.goodbye = &b;
  tm_emit(s, &f, TM_TO_ALL);
  tm_transport_flush(&s->tx, FLUSH_MS);
  tm_session_report_net(s, true);
}

static bool nowhere_to_send(const tm_session *s) {
  return (s->tx.net == TM_NET_REFUSED || s->tx.net == TM_NET_GAVE_UP) && s->tx.file_fd < 0 &&
         !s->tx.file_lost;
}

static int open_output(tm_session *s, pid_t pid, const tm_xopts *o) {
  tm_transport_init(&s->tx);
  s->tx.compress_level = s->cfg.compress;
  if (o->output && tm_transport_open_file(&s->tx, o->output) < 0) {
    fprintf(stderr, "threadmon-attach: cannot create capture file %s: %s\n", o->output,
            strerror(errno));
    return -1;
  }
  if (o->host && tm_transport_set_peer(&s->tx, o->host, o->port, s->cfg.net_buffer_bytes) < 0) {
    say("", pid, "out of memory");
    return -1;
  }
  if (o->output) tm_status_capture(s->cfg.status, o->output);
  return 0;
}

int tm_xsession_run(pid_t pid, const tm_xopts *o) {
  tm_session *s = &S;
  tm_access a;
  tm_access_check(pid, &a);
  if (!a.visible) {
    say("cannot see process ", pid, a.nrefusals ? a.refusals[0] : "no such process");
    return 1;
  }
  /* Signals end the session: read from a descriptor between ticks. */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGHUP);
  sigprocmask(SIG_BLOCK, &stop, NULL);
  signal(SIGPIPE, SIG_IGN);
  int sigfd = signalfd(-1, &stop, SFD_CLOEXEC);
  /* The target's end, without polling its /proc (and never a reused pid). */
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  raise_fd_limit();
  if (tm_config_load(&s->cfg) < 0) return 1;
  s->cfg.interval_ns = s->cfg.interval_asked_ns = o->interval_ns;
  s->cfg.counters = false;
  /* --token, else THREADMON_TOKEN as tm_config_load read it. */
  if (o->token) snprintf(s->cfg.token, sizeof s->cfg.token, "%s", o->token);
  s->external = true;
  s->pid = (uint32_t)pid;
  if (getrandom(&s->session_id, sizeof s->session_id, GRND_NONBLOCK) != sizeof s->session_id)
    s->session_id = tm_now_ns() ^ ((uint64_t)pid << 40);
  struct timespec rt;
  s->start_ns = tm_now_ns();
  clock_gettime(CLOCK_REALTIME, &rt);
  s->start_realtime_ns = ns_of(&rt);
  tm_fds_init();
  char root[32];
  snprintf(root, sizeof root, "/proc/%d", (int)pid);
  tm_proc_init(&s->smp.proc, root);
  s->smp.started_ns = s->start_ns;
  if (open_output(s, pid, o) < 0) return 1;
  open_sources(s, pid, &a);
  int how = o->exec_fd >= 0 ? wait_exec(s, o->exec_fd, pidfd, sigfd) : 0;
  tm_xexec image;
  gather_identity(s, &image, pid);
  tm_xwaits x;
  if (!tm_xwaits_init(&x, s, pid, a.ptrace)) {
    say("", pid, "out of memory");
    return 1;
  }
  tm_session_send_hello(s, TM_TO_ALL);
  for (unsigned i = 0; i < s->notice_count; i++) tm_emit_notice(s, s->notices[i], TM_TO_ALL);
  tm_xgo go;
  tm_xgo_open(&go, &x);

  uint64_t next = tm_now_ns(), end = o->duration_ns ? s->start_ns + o->duration_ns : UINT64_MAX;
  while (!how) {
    /* Before the tick: its samples are the new image's threads. */
    if (tm_xexec_check(&image, s)) {
      tm_xwaits_image_changed(&x);
      tm_xgo_image_changed(&go);
    }
    tm_xgo_tick(&go, tm_now_ns());
    tm_tick_run(s, true);
    tm_budget_keep(s, tm_now_ns(), tm_thread_cpu_ns());
    if (nowhere_to_send(s)) break;
    next += s->cfg.interval_ns;
    uint64_t now = tm_now_ns();
    if (now > next + 1000000000u) next = now; /* fell behind: skip, don't burst */
    if (now >= end || (how = wait_tick(pidfd, sigfd, next < end ? next : end)) != 0) break;
  }
  int status = 0, reason = THREADMON__END_REASON__END_DETACH;
  uint64_t gone_ns = tm_now_ns();
  if (how == 2) {
    tm_emit_notice(s, "the target ended", TM_TO_ALL);
    end_threads();
    reason = o->status_fd >= 0 ? launcher_status(o->status_fd, &status) : -1;
    if (reason < 0) reason = end_reason(pid, &status);
  }
  tm_xwaits_close(&x, gone_ns);
  finish(s, reason, status);
  bool refused = nowhere_to_send(s);
  tm_xgo_free(&go);
  tm_xwaits_free(&x);
  tm_transport_close(&s->tx);
  if (s->src_perf_switch || s->perf_switch_paused) tm_perf_switch_close(&s->perf);
  if (s->src_proc_stat) tm_cpustat_close(&s->cpus);
  if (pidfd >= 0) close(pidfd);
  if (sigfd >= 0) close(sigfd);
  if (refused) say("", pid, s->tx.refusal[0] ? s->tx.refusal : "the display could not be reached");
  return refused ? 1 : 0;
}
