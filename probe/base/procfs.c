#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probe.h"

/* Sampler-thread only (and the fork child before it starts a sampler). */
/* The calling thread's tid, asked once per thread (and again in a forked
 * child's session): past the descriptor budget every read opens its file,
 * 10,000 a second at 10,000 light threads, and each asked getpid and
 * gettid before. */
static TM_TLS __thread uint32_t own_tid;
static int fd_floor = 3;
static unsigned fd_budget = 0, fd_used = 0;
static uint64_t ns_per_tick = 10000000;

void tm_fds_init(void) {
  /* A forked child's session: the forking thread's tid is new. */
  own_tid = 0;
  struct rlimit rl;
  rlim_t soft = 1024;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) soft = rl.rlim_cur;
  /* An eighth of the limit, at most 1024: schedstat for every thread of
   * a big program, the rarer files and perf counters while there is room. */
  fd_budget = (unsigned)(soft / 8);
  if (fd_budget > 1024) fd_budget = 1024;
  /* Kept-open descriptors from 1024 (or the limit less the budget): fork
   * copies the descriptor table up to the highest open number, and at a
   * limit of 20,000 that copy was half of what the probe added to each
   * fork (docs/benchmarks.md, "Fork-heavy"). Still above select()'s
   * FD_SETSIZE, so the numbers a program is likely to use stay free. */
  if (soft > 1024 + fd_budget) soft = 1024 + fd_budget;
  fd_floor = (int)(soft - fd_budget);
  if (fd_floor < 3) fd_floor = 3;
  fd_used = 0;
  long hz = sysconf(_SC_CLK_TCK);
  if (hz > 0) ns_per_tick = 1000000000u / (uint64_t)hz;
}

int tm_fd_move_high(int fd, bool counted) {
  if (fd < 0) return -1;
  if (counted && fd_used >= fd_budget) {
    close(fd);
    return -1;
  }
  int high = fcntl(fd, F_DUPFD_CLOEXEC, fd_floor);
  if (high >= 0) {
    close(fd);
    fd = high;
  } else if (counted) {
    close(fd); /* no room above the floor: don't sit on the program's numbers */
    return -1;
  }
  if (counted) fd_used++;
  return fd;
}

void tm_fd_close(int fd, bool counted) {
  if (fd < 0) return;
  close(fd);
  if (counted && fd_used) fd_used--;
}

bool tm_fds_spare(void) { return fd_used < fd_budget / 2; }

static const char *const task_file_name[TM_TASK_FILES] = {"schedstat", "stat", "status",
                                                          "syscall"};

void tm_task_fds_init(tm_task_fds *t, uint32_t tid) {
  t->tid = tid;
  for (int i = 0; i < TM_TASK_FILES; i++) t->fd[i] = -1;
}

void tm_task_fds_close(tm_task_fds *t) {
  for (int i = 0; i < TM_TASK_FILES; i++) {
    tm_fd_close(t->fd[i], true);
    t->fd[i] = -1;
  }
}

void tm_proc_init(tm_proc *p, const char *root) {
  memset(p, 0, sizeof *p);
  snprintf(p->root, sizeof p->root, "%s", root ? root : "");
}

bool tm_proc_is_self(const tm_proc *p) {
  return !p->root[0] || !strcmp(p->root, "/proc/self");
}

static const char *root_of(const tm_proc *p) { return p->root[0] ? p->root : "/proc/self"; }

/* Directories opened by another process (the parent of a fork child) are
 * not ours to use or close. */
static void forget_inherited(tm_proc *p) {
  if (p->opened_in == (int)getpid()) return;
  p->task_open = p->status_open = false;
  p->opened_in = (int)getpid();
}

void tm_proc_close(tm_proc *p) {
  forget_inherited(p);
  if (p->task_open) tm_fd_close(p->task_dir, false);
  if (p->status_open) tm_fd_close(p->status_fd, false);
  p->task_open = p->status_open = false;
}

/* root/task, opened once per process: resolving "/proc/self/task" again
 * for every file of every new thread was a third of what a process that
 * makes thousands of threads a second cost the sampler. */
static int open_task_file(tm_proc *p, uint32_t tid, enum tm_task_file which) {
  forget_inherited(p);
  if (!p->task_open) {
    char dir[96];
    snprintf(dir, sizeof dir, "%s/task", root_of(p));
    int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d >= 0) {
      p->task_dir = tm_fd_move_high(d, false);
      p->task_open = true;
    }
  }
  bool self = tm_proc_is_self(p);
  if (self && !own_tid) own_tid = (uint32_t)gettid();
  char path[48];
  /* Our own thread's schedstat through /proc/TID, not /proc/self/task/TID:
   * a task directory of a thread still alive at exit_group makes the
   * parent's wait() spin in the kernel's dcache invalidation (Linux 6.x),
   * most of what a short forked child would cost under the probe.
   * schedstat is per thread under either name (stat is not: there
   * /proc/TID sums the whole process). */
  if (self && which == TM_TASK_SCHEDSTAT && tid == own_tid) {
    snprintf(path, sizeof path, "/proc/%u/schedstat", tid);
    return open(path, O_RDONLY | O_CLOEXEC);
  }
  snprintf(path, sizeof path, "%u/%s", tid, task_file_name[which]);
  if (p->task_open) return openat(p->task_dir, path, O_RDONLY | O_CLOEXEC);
  char full[128];
  snprintf(full, sizeof full, "%s/task/%s", root_of(p), path);
  return open(full, O_RDONLY | O_CLOEXEC);
}

/* A process's status is ~1.5 KB; Threads: is in its first half. */
#define READ_BYTES_STATUS 4096

static long read_all(int fd, char *buf, size_t n) {
  ssize_t r;
  do r = pread(fd, buf, n - 1, 0);
  while (r < 0 && errno == EINTR);
  if (r < 0) return -1;
  buf[r] = 0;
  return r;
}

long tm_task_read(tm_proc *p, tm_task_fds *t, enum tm_task_file which, bool keep, char *buf,
                  size_t n) {
  int *kept = &t->fd[which];
  if (*kept >= 0) {
    long r = read_all(*kept, buf, n);
    if (r >= 0) return r;
    if (errno != EBADF) return -1; /* ESRCH: the thread is gone */
    /* The program closed our descriptor: its number is no longer ours. */
    *kept = -1;
    if (fd_used) fd_used--;
  }
  int fd = open_task_file(p, t->tid, which);
  if (fd < 0) return -1;
  long r = read_all(fd, buf, n);
  /* schedstat is read every tick: it may use the whole budget. */
  if (keep && r >= 0 && (which == TM_TASK_SCHEDSTAT || tm_fds_spare())) {
    *kept = tm_fd_move_high(fd, true);
  } else {
    close(fd);
  }
  return r;
}

bool tm_self_usage(tm_task_stat *out, uint64_t *vol, uint64_t *invol) {
  /* stat truncates nanoseconds to ticks, getrusage to microseconds: the
   * same ticks only when a tick is a whole number of microseconds. */
  if (ns_per_tick % 1000) return false;
  struct rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) != 0) return false;
  uint64_t us_per_tick = ns_per_tick / 1000;
  uint64_t user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec;
  uint64_t sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
  out->user_ns = user_us / us_per_tick * ns_per_tick;
  out->system_ns = sys_us / us_per_tick * ns_per_tick;
  out->minflt = (uint64_t)ru.ru_minflt;
  out->majflt = (uint64_t)ru.ru_majflt;
  int cpu = sched_getcpu();
  if (cpu >= 0) out->cpu = cpu;
  out->state = 'R'; /* it is us, running */
  *vol = (uint64_t)ru.ru_nvcsw;
  *invol = (uint64_t)ru.ru_nivcsw;
  return true;
}

bool tm_parse_schedstat(const char *s, tm_task_sched *out) {
  char *end;
  out->oncpu_ns = strtoull(s, &end, 10);
  if (end == s) return false;
  s = end;
  out->runqueue_ns = strtoull(s, &end, 10);
  if (end == s) return false;
  s = end;
  out->slices = strtoull(s, &end, 10);
  return end != s;
}

bool tm_parse_stat_name(const char *s, char *out, size_t n) {
  const char *open = strchr(s, '('), *close = strrchr(s, ')');
  if (!open || !close || close < open || n == 0) return false;
  size_t len = (size_t)(close - open - 1);
  if (len > n - 1) len = n - 1;
  memset(out, 0, n);
  memcpy(out, open + 1, len);
  return true;
}

bool tm_parse_stat(const char *s, tm_task_stat *out) {
  /* The name in parentheses may hold spaces and ')': fields start after
   * the last ')'. */
  const char *p = strrchr(s, ')');
  if (!p) return false;
  p++;
  /* Field 3 is the state; we want 10 minflt, 12 majflt, 14 utime, 15 stime,
   * 39 processor. */
  unsigned long long v[40] = {0};
  char state = 0;
  int field = 3;
  char *end;
  while (*p && field <= 39) {
    while (*p == ' ') p++;
    if (field == 3) {
      state = *p;
      while (*p && *p != ' ') p++;
    } else {
      v[field] = strtoull(p, &end, 10);
      if (end == p) {
        if (*p == '-') { /* negative fields (priority, nice) */
          strtoll(p, &end, 10);
        }
        if (end == p) return false;
      }
      p = end;
    }
    field++;
  }
  if (field <= 39) return false;
  out->state = state;
  out->minflt = v[10];
  out->majflt = v[12];
  out->user_ns = v[14] * ns_per_tick;
  out->system_ns = v[15] * ns_per_tick;
  out->cpu = (int)v[39];
  return true;
}

static bool field_u64(const char *s, const char *key, uint64_t *out) {
  const char *p = strstr(s, key);
  if (!p) return false;
  p += strlen(key);
  while (*p == ' ' || *p == '\t') p++;
  char *end;
  unsigned long long v = strtoull(p, &end, 10);
  if (end == p) return false;
  *out = v;
  return true;
}

bool tm_parse_status_ctxsw(const char *s, uint64_t *vol, uint64_t *invol) {
  return field_u64(s, "\nvoluntary_ctxt_switches:", vol) &&
         field_u64(s, "\nnonvoluntary_ctxt_switches:", invol);
}

uint64_t tm_parse_syscall_futex(const char *s) {
  char *end;
  long nr = strtol(s, &end, 10);
  if (end == s || nr != SYS_futex) return 0;
  unsigned long long arg0 = strtoull(end, NULL, 16);
  return arg0;
}

uint32_t tm_parse_syscall_nr(const char *s) {
  char *end;
  long nr = strtol(s, &end, 10);
  return end == s || nr < 0 ? 0 : (uint32_t)nr + 1;
}

enum tm_asleep_kind tm_syscall_asleep_kind(uint32_t nr_plus_one) {
  if (nr_plus_one == 0) return TM_ASLEEP_OTHER;
  switch ((long)nr_plus_one - 1) {
  case SYS_wait4:
  case SYS_waitid: return TM_ASLEEP_CHILD;
#ifdef SYS_poll
  case SYS_poll:
#endif
#ifdef SYS_select
  case SYS_select:
#endif
#ifdef SYS_epoll_wait
  case SYS_epoll_wait:
#endif
#ifdef SYS_epoll_pwait2
  case SYS_epoll_pwait2:
#endif
#ifdef SYS_io_uring_enter
  case SYS_io_uring_enter: /* asleep in it: waiting for completions */
#endif
  case SYS_ppoll:
  case SYS_pselect6:
  case SYS_epoll_pwait: return TM_ASLEEP_IO_EVENTS;
  case SYS_read:
  case SYS_readv:
  case SYS_pread64:
  case SYS_recvfrom:
  case SYS_recvmsg:
  case SYS_recvmmsg:
  case SYS_accept:
  case SYS_accept4: return TM_ASLEEP_READ;
#ifdef SYS_pause
  case SYS_pause:
#endif
  case SYS_rt_sigsuspend:
  case SYS_rt_sigtimedwait: return TM_ASLEEP_SIGNAL;
  case SYS_nanosleep:
  case SYS_clock_nanosleep: return TM_ASLEEP_SLEEP;
  default: return TM_ASLEEP_OTHER;
  }
}

long tm_kernel_thread_count(tm_proc *p) {
  forget_inherited(p);
  if (!p->status_open) {
    /* This process by its number: a fork child's /proc/self would do too,
     * but the file stays open across the fork. */
    char path[96];
    if (tm_proc_is_self(p)) snprintf(path, sizeof path, "/proc/%d/status", (int)getpid());
    else snprintf(path, sizeof path, "%s/status", p->root);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    p->status_fd = tm_fd_move_high(fd, false);
    p->status_open = true;
  }
  char buf[READ_BYTES_STATUS];
  if (read_all(p->status_fd, buf, sizeof buf) < 0) {
    if (errno == EBADF) p->status_open = false; /* the program closed it: reopen next time */
    return -1;
  }
  const char *line = strstr(buf, "\nThreads:");
  return line ? strtol(line + 9, NULL, 10) : -1;
}

int tm_list_tasks(tm_proc *p, void (*fn)(uint32_t tid, void *arg), void *arg) {
  char dir[96];
  snprintf(dir, sizeof dir, "%s/task", root_of(p));
  DIR *d = opendir(dir);
  if (!d) return -1;
  struct dirent *e;
  while ((e = readdir(d))) {
    char *end;
    unsigned long tid = strtoul(e->d_name, &end, 10);
    if (end != e->d_name && !*end && tid) fn((uint32_t)tid, arg);
  }
  closedir(d);
  return 0;
}
