/* Stacks unwound by the modules' .eh_frame (cfi.h), not libunwind: no
 * library in the target, no per-thread cache to map and unmap, no system
 * call on the thread's own stack. */
#include "unwind.h"

#include "cfi.h"
#include "sites.h"
#include "stackscan.h"
#include "userthreads.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define TM_UNWIND_MAX 24
#define TM_UNWIND_INTERVAL_NS 1000000u
#define FOREIGN_COPY_BYTES 32768

static TM_TLS __thread uint64_t next_capture_ns;
/* This thread's own stack, found at its first unwind; hi == 1: unknown. */
static TM_TLS __thread uintptr_t stack_lo, stack_hi;

/* A stack that is neither the thread's own nor its current user thread's
 * (an alternate signal stack, a context the probe did not see made) is
 * copied first, into one buffer shared by all threads. */
static unsigned char foreign_copy[FOREIGN_COPY_BYTES];
static atomic_flag foreign_busy = ATOMIC_FLAG_INIT;

static void find_own_stack(void) {
  pthread_attr_t a;
  stack_hi = 1;
  if (pthread_getattr_np(pthread_self(), &a) != 0) return;
  void *addr;
  size_t size;
  if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr && size) {
    stack_lo = (uintptr_t)addr;
    stack_hi = (uintptr_t)addr + size;
  }
  pthread_attr_destroy(&a);
}

static int walk(tm_cfi_regs regs, const tm_stack_copy *st, void **pcs, int max) {
  tm_cfi_walk w = {0};
  int n = 0;
  /* The first step leaves tm_backtrace's own frame; every frame after is
   * known by a return address. */
  if (!tm_cfi_step(&regs, false, st, &w)) return 0;
  while (n < max && regs.ip) {
    pcs[n++] = (void *)regs.ip;
    if (!tm_cfi_step(&regs, true, st, &w)) break;
  }
  return n;
}

__attribute__((noinline)) int tm_backtrace(void **pcs, int max) {
  if (max <= 0) return 0;
  uintptr_t ip, sp, bp;
  /* Three registers at one point of this function, which its .eh_frame
   * row for that point describes. */
  __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
                   : "=r"(ip), "=r"(sp), "=r"(bp));
  tm_cfi_regs regs = {ip, sp, bp, true};
  if (!stack_hi) find_own_stack();
  if (sp >= stack_lo && sp < stack_hi) {
    tm_stack_copy own = {sp, (const uint8_t *)sp, stack_hi - sp};
    return walk(regs, &own, pcs, max);
  }
  /* A user thread's stack, as makecontext was given it. */
  const tm_uthread *u = tm_ut_cur ? tm_ut_get(tm_ut_cur) : NULL;
  if (tm_ut_holds(u, sp)) {
    tm_stack_copy user = {sp, (const uint8_t *)sp, u->stack_hi - sp};
    return walk(regs, &user, pcs, max);
  }
  if (atomic_flag_test_and_set_explicit(&foreign_busy, memory_order_acquire)) return 0;
  ssize_t got = tm_copy_stack(sp, foreign_copy, sizeof foreign_copy);
  int n = 0;
  if (got >= 8) {
    tm_stack_copy copy = {sp, foreign_copy, (size_t)got};
    n = walk(regs, &copy, pcs, max);
  }
  atomic_flag_clear_explicit(&foreign_busy, memory_order_release);
  return n;
}

void tm_unwind_first_contention(tm_thread *t, tm_object *o, const void *caller) {
  if (atomic_load_explicit(&o->has_stack, memory_order_relaxed) != 0) return;
  uint64_t now = tm_now_ns();
  if (now < next_capture_ns) return; /* try again at a later contention */
  uint32_t expected = 0;
  if (!atomic_compare_exchange_strong(&o->has_stack, &expected, 2)) return;
  next_capture_ns = now + TM_UNWIND_INTERVAL_NS;

  int saved = errno;
  t->guard++;
  void *pcs[TM_UNWIND_MAX];
  int n = tm_backtrace(pcs, TM_UNWIND_MAX);
  t->guard--;
  errno = saved;

  int first = 0;
  for (int i = 0; i < n; i++) {
    if (pcs[i] == caller) {
      first = i;
      break;
    }
  }
  uint32_t depth = 0;
  for (int i = first; i < n && depth < 8; i++)
    if (!tm_in_probe_code(pcs[i])) o->first_contention_stack[depth++] = pcs[i];
  o->stack_depth = depth;
  atomic_store_explicit(&o->has_stack, 1, memory_order_release);
}
