/* syscall(): glibc's generic system call, interposed for the futex waits
 * that programs build their own locks on (InnoDB, Rust's std, parking_lot,
 * abseil, folly, jemalloc, libstdc++'s atomic waits). Every other number
 * passes straight through: one compare per number and a tail jump to
 * glibc's syscall with the caller's registers untouched.
 *
 * A wait (FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_WAIT_REQUEUE_PI; the PI locks
 * FUTEX_LOCK_PI and FUTEX_LOCK_PI2; SYS_futex_waitv) is BLOCKED_FUTEX on a
 * KIND_FUTEX object keyed by the futex word for the whole call, like any
 * wrapped wait (contention, wait time, call site, first stack); a PI lock's
 * wait names its holder, whose tid the word holds. A wake
 * (FUTEX_WAKE*, FUTEX_UNLOCK_PI, the requeues) names its caller on the
 * word's object, if it has one, so the waits it ends say who woke them.
 * Waits made with a raw syscall instruction (Go's runtime, glibc's own
 * locks) never come here: core/hidden.c samples those.
 *
 * The real syscall is async-signal-safe, so this one must be: before the
 * resolution the pointer is real.c's stub, which makes the call itself; a
 * wake only peeks at the object table (lock-free, no allocation); and a
 * wait sets the thread's guard around its bookkeeping, so that a handler
 * interrupting that passes straight through. Not around the call itself: a
 * handler that left it by siglongjmp would leave the guard set for good.
 * A handler's own wait inside the call is recorded (the thread then reads
 * as running from its end to the outer call's). */
#include <linux/futex.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "observe.h"
#include "real.h"
#include "wrap.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#define FUTEX_COMMAND(op) ((int)(op) & ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))

/* linux/futex.h's struct futex_waitv (kernel 5.16), for older headers. */
typedef struct waitv_entry {
  uint64_t val;
  uint64_t uaddr;
  uint32_t flags;
  uint32_t reserved;
} waitv_entry;

/* Exported as "syscall" with six long arguments after the number instead of
 * glibc's variadic prototype: on x86-64 and AArch64 Linux a variadic
 * call passes integer arguments exactly as a fixed one does (registers,
 * then the stack), so the arguments glibc's syscall would read are these,
 * and the pass-through is a tail call with all of them where they were.
 * Unversioned, like every wrapper of a name glibc implements once
 * (libthreadmon.map): it binds syscall@GLIBC_2.2.5 (x86-64) and
 * syscall@GLIBC_2.17 (AArch64) alike. */
TM_EXPORT long tm_syscall_hook(long nr, long a1, long a2, long a3, long a4, long a5,
                               long a6) __asm__("syscall");

static long pass(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  return tm_real.syscall(nr, a1, a2, a3, a4, a5, a6);
}

/* The calling thread's record when this call should be observed. Before
 * the real functions are resolved (another library's constructor, or a
 * signal handler then) it passes through: resolving calls dlsym. */
static tm_thread *futex_observer(void) {
  tm_thread *t = tm_observer_fast();
  if (TM_LIKELY(t != NULL)) return tm_session_active() ? t : NULL;
  if (!atomic_load_explicit(&tm_real_ready, memory_order_acquire)) return NULL;
  return tm_observer();
}

/* A wait on word: BLOCKED_FUTEX for the call's length. pi: a PI lock,
 * which the thread holds when the call returns 0, held at the call by
 * holder (0: unknown). errno and the result are the real call's. */
static long futex_wait(tm_thread *t, const void *word, bool pi, uint32_t holder,
                       const void *caller, long nr, long a1, long a2, long a3, long a4, long a5,
                       long a6) {
  tm_object *o = tm_object_lookup(word, TM_KIND_FUTEX, 0);
  tm_wait w;
  t->guard++;
  tm_wait_begin(&w, t, o, TM_STATE_BLOCKED_FUTEX, holder, caller);
  t->guard--;
  long rc = tm_real.syscall(nr, a1, a2, a3, a4, a5, a6);
  int err = errno;
  t->guard++;
  /* Woken (waitv: the index of the word that woke it) or the lock taken:
   * the last thread that woke or unlocked the word; a timeout, a signal or
   * a value that had changed (EAGAIN): nobody. */
  if (rc >= 0)
    tm_wait_released_by_object(&w);
  else
    w.releaser_tid = 0;
  tm_wait_end(&w, rc != 0 ? TM_ACQ_NONE : pi ? TM_ACQ_EXCLUSIVE : TM_ACQ_SHARED);
  /* No hold is timed: an uncontended unlock never enters the kernel, so
   * the hold would not end. */
  t->guard--;
  errno = err;
  return rc;
}

/* A wake: the caller is the releaser of the waits it ends. Only a word
 * already waited on has an object (a wake never adds one). */
static void note_waker(tm_thread *t, long word) {
  tm_object *o = tm_object_peek((const void *)word);
  if (o) atomic_store_explicit(&o->releaser_tid, t->tid, memory_order_relaxed);
}

/* n bytes the program passed a pointer to, read without trusting it: a
 * bad one is the real call's EFAULT, not our crash. Only on a path that
 * enters the kernel to wait anyway. False when they cannot be read. */
static bool peek(const void *at, void *out, size_t n) {
  struct iovec local = {out, n};
  struct iovec remote = {(void *)(uintptr_t)at, n};
  long pid = tm_raw_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0);
  return tm_raw_syscall6(SYS_process_vm_readv, pid, (long)&local, 1, (long)&remote, 1, 0) ==
         (long)n;
}

/* futex_waitv's first word (the object its waits count on); 0 when it
 * cannot be read. */
static uint64_t waitv_first_word(long waiters) {
  uint64_t word = 0;
  return peek((const char *)waiters + offsetof(waitv_entry, uaddr), &word, sizeof word) ? word : 0;
}

/* A PI lock's holder: the kernel's protocol keeps the owner's tid in the
 * word's low bits (FUTEX_TID_MASK), which the uncontended take wrote
 * without entering the kernel. 0 when free or unreadable. */
static uint32_t pi_holder(long word) {
  uint32_t v = 0;
  return peek((const void *)word, &v, sizeof v) ? v & FUTEX_TID_MASK : 0;
}

/* SYS_futex or SYS_futex_waitv. Out of line: the pass-through path of the
 * hook saves nothing for it. */
__attribute__((noinline)) static long futex_syscall(long nr, long a1, long a2, long a3, long a4,
                                                    long a5, long a6, const void *caller) {
  tm_thread *t = futex_observer();
  if (!t) return pass(nr, a1, a2, a3, a4, a5, a6);
  if (nr == SYS_futex_waitv) {
    uint64_t word = a1 && a2 > 0 ? waitv_first_word(a1) : 0;
    if (!word) return pass(nr, a1, a2, a3, a4, a5, a6);
    return futex_wait(t, (const void *)(uintptr_t)word, false, 0, caller, nr, a1, a2, a3, a4, a5,
                      a6);
  }
  switch (FUTEX_COMMAND(a2)) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET:
    case FUTEX_WAIT_REQUEUE_PI:
      if (!a1) break;
      return futex_wait(t, (const void *)a1, false, 0, caller, nr, a1, a2, a3, a4, a5, a6);
    case FUTEX_LOCK_PI:
    case FUTEX_LOCK_PI2:
      if (!a1) break;
      return futex_wait(t, (const void *)a1, true, pi_holder(a1), caller, nr, a1, a2, a3, a4, a5,
                        a6);
    case FUTEX_UNLOCK_PI:
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE:
    case FUTEX_CMP_REQUEUE_PI:
      /* A requeued waiter's wait stays on the word it began on: its waker
       * is noted there too. */
      note_waker(t, a1);
      break;
    case FUTEX_WAKE_OP:
      note_waker(t, a1);
      note_waker(t, a5);
      break;
    default:
      break;
  }
  return pass(nr, a1, a2, a3, a4, a5, a6);
}

long tm_syscall_hook(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  if (TM_UNLIKELY(nr == SYS_futex || nr == SYS_futex_waitv))
    return futex_syscall(nr, a1, a2, a3, a4, a5, a6, TM_CALLER());
  return tm_real.syscall(nr, a1, a2, a3, a4, a5, a6);
}
