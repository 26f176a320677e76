/* /proc readers for the sampler, and the probe's file descriptor budget.
 *
 * Kept-open descriptors are moved to numbers near the soft RLIMIT_NOFILE so
 * the program's low numbers stay free, and at most a fixed budget is kept;
 * beyond it files are opened, read and closed each time. A descriptor the
 * program closed under us (EBADF) is reopened. */
#ifndef THREADMON_PROCFS_H
#define THREADMON_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- descriptor budget ---- */

void tm_fds_init(void);
/* Moves fd above the floor (close-on-exec). Counted against the budget
 * when counted is true: then returns -1 (fd closed) once it is used up.
 * Uncounted moves always keep the descriptor (possibly low). */
int tm_fd_move_high(int fd, bool counted);
void tm_fd_close(int fd, bool counted);
/* Less than half the budget used: room for descriptors that are nice to
 * keep (stat, syscall, perf counters) rather than needed every tick. */
bool tm_fds_spare(void);

/* ---- the process read: its /proc directory ----
 *
 * Every read names its root: "/proc/self" for the probe inside its program
 * (the default: a zeroed tm_proc), "/proc/PID" for a process read from
 * outside, or a directory laid out the same way (task/TID/schedstat, ...,
 * status), which is how the sampler's stages are tested. Directories are
 * opened on first use and kept. */
typedef struct tm_proc {
  char root[64];  /* "" = /proc/self */
  bool task_open, status_open;
  int task_dir;   /* root/task */
  int status_fd;  /* root/status (Threads:) */
  int opened_in;  /* pid that opened them: a forked child forgets them */
} tm_proc;

/* Sets the root (NULL or "" = this process). */
void tm_proc_init(tm_proc *p, const char *root);
/* Whether p is this very process (its threads' own schedstat by /proc/TID,
 * their CPU clocks by clock_gettime). */
bool tm_proc_is_self(const tm_proc *p);
/* Closes the directories opened in this process; a fork child's inherited
 * ones are forgotten (their numbers may be the program's now). */
void tm_proc_close(tm_proc *p);

/* ---- per-thread files ---- */

enum tm_task_file {
  TM_TASK_SCHEDSTAT,
  TM_TASK_STAT,
  TM_TASK_STATUS,
  TM_TASK_SYSCALL,
  TM_TASK_FILES
};

typedef struct tm_task_fds {
  uint32_t tid;
  int fd[TM_TASK_FILES]; /* -1 = not kept open */
} tm_task_fds;

void tm_task_fds_init(tm_task_fds *t, uint32_t tid);
void tm_task_fds_close(tm_task_fds *t);

/* Reads the whole file into buf (NUL-terminated). keep: try to keep the
 * descriptor open for next time. Returns bytes read, or -1 when the thread
 * is gone or the file is unreadable. */
long tm_task_read(tm_proc *p, tm_task_fds *t, enum tm_task_file which, bool keep, char *buf,
                  size_t n);

typedef struct tm_task_sched {
  uint64_t oncpu_ns, runqueue_ns, slices;
} tm_task_sched;

typedef struct tm_task_stat {
  char state; /* R, S, D, T, ... */
  uint64_t minflt, majflt;
  uint64_t user_ns, system_ns;
  int cpu;
} tm_task_stat;

/* The calling thread's stat fields and context switch counts without
 * /proc (the sampler about itself, every tick): getrusage(RUSAGE_THREAD)
 * has the same counters from the same kernel functions; its times,
 * truncated to clock ticks, equal stat's. False when unavailable. */
bool tm_self_usage(tm_task_stat *out, uint64_t *vol, uint64_t *invol);

bool tm_parse_schedstat(const char *s, tm_task_sched *out);
bool tm_parse_stat(const char *s, tm_task_stat *out);
/* The name in a stat line (its "(comm)"), cut to n - 1 bytes, the rest of
 * out zeroed. */
bool tm_parse_stat_name(const char *s, char *out, size_t n);
bool tm_parse_status_ctxsw(const char *s, uint64_t *vol, uint64_t *invol);
/* The futex word a thread is blocked on according to its syscall file, or 0. */
uint64_t tm_parse_syscall_futex(const char *s);
/* The syscall number of a syscall file line, plus one; 0 for "running" or
 * a thread outside any syscall ("-1 ..."). */
uint32_t tm_parse_syscall_nr(const char *s);
/* What a thread asleep in a syscall waits for; values match threadmon.proto
 * (AsleepKind). */
enum tm_asleep_kind {
  TM_ASLEEP_OTHER = 0,
  TM_ASLEEP_CHILD = 1,
  TM_ASLEEP_IO_EVENTS = 2,
  TM_ASLEEP_READ = 3,
  TM_ASLEEP_SIGNAL = 4,
  TM_ASLEEP_SLEEP = 5,
};
/* The kind of syscall nr_plus_one - 1 (as tm_parse_syscall_nr gives it);
 * TM_ASLEEP_OTHER for 0 and for calls not listed. */
enum tm_asleep_kind tm_syscall_asleep_kind(uint32_t nr_plus_one);

/* The process's thread count as the kernel has it (status, Threads:): one
 * read whatever the count, unlike a listing of /proc/self/task. -1 on
 * failure. */
long tm_kernel_thread_count(tm_proc *p);

/* Calls fn for every thread id in root/task. Returns -1 on failure. */
int tm_list_tasks(tm_proc *p, void (*fn)(uint32_t tid, void *arg), void *arg);

#endif
