/* Futex waits from a syscall file (futexwait.h). */
#include "futexwait.h"

#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "remote.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#ifndef FUTEX_WAITV_MAX
#define FUTEX_WAITV_MAX 128
#endif
#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

bool tm_syscall_parse(const char *line, tm_syscall *out) {
  memset(out, 0, sizeof *out);
  char *end;
  long nr = strtol(line, &end, 10);
  if (end == line) return false; /* "running" */
  const char *p = end;
  unsigned long long v[8];
  int want = nr < 0 ? 2 : 8;
  for (int i = 0; i < want; i++) {
    v[i] = strtoull(p, &end, 16);
    if (end == p) return false;
    p = end;
  }
  out->nr = nr;
  out->in_call = nr >= 0;
  if (nr < 0) {
    out->sp = (uintptr_t)v[0];
    out->pc = (uintptr_t)v[1];
    return true;
  }
  for (int i = 0; i < 6; i++) out->arg[i] = v[i];
  out->sp = (uintptr_t)v[6];
  out->pc = (uintptr_t)v[7];
  return true;
}

tm_futex_wait tm_futex_decode(pid_t pid, const tm_syscall *sc) {
  tm_futex_wait w = {0};
  if (!sc->in_call) return w;
  if (sc->nr == SYS_futex_waitv) {
    /* struct futex_waitv { u64 val; u64 uaddr; u32 flags; u32 __reserved; } */
    uint64_t first[3];
    /* The kernel refuses other counts before it sleeps: this thread is not
     * in such a wait, whatever its syscall file says. */
    if (sc->arg[1] == 0 || sc->arg[1] > FUTEX_WAITV_MAX) {
      w.skipped = "futex_waitv: a count of waiters the kernel refuses (1 to 128)";
      return w;
    }
    if (tm_remote_read(pid, (uintptr_t)sc->arg[0], first, sizeof first) != (ssize_t)sizeof first) {
      w.skipped = "futex_waitv: its waiters array cannot be read";
      return w;
    }
    w.op = TM_FUTEX_WAITV;
    w.word = (uintptr_t)first[1];
    w.expected = (uint32_t)first[0];
    w.private_futex = (first[2] & FUTEX_PRIVATE_FLAG) != 0;
    w.nwords = (uint32_t)sc->arg[1];
    return w;
  }
  if (sc->nr != SYS_futex) return w;
  int op = (int)sc->arg[1];
  w.word = (uintptr_t)sc->arg[0];
  w.expected = (uint32_t)sc->arg[2];
  w.private_futex = (op & FUTEX_PRIVATE_FLAG) != 0;
  w.realtime_clock = (op & FUTEX_CLOCK_REALTIME) != 0;
  w.nwords = 1;
  switch (op & FUTEX_CMD_MASK) {
  case FUTEX_WAIT: w.op = TM_FUTEX_WAIT; break;
  case FUTEX_WAIT_BITSET: w.op = TM_FUTEX_WAIT_BITSET; break;
  case FUTEX_LOCK_PI:
  case FUTEX_LOCK_PI2: w.op = TM_FUTEX_LOCK_PI, w.expected = 0; break;
  case FUTEX_WAIT_REQUEUE_PI: w.op = TM_FUTEX_WAIT_REQUEUE_PI; break;
  default: w = (tm_futex_wait){0}; break; /* a wake, requeue ...: not a wait */
  }
  return w;
}

const char *tm_futex_op_name(tm_futex_op op) {
  switch (op) {
  case TM_FUTEX_WAIT: return "FUTEX_WAIT";
  case TM_FUTEX_WAIT_BITSET: return "FUTEX_WAIT_BITSET";
  case TM_FUTEX_LOCK_PI: return "FUTEX_LOCK_PI";
  case TM_FUTEX_WAIT_REQUEUE_PI: return "FUTEX_WAIT_REQUEUE_PI";
  case TM_FUTEX_WAITV: return "futex_waitv";
  case TM_FUTEX_NONE: break;
  }
  return "none";
}
