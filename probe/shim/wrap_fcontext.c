/* User threads of Boost.Context (Boost.Fiber, folly fibers and others build
 * on it): make_fcontext, jump_fcontext, ontop_fcontext, exported (C
 * linkage, unversioned) by libboost_context.so. A program that links it
 * dynamically calls them through its PLT and reaches these wrappers first;
 * one that inlines or links it statically is not seen (docs/format.md,
 * "User threads").
 *
 * An fcontext_t is the stack pointer a context was suspended at (or, from
 * make_fcontext, the top of its new stack): which user thread a jump goes to
 * is the made stack that holds it, found through the address map (each
 * target noted there, so the next jump to the same place is one lookup) or
 * by scanning the made stacks. A function given to make_fcontext must never
 * return: Boost's (fiber_entry, callcc's context_entry) end with an
 * ontop_fcontext that hands the next context the fiber's record, kept just
 * above the made stack's top, for the function run on top to free the
 * stack; such a call ends its user thread (TM_RECORD_BYTES). make_fcontext
 * on a stack address already made (a pooled stack) retires the user thread
 * that had it, if nothing ended it.
 *
 * Same costs and hazards as wrap_context.c: one TLS read, the map, a TSC
 * stamp and one ring event per switch; the real call may resume much later
 * on another LWP, and nothing after it reads what came before (the
 * wrappers end in a tail call). Boost's functions never set errno, and
 * neither does the bookkeeping. */
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "config.h"
#include "observe.h"
#include "real.h"
#include "userthreads.h"
#include "wrap.h"

typedef struct tm_transfer {
  void *fctx;
  void *data;
} tm_transfer;

typedef void *(*make_fn)(void *, size_t, void (*)(tm_transfer));
typedef tm_transfer (*jump_fn)(void *, void *);
typedef tm_transfer (*ontop_fn)(void *, void *, tm_transfer (*)(tm_transfer));

/* Boost declares them in C++ headers only. */
TM_EXPORT void *make_fcontext(void *sp, size_t size, void (*fn)(tm_transfer));
TM_EXPORT tm_transfer jump_fcontext(void *to, void *vp);
TM_EXPORT tm_transfer ontop_fcontext(void *to, void *vp, tm_transfer (*fn)(tm_transfer));

static _Atomic(void *) real_make, real_jump, real_ontop;

/* The real function; resolved at start-up when the library is loaded
 * then, else on first use (a dlopened Boost). Called at all means the
 * program has it: its absence is a broken process, said in one line. */
static void *resolve(_Atomic(void *) *slot, const char *name) {
  void *p = atomic_load_explicit(slot, memory_order_acquire);
  if (TM_LIKELY(p != NULL)) return p;
  p = tm_real_optional(name);
  if (!p) {
    static const char line[] = "threadmon: cannot find the real Boost.Context function\n";
    tm_real_missing(line, sizeof line - 1);
  }
  atomic_store_explicit(slot, p, memory_order_release);
  return p;
}

/* On the caller's stack, before any fiber's: a lookup (a failed one
 * allocates its error) never runs on a small fiber stack. A lazy image
 * (life/session.c) does it at its first make_fcontext instead. */
static void resolve_all(void) {
  atomic_store(&real_make, tm_real_optional("make_fcontext"));
  atomic_store(&real_jump, tm_real_optional("jump_fcontext"));
  atomic_store(&real_ontop, tm_real_optional("ontop_fcontext"));
}

__attribute__((constructor(102))) static void fcontext_init(void) {
  if (!tm_config_lazy_image()) resolve_all();
}

/* Boost places a fiber's record (its function, its stack allocator)
 * between the top of the stack it gives make_fcontext and the end of the
 * allocation (1.74: 64 bytes above the top, under 4 KiB with the record),
 * and passes it to ontop_fcontext only to free the stack: an ontop_fcontext
 * from the running user thread with data in [top, top + TM_RECORD_BYTES) is
 * its end. resume_with passes a local of the fiber instead, below the top
 * (and, inlined at -O2, from as near the top as the end's own call: the
 * depth of the call says nothing). */
#define TM_RECORD_BYTES 4096

/* The LWP leaves its user thread for the context suspended at `to`;
 * kind: TM_EV_USER_SWITCH, or TM_EV_USER_DONE when it ends there. */
static inline void fcontext_switch(tm_thread *t, void *to, uint32_t kind) {
  const uint64_t now = tm_wait_clock(); /* before the lookup (wrap_context.c) */
  t->guard++;
  uint32_t from = tm_ut_cur;
  uint32_t id = tm_ut_lookup(to, (uintptr_t)to);
  tm_ut_note(to, id);
  if (from || id) tm_push_event(t, kind, id, from, now);
  tm_ut_cur = id;
  t->guard--;
}

TM_EXPORT void *make_fcontext(void *sp, size_t size, void (*fn)(tm_transfer)) {
  make_fn real;
  if (!atomic_load_explicit(&real_jump, memory_order_acquire)) resolve_all();
  void *p = resolve(&real_make, "make_fcontext");
  __builtin_memcpy(&real, &p, sizeof real);
  void *ctx = real(sp, size, fn);
  tm_thread *t = tm_observer();
  if (t && ctx) {
    t->guard++;
    uint64_t now = tm_wait_clock();
    uint32_t retired[2];
    void *f;
    __builtin_memcpy(&f, &fn, sizeof f);
    /* sp is the top: Boost's stacks grow down from it. */
    tm_ut_make(ctx, f, (uintptr_t)sp - size, (uintptr_t)sp, 0, t->tid, now, retired);
    for (int i = 0; i < 2; i++)
      if (retired[i]) tm_push_event(t, TM_EV_USER_RETIRED, 0, retired[i], now);
    t->guard--;
  }
  return ctx;
}

TM_EXPORT tm_transfer jump_fcontext(void *to, void *vp) {
  jump_fn real;
  void *p = resolve(&real_jump, "jump_fcontext");
  __builtin_memcpy(&real, &p, sizeof real);
  tm_thread *t = tm_observer();
  if (t) fcontext_switch(t, to, TM_EV_USER_SWITCH);
  return real(to, vp);
}

TM_EXPORT tm_transfer ontop_fcontext(void *to, void *vp, tm_transfer (*fn)(tm_transfer)) {
  ontop_fn real;
  void *p = resolve(&real_ontop, "ontop_fcontext");
  __builtin_memcpy(&real, &p, sizeof real);
  tm_thread *t = tm_observer();
  if (t) {
    const tm_uthread *u = tm_ut_get(tm_ut_cur);
    const uintptr_t data = (uintptr_t)vp;
    const bool ends = u && data >= u->stack_hi && data - u->stack_hi < TM_RECORD_BYTES;
    fcontext_switch(t, to, ends ? TM_EV_USER_DONE : TM_EV_USER_SWITCH);
  }
  return real(to, vp, fn);
}
