/* May this process read PID from outside, and what of it?
 *
 * Stacks and futex words need ptrace access in "attach" mode (the syscall
 * files, process_vm_readv): the same user (real, effective and saved ids
 * all matching) or CAP_SYS_PTRACE, a dumpable target, and Yama's
 * ptrace_scope allowing it. perf switch records on its threads need ptrace
 * access in "read" mode (Yama does not apply) and perf_event_paranoid ≤ 2
 * (user-space only, which is all they need) or CAP_PERFMON / CAP_SYS_ADMIN.
 * What is refused is said in one line naming the setting and the fix; what
 * still works is the mode. Each verdict is a real try (a syscall file
 * read, a perf event opened and closed at once), the settings only
 * explain it. */
#ifndef THREADMON_ATTACH_ACCESS_H
#define THREADMON_ATTACH_ACCESS_H

#include <stdbool.h>
#include <sys/types.h>

#define TM_ACCESS_LINES 6
#define TM_ACCESS_LINE 256

typedef struct tm_access {
  bool visible; /* /proc/PID exists for us: thread states and names */
  bool ptrace;  /* syscall files and memory: stacks, futex words, owners */
  bool perf;    /* perf switch records on its threads */
  char refusals[TM_ACCESS_LINES][TM_ACCESS_LINE];
  int nrefusals;
  char mode[TM_ACCESS_LINE]; /* "mode: ..." what remains */
} tm_access;

void tm_access_check(pid_t pid, tm_access *a);

#endif
