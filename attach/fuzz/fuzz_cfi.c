/* libFuzzer: unwinding (probe/base/cfi.c) on a copy of a module's eh_frame
 * segment and a copy of a stack, both the target's bytes
 * (docs/fuzzing.md). The input is a header (the PC's offset from the
 * segment, signed: code is in another segment of the module; the
 * .eh_frame_hdr's offset in the segment; its length), the segment, then
 * the stack; steps go on while the unwinder finds a caller. */
#include <stdint.h>
#include <string.h>

#include "cfi.h"

#define SEG_BASE 0x40000000u /* where the segment is in the "target" */
#define STACK_BASE 0x7ffd0000u
#define STEPS_MAX 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct header {
  int32_t ip_off;
  uint32_t hdr_off, seg_len;
} header;

/* One module holds every address, as rcfi.c finds it for any of a
 * module's PCs. */
static bool find(void *arg, uintptr_t ip, tm_cfi_tables *out) {
  (void)ip;
  *out = *(const tm_cfi_tables *)arg;
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  header h;
  if (size < sizeof h) return 0;
  memcpy(&h, data, sizeof h);
  data += sizeof h;
  size -= sizeof h;
  if (h.seg_len > size || h.hdr_off >= h.seg_len) return 0;
  tm_cfi_tables t = {data + h.hdr_off, data, data + h.seg_len,
                     (intptr_t)(SEG_BASE - (uintptr_t)data)};
  tm_stack_copy st = {STACK_BASE, data + h.seg_len, size - h.seg_len};
  tm_cfi_regs r = {(uintptr_t)SEG_BASE + (uintptr_t)(intptr_t)h.ip_off, STACK_BASE, 0, false};
  for (int i = 0; i < STEPS_MAX; i++) {
    uintptr_t sp = r.sp;
    if (!tm_cfi_step_with(&r, i > 0, &st, find, &t)) break;
    if (r.sp <= sp) __builtin_trap(); /* every step goes up the stack */
  }
  return 0;
}
