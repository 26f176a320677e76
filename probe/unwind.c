/* The local-only API: this process's own stack, no remote address spaces. */
#define UNW_LOCAL_ONLY
#include "unwind.h"

#include <errno.h>
#include <libunwind.h>
#include <string.h>

#define TM_UNWIND_STEPPED 16

#define TM_UNWIND_MAX 24
#define TM_UNWIND_INTERVAL_NS 1000000u

static TM_TLS __thread uint64_t next_capture_ns;
static TM_TLS __thread uint32_t unwinds_done;

/* Both ways give the same addresses: the first is the return address into
 * our caller (unw_backtrace's first, into this function, is dropped). */
__attribute__((noinline)) int tm_backtrace(void **pcs, int max) {
  if (max <= 0) return 0;
  if (++unwinds_done > TM_UNWIND_STEPPED) {
    int n = unw_backtrace(pcs, max);
    if (n <= 0) return 0;
    memmove(pcs, pcs + 1, (size_t)(n - 1) * sizeof *pcs);
    return n - 1;
  }
  unw_context_t uc;
  unw_cursor_t cursor;
  if (unw_getcontext(&uc) != 0 || unw_init_local(&cursor, &uc) != 0) return 0;
  int n = 0;
  while (n < max && unw_step(&cursor) > 0) {
    unw_word_t ip;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
    pcs[n++] = (void *)ip;
  }
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
  for (int i = first; i < n && depth < 8; i++) o->first_contention_stack[depth++] = pcs[i];
  o->stack_depth = depth;
  atomic_store_explicit(&o->has_stack, 1, memory_order_release);
}
