/* libFuzzer: a /proc/PID/task/TID/syscall line and the futex wait decoded
 * from it (docs/fuzzing.md). A futex_waitv's array is read from this
 * process at the address the line gives, as it would be from a target:
 * process_vm_readv, so a bad address is an error, never a fault. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "futexwait.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *line = malloc(size + 1); /* the file is read NUL-terminated */
  if (!line) return 0;
  memcpy(line, data, size);
  line[size] = 0;
  tm_syscall sc;
  if (tm_syscall_parse(line, &sc)) {
    tm_futex_wait w = tm_futex_decode(getpid(), &sc);
    if (w.op == TM_FUTEX_WAITV && (w.nwords == 0 || w.nwords > 128)) __builtin_trap();
    if (w.op != TM_FUTEX_NONE && w.skipped) __builtin_trap();
    if (strlen(tm_futex_op_name(w.op)) == 0) __builtin_trap();
  }
  free(line);
  return 0;
}
