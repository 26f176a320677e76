/* The user-thread core (userthreads.c) without preloading: ids from
 * makecontext, lookups by context address and by stack pointer, contexts
 * saved by the LWP's own code, and a context made anew or on a reused
 * stack (retired). */
#include <stdint.h>

#include "tm_check.h"
#include "userthreads.h"

static char ctx_a[1024], ctx_b[1024], ctx_native[1024], ctx_copy[1024], ctx_c[1024], ctx_d[1024];
static char stack_a[4096], stack_b[4096];

/* Stand-ins for functions: only their addresses are kept. */
static char fn_a[1], fn_b[1];

int main(void) {
  /* Nothing made yet: every context is an LWP's own. */
  CHECK_EQ(tm_ut_lookup(ctx_a, 0), 0);
  uintptr_t a_lo = (uintptr_t)stack_a, a_hi = a_lo + sizeof stack_a;
  uintptr_t b_lo = (uintptr_t)stack_b, b_hi = b_lo + sizeof stack_b;
  uint32_t retired[2] = {99, 99};
  uint32_t a = tm_ut_make(ctx_a, fn_a, a_lo, a_hi, 0, 7, 1000, retired);
  CHECK_EQ(a, 1);
  CHECK_EQ(retired[0], 0);
  CHECK_EQ(retired[1], 0);
  uint32_t b = tm_ut_make(ctx_b, fn_b, b_lo, b_hi, (uintptr_t)ctx_native, 7, 2000, retired);
  CHECK_EQ(b, 2);
  CHECK_EQ(tm_ut_last_id(), 2);
  const tm_uthread *ub = tm_ut_get(b);
  CHECK(ub && ub->fn == fn_b && ub->link == (uintptr_t)ctx_native && ub->made_ns == 2000);
  CHECK(tm_ut_get(3) == NULL);

  /* By address (sp inside the stack, or unknown). */
  CHECK_EQ(tm_ut_lookup(ctx_a, a_hi - 64), a);
  CHECK_EQ(tm_ut_lookup(ctx_b, 0), b);
  /* A copy nobody saw: found by its stack pointer. */
  CHECK_EQ(tm_ut_lookup(ctx_copy, b_lo + 100), b);
  CHECK_EQ(tm_ut_lookup(ctx_copy, 0), 0);
  /* The LWP's own context, saved by a switch from it: 0, whatever its sp. */
  tm_ut_note(ctx_native, 0);
  CHECK_EQ(tm_ut_lookup(ctx_native, 12345), 0);
  /* A made context's struct now holding another stack: found by sp. */
  tm_ut_note(ctx_copy, a);
  CHECK_EQ(tm_ut_lookup(ctx_copy, b_lo + 8), b);
  CHECK_EQ(tm_ut_lookup(ctx_copy, a_lo + 8), a);

  /* makecontext on ctx_a again: a new user thread, the old one retired. */
  uint32_t a2 = tm_ut_make(ctx_a, fn_b, a_lo, a_hi, 0, 8, 3000, retired);
  CHECK_EQ(a2, 3);
  CHECK_EQ(retired[0], a);
  CHECK_EQ(retired[1], 0); /* the same one: retired once */
  CHECK_EQ(tm_ut_lookup(ctx_a, a_lo + 8), a2);
  /* The same stack: the newest user thread on it. */
  CHECK_EQ(tm_ut_lookup(ctx_copy + 8, a_lo + 8), a2);

  /* Another ucontext_t on a2's stack (a pooled stack): a2 cannot resume. */
  uint32_t c = tm_ut_make(ctx_c, fn_a, a_lo, a_hi, 0, 8, 4000, retired);
  CHECK_EQ(c, 4);
  CHECK_EQ(retired[0], 0);
  CHECK_EQ(retired[1], a2);
  /* A stack elsewhere retires nothing. */
  uint32_t d = tm_ut_make(ctx_d, fn_a, b_lo, b_lo + 2048, 0, 8, 5000, retired);
  CHECK_EQ(d, 5);
  CHECK_EQ(retired[0], 0);
  CHECK_EQ(retired[1], 0);
  return 0;
}
