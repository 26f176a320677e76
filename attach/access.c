/* Attach permissions in one line each (access.h). */
#include "access.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf_switch.h"
#include "remote.h"

#define CAP_SYS_PTRACE_BIT 19
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT 38

static void refuse(tm_access *a, const char *fmt, ...) {
  if (a->nrefusals == TM_ACCESS_LINES) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->refusals[a->nrefusals++], TM_ACCESS_LINE, fmt, ap);
  va_end(ap);
}

/* A number from a one-line /proc/sys file; fallback when it is absent. */
static long sysctl_value(const char *path, long fallback) {
  char buf[32];
  return tm_read_file(path, buf, sizeof buf) > 0 ? strtol(buf, NULL, 10) : fallback;
}

/* "Key:\tv1\tv2..." of a status file, first n numbers (base 10 or 16). */
static bool status_field(const char *path, const char *key, int base, unsigned long long *v,
                         int n) {
  char buf[4096];
  if (tm_read_file(path, buf, sizeof buf) < 0) return false;
  size_t klen = strlen(key);
  for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    if (!strncmp(line, key, klen) && line[klen] == ':') {
      char *p = line + klen + 1, *end;
      for (int i = 0; i < n; i++, p = end) {
        v[i] = strtoull(p, &end, base);
        if (end == p) return false;
      }
      return true;
    }
  return false;
}

static bool have_cap(int bit) {
  unsigned long long eff;
  return status_field("/proc/self/status", "CapEff", 16, &eff, 1) && (eff >> bit & 1);
}

/* pid is a descendant of this process (Yama's scope 1 allows that). */
static bool is_descendant(pid_t pid) {
  char path[64];
  for (int depth = 0; pid > 1 && depth < 64; depth++) {
    unsigned long long ppid;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (!status_field(path, "PPid", 10, &ppid, 1)) return false;
    if ((pid_t)ppid == getpid()) return true;
    pid = (pid_t)ppid;
  }
  return false;
}

/* The target's real, effective and saved ids of a kind (key "Uid" or
 * "Gid" in its status) not all equal to mine: ptrace refuses that. */
static bool ids_differ(const char *status, const char *key, unsigned mine,
                       unsigned long long ids[3]) {
  return status_field(status, key, 10, ids, 3) &&
         (ids[0] != mine || ids[1] != mine || ids[2] != mine);
}

/* Why ptrace access was refused, from the settings that decide it. */
static void explain_ptrace(pid_t pid, int err, tm_access *a) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  unsigned long long uid[3] = {0}, gid[3] = {0};
  bool ptrace_cap = have_cap(CAP_SYS_PTRACE_BIT);
  const char *which = NULL, *fix = NULL;
  const unsigned long long *ids = NULL;
  unsigned mine = 0;
  if (!ptrace_cap && ids_differ(path, "Uid", getuid(), uid))
    which = "uid", fix = "run as that user", ids = uid, mine = getuid();
  else if (!ptrace_cap && ids_differ(path, "Gid", getgid(), gid))
    which = "gid", fix = "run with its group", ids = gid, mine = getgid();
  if (which) {
    refuse(a, "ptrace: refused: PID %d runs as %s %llu (effective %llu, saved %llu), this is "
              "%s %u: %s, or as root (CAP_SYS_PTRACE)",
           (int)pid, which, ids[0], ids[1], ids[2], which, mine, fix);
    return;
  }
  /* A process that is not dumpable has the files in its /proc directory
   * owned by root (the directory itself keeps its owner). */
  struct stat st;
  if (!ptrace_cap && stat(path, &st) == 0 && st.st_uid == 0 && uid[0] != 0) {
    refuse(a, "ptrace: refused: PID %d is not dumpable (prctl(PR_SET_DUMPABLE, 0), or it changed "
              "its ids, e.g. setuid): only root (CAP_SYS_PTRACE) may read it",
           (int)pid);
    return;
  }
  long scope = sysctl_value("/proc/sys/kernel/yama/ptrace_scope", 0);
  if (scope == 1 && !ptrace_cap && !is_descendant(pid)) {
    refuse(a, "ptrace: refused: /proc/sys/kernel/yama/ptrace_scope is 1 (only a parent may read "
              "its children): run as root, setcap cap_sys_ptrace+ep on this tool, or "
              "sysctl kernel.yama.ptrace_scope=0");
    return;
  }
  if (scope == 2 && !ptrace_cap) {
    refuse(a, "ptrace: refused: /proc/sys/kernel/yama/ptrace_scope is 2 (admin only): run as root "
              "or setcap cap_sys_ptrace+ep on this tool");
    return;
  }
  if (scope >= 3) {
    refuse(a, "ptrace: refused: /proc/sys/kernel/yama/ptrace_scope is 3 (no process may read "
              "another, until reboot)");
    return;
  }
  refuse(a, "ptrace: refused: reading /proc/%d/task/%d/syscall: %s (a security module, or "
            "the process changed meanwhile)",
         (int)pid, (int)pid, strerror(err));
}

static bool try_ptrace(pid_t pid, int *err) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)pid);
  if (tm_read_file(path, line, sizeof line) > 0) return true;
  *err = errno;
  return false;
}

/* Opens (and closes at once) a switch-record event on pid's main thread,
 * as the sampler would: dummy, context_switch, user space only. */
static bool try_perf(pid_t pid, int *err) {
  struct perf_event_attr at;
  tm_perf_switch_attr(&at);
  at.disabled = 1;
  int fd = (int)syscall(SYS_perf_event_open, &at, pid, -1, -1, 0);
  if (fd < 0) {
    *err = errno;
    return false;
  }
  close(fd);
  return true;
}

static void explain_perf(pid_t pid, int err, tm_access *a) {
  long paranoid = sysctl_value("/proc/sys/kernel/perf_event_paranoid", 2);
  bool cap = have_cap(CAP_PERFMON_BIT) || have_cap(CAP_SYS_ADMIN_BIT);
  if (err == ENOENT || err == ENOSYS)
    refuse(a, "perf: unavailable: this kernel has no perf events (CONFIG_PERF_EVENTS): "
              "on-CPU time is sampled from /proc");
  else if (paranoid > 2 && !cap)
    refuse(a, "perf: refused: /proc/sys/kernel/perf_event_paranoid is %ld (no perf events for "
              "unprivileged users): sysctl kernel.perf_event_paranoid=2, or CAP_PERFMON",
           paranoid);
  else if ((err == EACCES || err == EPERM) && !a->ptrace)
    refuse(a, "perf: refused: PID %d may not be read by this user (see the ptrace line)",
           (int)pid);
  else if (err == EACCES || err == EPERM)
    refuse(a, "perf: refused: perf_event_open on PID %d: %s, though perf_event_paranoid is %ld: a "
              "seccomp filter (a container's) or a security module forbids it",
           (int)pid, strerror(err), paranoid);
  else
    refuse(a, "perf: refused: perf_event_open on PID %d: %s (perf_event_paranoid %ld)", (int)pid,
           strerror(err), paranoid);
}

void tm_access_check(pid_t pid, tm_access *a) {
  memset(a, 0, sizeof *a);
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
  struct stat st;
  a->visible = stat(path, &st) == 0;
  if (!a->visible) {
    refuse(a, "proc: PID %d is not visible: no such process, or /proc is mounted with hidepid",
           (int)pid);
    snprintf(a->mode, sizeof a->mode, "mode: none (nothing can be read)");
    return;
  }
  int err = 0;
  a->ptrace = try_ptrace(pid, &err);
  if (!a->ptrace) explain_ptrace(pid, err, a);
  a->perf = try_perf(pid, &err);
  if (!a->perf) explain_perf(pid, err, a);
  if (a->ptrace && a->perf)
    snprintf(a->mode, sizeof a->mode,
             "mode: full (/proc, stacks and futex words, perf switch records)");
  else if (a->ptrace)
    snprintf(a->mode, sizeof a->mode,
             "mode: /proc, stacks and futex words (no perf: on-CPU time sampled, not exact)");
  else if (a->perf)
    snprintf(a->mode, sizeof a->mode,
             "mode: /proc and perf switch records (states, CPUs, exact on-CPU time; no stacks, "
             "futex words or lock owners)");
  else
    snprintf(a->mode, sizeof a->mode,
             "mode: /proc only (sampled thread states and names; no stacks, futex words, lock "
             "owners or exact switches)");
}
