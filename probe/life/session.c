/* Session life cycle: start (constructor or first wrapper), Hello, fork
 * children, Goodbye at exit or exec. */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lives.h"
#include "perf_counters.h"
#include "probe.h"
#include "procfs.h"
#include "rawsyscall.h"
#include "real.h"
#include "sampler.h"
#include "status.h"
#include "tmwire.h"

#define EXIT_FLUSH_MS 1000
#define GOODBYE_ROOM 512 /* bytes: a Goodbye frame with its prefix, and more */

TM_HOT _Atomic int tm_active;

/* S_LAZY: a descendant in a process tree (THREADMON_TREE) that has not
 * started its session: no probe thread, no file, no perf events; its life
 * is lines in the tree's index (base/lives.h) until its first
 * pthread_create starts the session. */
enum { S_NONE, S_STARTING, S_RUNNING, S_ENDING, S_OFF, S_LAZY };
TM_HOT static _Atomic int state;
static tm_session S;
static char root_output[TM_PATH_BYTES]; /* THREADMON_OUTPUT as given */
static unsigned exec_generation;
TM_HOT static _Atomic int exit_status;
/* The lazy process: since when, whose child, and whether its memory holds
 * the session of the process it was forked from (to drop at its start). */
TM_HOT static uint64_t lazy_since_ns;
TM_HOT static uint32_t lazy_ppid;
TM_HOT static bool lazy_inherited;
TM_HOT static bool ended_by__exit;   /* the session ends in _exit, not exit */
TM_HOT static tm_thread *lazy_guard; /* the forking thread's guard, entered in the parent */
/* The tree's directory (THREADMON_TREE; "" = none): S.cfg.tree once the
 * configuration is read, the environment's string in a lazy image. */
TM_HOT static const char *tree_dir = "";

/* Probe code running on a program thread: wrappers must pass through. */
static tm_thread *guard_enter(void) {
  tm_thread *t = tm_self;
  if (t) t->guard++;
  return t;
}

static void guard_leave(tm_thread *t) {
  if (t && t->guard > 0) t->guard--;
}

/* Around probe work on a program thread that may malloc or write: the
 * program's signal handlers must not interrupt it (one that calls malloc
 * or stdio would deadlock where, without the probe, it would have run),
 * nor may a cancellation the program left pending act on the probe's
 * cancellation points (join, close, write). */
typedef struct quiet {
  sigset_t old;
  int cancel_state;
} quiet;

static void quiet_enter(quiet *q) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &q->old);
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &q->cancel_state);
}

static void quiet_leave(const quiet *q) {
  pthread_setcancelstate(q->cancel_state, NULL);
  pthread_sigmask(SIG_SETMASK, &q->old, NULL);
}

void tm_note_exit_status(int status) { atomic_store(&exit_status, status); }

/* ---- Hello ---- */

static void gather_identity(tm_session *s) {
  ssize_t n = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1);
  s->exe[n > 0 ? n : 0] = 0;
  /* Here, on the thread that opens the session, before the program runs
   * on: sysconf reads /sys/devices/system/cpu/online, and that open on the
   * probe's thread took the program's lowest free descriptor while main()
   * opened its first file (conf_fd first_free_fd: 4 instead of 3). */
  tm_session_gather_host(s);
  free(s->cmdline);
  s->cmdline = NULL;
  s->cmdline_len = 0;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  ssize_t r;
  while (buf && (r = read(fd, buf + len, cap - len)) > 0) {
    len += (size_t)r;
    if (len == cap) {
      char *b = realloc(buf, cap * 2);
      if (!b) break;
      buf = b;
      cap *= 2;
    }
  }
  close(fd);
  s->cmdline = buf;
  s->cmdline_len = buf ? len : 0;
}

/* ---- opening a session ---- */

static void add_notice(tm_session *s, const char *text) {
  if (s->notice_count < TM_MAX_NOTICES)
    snprintf(s->notices[s->notice_count++], sizeof s->notices[0], "%s", text);
}

static bool task_file_readable(const char *name) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/self/task/%d/%s", (int)gettid(), name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = read(fd, buf, sizeof buf) > 0;
  close(fd);
  return ok;
}

static void probe_sources(tm_session *s) {
  char why[160] = "";
  if (s->cfg.perf) {
    s->src_perf_switch = tm_perf_switch_open(&s->perf, (pid_t)s->pid, why, sizeof why);
    if (!s->src_perf_switch) add_notice(s, why);
    why[0] = 0;
    /* Off unless asked for: a thread's counting events are switched out and
     * in with it, a cost at every context switch (docs/benchmarks.md, the
     * yield ping-pong), and what they count besides cycles, /proc tells. */
    if (s->cfg.counters) {
      tm_perf_counters_probe(&s->src_perf_sw, &s->src_perf_hw, why, sizeof why);
      if (why[0]) add_notice(s, why);
    }
  } else {
    /* Every thread would carry inherited perf events: creating and ending
     * threads costs the kernel several times more. */
    s->src_perf_switch = s->src_perf_sw = s->src_perf_hw = false;
    add_notice(s, "perf events off (THREADMON_PERF=0): states split by schedstat per tick");
  }
  s->src_proc_stat = tm_cpustat_open(&s->cpus);
  if (!s->src_proc_stat) add_notice(s, "per-CPU times unavailable: cannot read /proc/stat");
  s->src_proc_task = task_file_readable("schedstat") && task_file_readable("stat");
  if (!s->src_proc_task) add_notice(s, "thread times unavailable: cannot read /proc/self/task");
  s->src_futex = task_file_readable("syscall");
  if (!s->src_futex) add_notice(s, "hidden-lock sampling unavailable: cannot read syscall files");
}

static void release_session(tm_session *s) {
  tm_transport_close(&s->tx);
  if (s->src_perf_switch || s->perf_switch_paused) tm_perf_switch_close(&s->perf);
  if (s->src_proc_stat) tm_cpustat_close(&s->cpus);
  s->src_perf_switch = s->src_proc_stat = s->perf_switch_paused = false;
  s->perf_switch_dropped = false;
}

/* ---- the process tree's index (THREADMON_TREE) ---- */

static bool tree_mode(void) {
  return tree_dir[0] != 0;
}

/* DIR/<tag>.tmcap: a session's capture inside the tree's directory. */
static int tree_path(const char *tag, char *out, size_t n) {
  int w = snprintf(out, n, "%s/%s.tmcap", tree_dir, tag);
  return w < 0 || (size_t)w >= n ? -1 : 0;
}

static void tree_line(const char *kind, uint32_t ppid, uint64_t since, const char *how,
                      int status, const char *capture) {
  tm_life l = {.kind = kind,
               .pid = (uint32_t)getpid(),
               .ppid = ppid,
               .t_ns = tm_now_ns(),
               .since_ns = since,
               .how = how,
               .status = status,
               .capture = capture,
               .name = program_invocation_short_name};
  tm_lives_write(tree_dir, &l);
}

/* A session opened: its capture's name in the tree's directory. The root's
 * file is THREADMON_OUTPUT itself, which the launcher moves in as PID.tmcap. */
static void tree_line_start(const char *path) {
  if (!tree_mode()) return;
  char own[32];
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path) : 0;
  const char *name = slash ? slash + 1 : path;
  if (!path[0]) {
    name = NULL;
  } else if (dir_len != strlen(tree_dir) || strncmp(path, tree_dir, dir_len) != 0) {
    snprintf(own, sizeof own, "%u.tmcap", S.pid);
    name = own;
  }
  tree_line("start", (uint32_t)getppid(), 0, NULL, 0, name);
}

/* Opens the transport and sources and starts the sampler. */
static int open_session(const char *path, uint32_t parent_pid) {
  tm_session *s = &S;
  s->pid = (uint32_t)getpid();
  s->parent_pid = parent_pid;
  s->probe_tid = 0;
  s->seq = 0;
  s->notice_count = 0;
  s->net_reported = false;
  s->events_dropped = s->events_dropped_total = s->events_folded = 0;
  if (getrandom(&s->session_id, sizeof s->session_id, GRND_NONBLOCK) != sizeof s->session_id)
    s->session_id = tm_now_ns() ^ ((uint64_t)s->pid << 40);
  struct timespec rt;
  s->start_ns = tm_now_ns();
  clock_gettime(CLOCK_REALTIME, &rt);
  s->start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
  tm_fds_init();
  tm_transport_init(&s->tx);
  s->tx.compress_level = s->cfg.compress;
  if (path[0] && tm_transport_open_file(&s->tx, path) < 0) {
    /* EEXIST: tmcreate.h never replaces a device such as /dev/null. */
    fprintf(stderr, "threadmon: cannot create capture file %s: %s; running unprobed\n", path,
            errno == EEXIST ? "it is not a regular file" : strerror(errno));
    release_session(s);
    return -1;
  }
  if (s->cfg.host[0] &&
      tm_transport_set_peer(&s->tx, s->cfg.host, s->cfg.port, s->cfg.net_buffer_bytes) < 0) {
    fprintf(stderr, "threadmon: out of memory; running unprobed\n");
    release_session(s);
    return -1;
  }
  if (path[0]) tm_status_capture(s->cfg.status, path);
  gather_identity(s);
  probe_sources(s);
  atomic_store(&tm_active, 1);
  if (tm_sampler_start(s) < 0) {
    atomic_store(&tm_active, 0);
    fprintf(stderr, "threadmon: cannot start the sampler thread: %s; running unprobed\n",
            strerror(errno));
    release_session(s);
    return -1;
  }
  /* Descendants (exec'd images, spawned children) that inherit
   * LD_PRELOAD open their own file instead of truncating this one. */
  char lineage[48];
  snprintf(lineage, sizeof lineage, "%u:%u", s->pid, exec_generation);
  setenv("THREADMON_SESSION", lineage, 1);
  tree_line_start(path);
  return 0;
}

/* Which file this process writes, given THREADMON_SESSION from whoever
 * started the session we descend from. */
static void choose_path(char *out, size_t n, uint32_t *parent_pid) {
  *parent_pid = 0;
  exec_generation = 0;
  const char *lineage = getenv("THREADMON_SESSION");
  unsigned pid = 0, gen = 0;
  if (!root_output[0] || !tm_config_lineage(lineage, &pid, &gen)) {
    snprintf(out, n, "%s", root_output);
    return;
  }
  char tag[48];
  if (pid == (unsigned)getpid()) { /* this image came from an exec */
    exec_generation = gen + 1;
    snprintf(tag, sizeof tag, "%u-exec%u", pid, exec_generation);
  } else {
    snprintf(tag, sizeof tag, "%d", (int)getpid());
    if ((unsigned)getppid() == pid) *parent_pid = pid;
  }
  int bad = tree_mode() ? tree_path(tag, out, n) : tm_config_tag_path(root_output, tag, out, n);
  if (bad < 0) snprintf(out, n, "%s", root_output);
}

/* In a tree, a process that inherited the probe without a session of its
 * own (a spawned child, or a forked one that exec'd before its first
 * thread) starts lazy, knowing only the tree's directory: the rest of its
 * configuration is read when its session starts. */
TM_HOT static bool config_deferred;
TM_HOT static bool lazy_refused; /* its configuration was bad: lazy for good */

/* The environment's strings stay where the kernel put them (setenv and
 * unsetenv change the array, never the strings). */
static bool lazy_config(void) {
  const char *tree = getenv("THREADMON_TREE");
  if (strlen(tree) >= sizeof S.cfg.tree - 64) return false; /* tm_config_load says so */
  tree_dir = tree;
  config_deferred = true;
  return true;
}

/* ---- ending ---- */

/* A process that did not get here through our fork handler (_Fork, vfork,
 * clone) inherited the session's memory but not its sampler: it must leave
 * the parent's session alone. */
static bool session_is_ours(void) { return (uint32_t)getpid() == S.pid; }

/* The final tick, Goodbye and flush; the sampler is stopped or is the caller. */
static void finish_session(int reason, int status) {
  tm_sampler_final_tick(&S);
  /* The Goodbye says the end and what was dropped: it waits for room in a
   * full queue (a peer slow to read), within the exit's flush time. */
  uint64_t flush_from = tm_now_ns();
  tm_transport_make_room(&S.tx, GOODBYE_ROOM, EXIT_FLUSH_MS);
  int flush_left = EXIT_FLUSH_MS - (int)((tm_now_ns() - flush_from) / 1000000u);
  Threadmon__Goodbye b = THREADMON__GOODBYE__INIT;
  b.time_ns = tm_now_ns();
  b.reason = (Threadmon__EndReason)reason;
  b.exit_status = status;
  b.frames_dropped = S.tx.frames_dropped;
  b.events_dropped = S.events_dropped_total;
  b.bytes_written = S.tx.bytes_written;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_GOODBYE;
  f.goodbye = &b;
  tm_emit(&S, &f, TM_TO_ALL);
  tm_transport_flush(&S.tx, flush_left > 0 ? flush_left : 0);
  if (tree_mode())
    tree_line("end", (uint32_t)getppid(), S.start_ns,
              reason == THREADMON__END_REASON__END_EXEC ? "exec"
              : ended_by__exit                          ? "_exit"
                                                        : "exit",
              status, NULL);
  tm_session_report_net(&S, true);
  tm_session_report_file(&S);
  atomic_store(&tm_active, 0);
  release_session(&S);
  atomic_store(&state, S_OFF);
}

void tm_session_child_killed(pid_t pid, int sig, const struct rusage *usage) {
  if (!tree_mode()) return;
  tm_life l = {.kind = "end",
               .pid = (uint32_t)pid,
               .ppid = (uint32_t)tm_syscall(SYS_getpid),
               .t_ns = tm_now_ns(),
               .how = "signal",
               .status = sig,
               .usage = usage,
               .cpu_unknown = usage == NULL};
  tm_lives_write(tree_dir, &l);
}

/* The lazy process ends: its one line, once. */
static void lazy_end(const char *how, int status) {
  int expected = S_LAZY;
  if (!atomic_compare_exchange_strong(&state, &expected, S_OFF)) return;
  tree_line("end", lazy_ppid, lazy_since_ns, how, status, NULL);
}

static void end_session(int reason, int status) {
  if (atomic_load(&state) == S_LAZY) {
    if (reason != THREADMON__END_REASON__END_EXEC) lazy_end("exit", status);
    return;
  }
  if (!session_is_ours()) return;
  int expected = S_RUNNING;
  if (!atomic_compare_exchange_strong(&state, &expected, S_ENDING)) return;
  /* The program's signal handlers must not interrupt the probe inside
   * malloc or stdio: one that calls them would deadlock where, without the
   * probe, it would have interrupted the program's own exit. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  /* Nor may a cancellation the program left pending act on the probe's
   * cancellation points (the join, close, write): exit(3) would be unwound
   * into the exiting thread's cleanup and the process would exit 0. */
  int cancel_state;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  tm_thread *g = guard_enter();
  tm_sampler_stop(&S);
  finish_session(reason, status);
  guard_leave(g);
  pthread_setcancelstate(cancel_state, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void at_exit(void) {
  end_session(THREADMON__END_REASON__END_EXIT, atomic_load(&exit_status));
}

void tm_session_end_for_exec(void) { end_session(THREADMON__END_REASON__END_EXEC, 0); }

static int exit_call_status;

static void finish_on_probe_thread(void) {
  finish_session(THREADMON__END_REASON__END_EXIT, exit_call_status);
  tm_sampler_stop_after_handoff(&S);
}

void tm_session_end_for__exit(int status) {
  if (atomic_load(&state) == S_LAZY) {
    lazy_end("_exit", status);
    return;
  }
  if (atomic_load(&state) != S_RUNNING || !session_is_ours()) return;
  int expected = S_RUNNING;
  if (!atomic_compare_exchange_strong(&state, &expected, S_ENDING)) return;
  /* _exit may run in a signal handler, or while this thread holds a lock
   * the final tick needs (malloc's): the probe's thread ends the session,
   * and this one only waits for it, never past the flush limit. */
  exit_call_status = status;
  ended_by__exit = true;
  tm_sampler_handoff(&S, finish_on_probe_thread, EXIT_FLUSH_MS + 500);
}

void tm_session_exec_failed(void) {
  /* The image stays: go on in a new session, named like an exec'd one. */
  int expected = S_OFF;
  if (!S.cfg.host[0] && !root_output[0]) return;
  if (!atomic_compare_exchange_strong(&state, &expected, S_STARTING)) return;
  tm_thread *g = guard_enter();
  tm_sampler_forget(&S);
  char path[TM_PATH_BYTES];
  uint32_t parent;
  choose_path(path, sizeof path, &parent);
  atomic_store(&state, open_session(path, parent) == 0 ? S_RUNNING : S_OFF);
  guard_leave(g);
}

/* ---- fork ---- */

static tm_thread *fork_guard;

static void fork_prepare(void) {
  if (atomic_load(&state) != S_RUNNING) return;
  fork_guard = guard_enter();
  tm_sampler_pause(&S, true);
}

static void fork_parent(void) {
  if (atomic_load(&state) != S_RUNNING) return;
  tm_sampler_pause(&S, false);
  guard_leave(fork_guard);
}

static void open_child_session(void);

/* A forked child in a tree: lazy until its first thread. Nothing of the
 * parent's session is touched (freeing it would fault in and copy the
 * pages the fork shared): it is dropped if the session ever starts. */
static void lazy_fork_child(uint32_t parent) {
  lazy_since_ns = tm_now_ns();
  lazy_ppid = parent;
  atomic_store(&tm_active, 0);
  tree_line("fork", parent, 0, NULL, 0, NULL);
}

static void fork_child(void) {
  if (atomic_load(&state) == S_LAZY) { /* a lazy process's child: lazy too */
    lazy_fork_child((uint32_t)tm_syscall(SYS_getppid));
    return;
  }
  if (atomic_load(&state) != S_RUNNING) return;
  if (tree_mode() && S.cfg.follow) {
    lazy_inherited = true;
    atomic_store(&state, S_LAZY);
    lazy_fork_child(S.pid);
    lazy_guard = fork_guard; /* left when the session starts: no write now */
    return;
  }
  /* The child's program may get a signal at once (its parent's kill right
   * after fork): its handler must not interrupt the probe inside malloc or
   * stdio while the new session opens. It runs as soon as we are done. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  /* A cancellation pending in the forking thread belongs to the program's
   * code after fork returns, not to the probe's close and open here. */
  int cancel_state;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
  open_child_session();
  pthread_setcancelstate(cancel_state, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

pid_t tm_session_fork(pid_t (*real_fork)(void)) {
  if (atomic_load(&state) != S_RUNNING || !session_is_ours()) return real_fork();
  /* glibc skips its fork locks (malloc, stdio, the loader) in a
   * single-threaded process, so that fork and a child's signal handlers
   * stay usable there (a handler that prints, in a child that just
   * forked). Only our thread makes this process threaded: with it idle
   * (holding no lock of libc's) glibc may fork as it would without it. */
  if (!tm_sampler_program_single_threaded(&S)) return real_fork();
  if (!tm_sampler_pause(&S, true)) {
    tm_sampler_pause(&S, false);
    return real_fork();
  }
  char threaded = __libc_single_threaded;
  __libc_single_threaded = 1;
  pid_t pid = real_fork();
  int saved = errno;
  if (pid != 0) {
    __libc_single_threaded = threaded;
    tm_sampler_pause(&S, false);
  } else {
    /* A child with a new sampler is threaded (pthread_create said so); one
     * without is what the program was: single-threaded. */
    __libc_single_threaded = atomic_load(&state) == S_RUNNING ? 0 : 1;
  }
  errno = saved;
  return pid;
}

/* A child that is not followed (THREADMON_FOLLOW=0) only closes what it
 * inherited: freeing and clearing the parent's session, which it never
 * uses, faulted in a copy of every page of it (5.6x a bare fork's cost;
 * docs/benchmarks.md, "One capture per tree"). */
static void drop_inherited_session(void) {
  tm_sampler_close_inherited(&S.smp);
  tm_transport_close_inherited(&S.tx);
  if (S.src_perf_switch || S.perf_switch_paused) tm_perf_switch_close_inherited(&S.perf);
  if (S.src_proc_stat && S.cpus.fd >= 0) close(S.cpus.fd);
  atomic_store(&tm_active, 0);
  atomic_store(&state, S_OFF);
  guard_leave(fork_guard);
}

static void open_child_session(void) {
  if (!S.cfg.follow) {
    drop_inherited_session();
    return;
  }
  /* Everything inherited belongs to the parent's session: the sampler
   * thread is gone, the descriptors name the parent's tasks and stream. */
  tm_sampler_forget(&S);
  tm_transport_abandon(&S.tx); /* what it gathered is the parent's to write */
  release_session(&S);
  atomic_store(&tm_active, 0);
  uint32_t parent = S.pid;
  char path[TM_PATH_BYTES] = "";
  exec_generation = 0;
  if (root_output[0] &&
      tm_config_child_path(root_output, getpid(), path, sizeof path) < 0) {
    fprintf(stderr, "threadmon: capture path too long for the child; running unprobed\n");
    atomic_store(&state, S_OFF);
    guard_leave(fork_guard);
    return;
  }
  atomic_store(&state, open_session(path, parent) == 0 ? S_RUNNING : S_OFF);
  guard_leave(fork_guard);
}

/* ---- start ---- */

void tm_session_start(void) {
  int expected = S_NONE;
  if (!atomic_compare_exchange_strong(&state, &expected, S_STARTING)) return;
  tm_thread *g = guard_enter();
  int next = S_OFF;
  /* A lazy image (most end without a thread: a shell's /bin/true) leaves
   * to its session's start what only a session needs: the real functions
   * (about 90 dlsym calls, 40 us of every exec; its first wrapped call
   * resolves them too), the configuration (13 KiB of this library's
   * memory to fault in) and the machine's CPUs. */
  bool lazy = tm_config_lazy_image();
  if (!lazy) tm_real_init();
  if (lazy && lazy_config()) {
    tm_threads_fork_lazily = true;
    lazy_since_ns = tm_now_ns();
    lazy_ppid = (uint32_t)getppid();
    next = S_LAZY;
    atexit(at_exit);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
  } else if (tm_config_load(&S.cfg) == 0 && tm_config_wants_probe(&S.cfg)) {
    tree_dir = S.cfg.tree;
    if (!S.cfg.follow) tm_config_unpreload();
    snprintf(root_output, sizeof root_output, "%s", S.cfg.output);
    char path[TM_PATH_BYTES];
    uint32_t parent;
    tm_threads_fork_lazily = tree_mode() && S.cfg.follow;
    if (choose_path(path, sizeof path, &parent), open_session(path, parent) == 0) {
      next = S_RUNNING;
      atexit(at_exit);
      pthread_atfork(fork_prepare, fork_parent, fork_child);
    }
  }
  atomic_store(&state, next);
  guard_leave(g);
}

void tm_session_before_create(void) {
  int expected = S_LAZY;
  if (atomic_load_explicit(&state, memory_order_relaxed) != S_LAZY || lazy_refused) return;
  if (!atomic_compare_exchange_strong(&state, &expected, S_STARTING)) return;
  tm_real_init();
  /* An exec'd image: what its start left. A bad configuration is said in
   * one line, once. */
  if (config_deferred) {
    if (tm_config_load(&S.cfg) != 0) {
      lazy_refused = true;          /* tree_dir is still the environment's */
      atomic_store(&state, S_LAZY); /* its life in the index all the same */
      return;
    }
    config_deferred = false;
    tree_dir = S.cfg.tree;
    tm_threads_machine_init();
  }
  quiet q;
  quiet_enter(&q);
  tm_thread *g = NULL;
  char tag[48], path[TM_PATH_BYTES];
  exec_generation = 0;
  if (lazy_inherited) {
    /* What the fork left of the parent's session is the parent's. */
    tm_threads_lazy_fork_done();
    guard_leave(lazy_guard);
    lazy_guard = NULL;
    tm_sampler_forget(&S);
    tm_transport_abandon(&S.tx);
    release_session(&S);
    lazy_inherited = false;
    g = guard_enter();
    snprintf(tag, sizeof tag, "%d", (int)getpid());
  } else { /* an exec'd image: the process may have had others */
    g = guard_enter();
    snprintf(tag, sizeof tag, "%d-at%llu", (int)getpid(),
             (unsigned long long)(lazy_since_ns / 1000000u));
  }
  int next = S_OFF;
  if (tree_path(tag, path, sizeof path) == 0 && open_session(path, lazy_ppid) == 0) next = S_RUNNING;
  atomic_store(&state, next);
  guard_leave(g);
  quiet_leave(&q);
}

/* After threads.c's constructor (101): perf's inherited switch events must
 * exist before the program's first thread. */
__attribute__((constructor(102))) static void session_constructor(void) { tm_session_start(); }
