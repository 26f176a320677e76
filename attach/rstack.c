/* Remote stack scan (rstack.h). */
#include "rstack.h"

#include <stdio.h>
#include <string.h>

#include "futexwait.h"
#include "remote.h"
#include "stackscan.h"

/* The instruction bytes before a return address; tm_after_call looks at
 * most 7 back. */
#define CALL_BYTES 8

static bool after_call(pid_t pid, const tm_maps *m, uintptr_t w) {
  const tm_mapping *mp = tm_maps_find(m, w);
  if (!mp || !mp->exec || w - mp->start < CALL_BYTES) return false;
  unsigned char code[CALL_BYTES];
  if (tm_remote_read(pid, w - CALL_BYTES, code, sizeof code) != CALL_BYTES) return false;
  return tm_after_call(code + CALL_BYTES) != 0;
}

int tm_remote_stack(pid_t pid, pid_t tid, const char *syscall_line, const tm_maps *m,
                    tm_rcfi *cfi, uintptr_t *pcs, int max, int *exact) {
  tm_syscall sc;
  if (max < 1 || !tm_syscall_parse(syscall_line, &sc) || !sc.sp || !sc.pc || (sc.sp & 7))
    return 0;
  static unsigned char copy[TM_RSTACK_BYTES];
  ssize_t got = tm_remote_read(pid, sc.sp, copy, sizeof copy);
  if (got < 8) return 0;

  char path[64], again[256];
  snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
  if (tm_read_file(path, again, sizeof again) < 0 || strcmp(again, syscall_line) != 0) return 0;

  int n = 0;
  pcs[n++] = sc.pc;
  tm_stack_copy st = {sc.sp, copy, (size_t)got};
  tm_cfi_regs regs = {sc.pc, sc.sp, 0, false};
  ssize_t from = 0;
  for (bool ret = false; cfi && n < max && tm_cfi_step_with(&regs, ret, &st, tm_rcfi_find, cfi);
       ret = true) {
    if (!after_call(pid, m, regs.ip)) break;
    pcs[n++] = regs.ip;
    from = (ssize_t)(regs.sp - sc.sp);
  }
  if (exact) *exact = n;
  for (ssize_t off = from; off + 8 <= got && n < max; off += 8) {
    uintptr_t w;
    memcpy(&w, copy + off, sizeof w);
    if (after_call(pid, m, w)) pcs[n++] = w;
  }
  return n;
}
