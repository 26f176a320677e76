#include "unwind.h"

#include <errno.h>
#include <libunwind.h>
#include <string.h>

#define TM_UNWIND_MAX 24
#define TM_UNWIND_INTERVAL_NS 1000000u

static TM_TLS __thread uint64_t next_capture_ns;

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
  int n = unw_backtrace(pcs, TM_UNWIND_MAX);
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
