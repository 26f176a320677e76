/* tm_call_chain_linked_in (callchain.h) on hand-made code: which frames of
 * a stack copied after its thread may have gone on are one chain of calls
 * into the blocked PC's function. */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "callchain.h"
#include "tm_check.h"

/* Functions at offsets of one code buffer; each call is call rel32. */
enum { F0 = 0x000, F1 = 0x100, TAIL = 0x200, F2 = 0x300, PROG = 0x400, OTHER = 0x500, END = 0x600 };
static uint8_t code[END];
static const struct {
  int start;
  const char *module, *name;
} functions[] = {{F0, "libc", "wait"},  {F1, "libc", "lock"},   {TAIL, "libc", "tail"},
                 {F2, "libc", "entry"}, {PROG, "prog", "work"}, {OTHER, "libc", "other"}};

static uintptr_t at(int offset) {
  return (uintptr_t)code + (uintptr_t)offset;
}

/* A call at offset to target: returns the return address. */
static uintptr_t call(int offset, int target) {
  code[offset] = 0xE8;
  int32_t disp = (int32_t)(target - (offset + 5));
  memcpy(code + offset + 1, &disp, sizeof disp);
  return at(offset + 5);
}

static bool read_code(void *arg, uintptr_t a, void *out, size_t len, unsigned flags) {
  (void)arg, (void)flags;
  if (a < at(0) || a + len > at(END)) return false;
  memcpy(out, (const void *)a, len);
  return true;
}

static void function_of(void *arg, uintptr_t a, char *module, size_t module_len, char *name,
                        size_t name_len, uintptr_t *start) {
  (void)arg;
  for (size_t i = sizeof functions / sizeof *functions; i-- > 0;)
    if (a >= at(functions[i].start) && a < at(END)) {
      snprintf(module, module_len, "%s", functions[i].module);
      snprintf(name, name_len, "%s", functions[i].name);
      *start = at(functions[i].start);
      return;
    }
}

static const tm_code_view view = {read_code, function_of, NULL};

static int linked(const uintptr_t *pcs, int n) {
  return tm_call_chain_linked_in(&view, pcs, n);
}

int main(void) {
  uintptr_t pc = at(F0 + 0x50);
  uintptr_t lock_calls_wait = call(F1 + 0x40, F0);
  uintptr_t lock_calls_other = call(F1 + 0x60, OTHER);
  uintptr_t entry_calls_tail = call(F2 + 0x40, TAIL); /* tail jumps to lock */
  uintptr_t entry_calls_lock = call(F2 + 0x60, F1);
  uintptr_t work_calls_entry = call(PROG + 0x40, F2);
  uintptr_t work_calls_other = call(PROG + 0x60, OTHER);

  /* Every call leads to the frame inside it. */
  CHECK_EQ(linked((uintptr_t[]){pc, lock_calls_wait, entry_calls_lock, work_calls_entry}, 4), 4);
  /* A tail call between: the frame outside vouches for it. */
  CHECK_EQ(linked((uintptr_t[]){pc, lock_calls_wait, entry_calls_tail, work_calls_entry}, 4), 4);
  /* ... and nothing does for the outermost, nor for one the next frame's
   * call does not lead to. */
  CHECK_EQ(linked((uintptr_t[]){pc, lock_calls_wait, entry_calls_tail}, 3), 2);
  CHECK_EQ(linked((uintptr_t[]){pc, lock_calls_wait, entry_calls_tail, work_calls_other}, 4), 2);
  /* The first slot holds a later call's return address (it woke and went
   * on): nothing but the PC, whatever lies above. */
  CHECK_EQ(linked((uintptr_t[]){pc, lock_calls_other, entry_calls_lock, work_calls_entry}, 4), 1);
  /* A frame in no known function, or an address that is not after a call. */
  CHECK_EQ(linked((uintptr_t[]){pc, lock_calls_wait, at(END) + 64}, 3), 2);
  CHECK_EQ(linked((uintptr_t[]){pc, at(F1 + 0x20)}, 2), 1);
  CHECK_EQ(linked((uintptr_t[]){pc}, 1), 1);
  CHECK_EQ(linked(NULL, 0), 0);
  printf("ok\n");
  return 0;
}
