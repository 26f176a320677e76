/* What a blocked thread waits on, from /proc/PID/task/TID/syscall:
 * "NR a0 a1 a2 a3 a4 a5 SP PC" while it is in a system call, "running" or
 * "-1 SP PC" (blocked, not in a call) otherwise. x86-64 numbers.
 *
 * futex(2) waits give the futex word (a0), the operation and the value the
 * thread expected in it; futex_waitv(2) waits on several words at once, its
 * first word is read from the target's memory (its waiters array). */
#ifndef THREADMON_ATTACH_FUTEXWAIT_H
#define THREADMON_ATTACH_FUTEXWAIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum tm_futex_op {
  TM_FUTEX_NONE = 0, /* not in a futex wait */
  TM_FUTEX_WAIT,
  TM_FUTEX_WAIT_BITSET,
  TM_FUTEX_LOCK_PI,  /* also LOCK_PI2 */
  TM_FUTEX_WAIT_REQUEUE_PI,
  TM_FUTEX_WAITV,
} tm_futex_op;

typedef struct tm_syscall {
  bool in_call;  /* blocked in a system call */
  long nr;       /* its number, -1 when blocked outside one */
  uint64_t arg[6];
  uintptr_t sp, pc;
} tm_syscall;

typedef struct tm_futex_wait {
  tm_futex_op op;
  uintptr_t word;    /* futex word address */
  uint32_t expected; /* value the thread slept on (LOCK_PI: none) */
  bool private_futex, realtime_clock;
  uint32_t nwords;   /* futex_waitv: how many words */
  const char *skipped; /* op NONE: why a futex call was not decoded, or NULL */
} tm_futex_wait;

/* Parses a syscall file's line; false when it says "running" or is not
 * understood. */
bool tm_syscall_parse(const char *line, tm_syscall *out);

/* Decodes a futex wait; op NONE when the call is not one. pid: for reading
 * futex_waitv's array. */
tm_futex_wait tm_futex_decode(pid_t pid, const tm_syscall *sc);

/* "FUTEX_WAIT", "FUTEX_WAIT_BITSET", ... */
const char *tm_futex_op_name(tm_futex_op op);

#endif
