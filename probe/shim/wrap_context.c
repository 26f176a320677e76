/* User-thread switches: makecontext, swapcontext, setcontext, getcontext
 * (userthreads.h). glibc 2.36 on x86_64 has each of them in one version
 * only (GLIBC_2.2.5, `objdump -T libc.so.6`): exported unversioned like the
 * other single-implementation wrappers (libthreadmon.map) and resolved with
 * dlsym.
 *
 * What each costs the program: one TLS read, the address map's line, a TSC
 * timestamp and one ring event per switch, no lock, allocation or syscall
 * (the first makecontext maps the tables). errno, return values and the
 * signal mask are the real functions' (the bookkeeping runs before the real
 * call and keeps errno; the real call saves and restores the mask).
 *
 * Hazards:
 * - A context saved by swapcontext resumes inside our wrapper, maybe on
 *   another LWP: after the real call nothing may use what was read before
 *   it (tm_thread, TLS addresses): the failure path re-reads everything in
 *   a function of its own.
 * - getcontext returns twice (like setjmp): a C wrapper's frame would be
 *   gone when setcontext comes back to it. Ours is a few instructions of
 *   assembly that note the context and jump to the real one, which then
 *   saves the program's own frame and return address.
 * - A signal handler that switches context while this LWP is inside our
 *   bookkeeping finds the guard set and passes straight through: that
 *   switch is not seen, and the LWP's user thread is the last one seen
 *   until its next switch. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <ucontext.h>

#include "observe.h"
#include "real.h"
#include "userthreads.h"
#include "wrap.h"

static inline uintptr_t sp_of(const ucontext_t *ucp) {
#if defined(__x86_64__)
  return (uintptr_t)ucp->uc_mcontext.gregs[REG_RSP];
#else
  (void)ucp;
  return 0; /* found by address only */
#endif
}

/* The switch to `to` did not happen (the real call failed): the LWP is back
 * in `from`. Out of line: it runs after the real call, and must read the
 * thread's record afresh. */
__attribute__((noinline)) static void switch_failed(uint32_t to, uint32_t from) {
  int err = errno;
  tm_thread *t = tm_observer();
  if (t && (to || from)) tm_push_event(t, TM_EV_USER_SWITCH, from, to, tm_wait_clock());
  tm_ut_cur = from;
  errno = err;
}

/* Before a switch to ucp: the event, and which user thread this LWP runs
 * next. oucp: where the current one is saved (NULL for setcontext); now:
 * the wrapper's entry (read before the lookups: the program's clock just
 * before its call and ours must not have the lookups between them, where a
 * preemption would be the leaving user thread's time to one and not the
 * other: a CI run's 8.7 ms). */
static inline void switch_begin(tm_thread *t, uint64_t now, ucontext_t *oucp, const ucontext_t *ucp,
                                uint32_t *from, uint32_t *to) {
  /* Nothing here sets errno (no syscall; the table's slow paths keep it). */
  t->guard++;
  *from = tm_ut_cur;
  *to = tm_ut_lookup(ucp, sp_of(ucp));
  if (oucp) tm_ut_note(oucp, *from);
  /* Between two contexts of the LWP's own (setjmp-like uses): nothing. */
  if (*from || *to) tm_push_event(t, TM_EV_USER_SWITCH, *to, *from, now);
  tm_ut_cur = *to;
  t->guard--;
}

TM_EXPORT int swapcontext(ucontext_t *oucp, const ucontext_t *ucp) {
  tm_thread *t = tm_observer();
  if (!t) return tm_real.swapcontext(oucp, ucp);
  const uint64_t now = tm_wait_clock();
  uint32_t from, to;
  switch_begin(t, now, oucp, ucp, &from, &to);
  int rc = tm_real.swapcontext(oucp, ucp);
  /* Here: resumed (perhaps much later, perhaps on another LWP), or failed. */
  if (TM_UNLIKELY(rc != 0)) switch_failed(to, from);
  return rc;
}

TM_EXPORT int setcontext(const ucontext_t *ucp) {
  tm_thread *t = tm_observer();
  if (!t) return tm_real.setcontext(ucp);
  const uint64_t now = tm_wait_clock();
  uint32_t from, to;
  switch_begin(t, now, NULL, ucp, &from, &to);
  int rc = tm_real.setcontext(ucp); /* returns only when it failed */
  switch_failed(to, from);
  return rc;
}

/* getcontext, step one (called by the assembly below with the program's
 * ucp): remember whose context is saved there. Keeps errno. */
TM_HIDDEN void *tm_getcontext_real;
TM_HIDDEN void tm_ut_getcontext_note(const ucontext_t *ucp);
void tm_ut_getcontext_note(const ucontext_t *ucp) {
  tm_real_ensure();
  __builtin_memcpy(&tm_getcontext_real, &tm_real.getcontext, sizeof tm_getcontext_real);
  tm_thread *t = tm_observer_fast();
  if (t && tm_session_active()) tm_ut_note(ucp, tm_ut_cur);
}

#if defined(__x86_64__)
/* The stack is the program's again at the jump: the real getcontext saves
 * its caller's frame. The push keeps ucp and aligns the call. */
__asm__(".text\n"
        ".globl getcontext\n"
        ".type getcontext, @function\n"
        "getcontext:\n"
        "  .cfi_startproc\n"
        "  endbr64\n"
        "  pushq %rdi\n"
        "  .cfi_adjust_cfa_offset 8\n"
        "  call tm_ut_getcontext_note\n"
        "  popq %rdi\n"
        "  .cfi_adjust_cfa_offset -8\n"
        "  jmp *tm_getcontext_real(%rip)\n"
        "  .cfi_endproc\n"
        ".size getcontext, .-getcontext\n");
#endif

/* Every observed makecontext with up to 5 arguments runs its function
 * through here (id first, then the program's arguments, all in registers
 * as glibc passes them): when the function returns the user thread is done,
 * and the LWP goes on to uc_link (glibc switches there internally, where no
 * wrapper sees it). */
static void ut_trampoline(long id, long a0, long a1, long a2, long a3, long a4) {
  const tm_uthread *u = tm_ut_get((uint32_t)id);
  void (*fn)(long, long, long, long, long);
  __builtin_memcpy(&fn, &u->fn, sizeof fn);
  uintptr_t link = u->link;
  fn(a0, a1, a2, a3, a4);
  tm_thread *t = tm_observer();
  if (!t) return;
  const uint64_t now = tm_wait_clock(); /* before the lookup (switch_begin) */
  t->guard++;
  const ucontext_t *next = (const ucontext_t *)link;
  uint32_t to = next ? tm_ut_lookup(next, sp_of(next)) : 0;
  tm_push_event(t, TM_EV_USER_DONE, to, (uint32_t)id, now);
  tm_ut_cur = to;
  t->guard--;
}

#define TM_MAKE_ARGS 16 /* arguments passed on to the real makecontext */

TM_EXPORT void makecontext(ucontext_t *ucp, void (*fn)(void), int argc, ...) {
  long a[TM_MAKE_ARGS] = {0};
  va_list ap;
  va_start(ap, argc);
  for (int i = 0; i < argc && i < TM_MAKE_ARGS; i++) a[i] = va_arg(ap, long);
  va_end(ap);
  tm_thread *t = argc >= 0 && argc <= 5 ? tm_observer() : NULL;
  if (t) {
    t->guard++;
    int saved = errno;
    uint32_t retired[2];
    uint64_t now = tm_wait_clock();
    uintptr_t lo = (uintptr_t)ucp->uc_stack.ss_sp;
    void *f;
    __builtin_memcpy(&f, &fn, sizeof f);
    uint32_t id = tm_ut_make(ucp, f, lo, lo + ucp->uc_stack.ss_size, (uintptr_t)ucp->uc_link,
                             t->tid, now, retired);
    for (int i = 0; i < 2; i++)
      if (retired[i]) tm_push_event(t, TM_EV_USER_RETIRED, 0, retired[i], now);
    errno = saved;
    t->guard--;
    if (id) {
      void (*tramp)(void);
      void (*full)(long, long, long, long, long, long) = ut_trampoline;
      __builtin_memcpy(&tramp, &full, sizeof tramp);
      tm_real.makecontext(ucp, tramp, argc + 1, (long)id, a[0], a[1], a[2], a[3], a[4]);
      return;
    }
  } else {
    tm_real_ensure();
  }
  /* Unobserved, or more arguments than the trampoline takes: the program's
   * call as it was (glibc reads argc of them; at most TM_MAKE_ARGS). */
  tm_real.makecontext(ucp, fn, argc, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9],
                      a[10], a[11], a[12], a[13], a[14], a[15]);
}
