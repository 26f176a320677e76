#ifndef THREADMON_RAWSYSCALL_H
#define THREADMON_RAWSYSCALL_H

#include <errno.h>
#include <sys/syscall.h>

/* The probe's own system calls. glibc's syscall() is a name the probe
 * exports (shim/wrap_futex.c), and so are nanosleep and sched_yield: a call
 * to them would land in its own wrappers (probe/tests/check_selfcalls.py).
 * tm_raw_syscall6 returns the kernel's answer (-errno on failure);
 * tm_syscall(nr, ...) is syscall() with up to six arguments: -1 and errno
 * on failure. Both are async-signal-safe and need nothing resolved. */
static inline long tm_raw_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
#if defined(__x86_64__)
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
#elif defined(__aarch64__)
  register long x8 __asm__("x8") = nr;
  register long x0 __asm__("x0") = a1;
  register long x1 __asm__("x1") = a2;
  register long x2 __asm__("x2") = a3;
  register long x3 __asm__("x3") = a4;
  register long x4 __asm__("x4") = a5;
  register long x5 __asm__("x5") = a6;
  __asm__ volatile("svc 0"
                   : "+r"(x0)
                   : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                   : "memory", "cc");
  return x0;
#else
#error "tm_raw_syscall6: add this architecture's system call instruction"
#endif
}

static inline long tm_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  long r = tm_raw_syscall6(nr, a1, a2, a3, a4, a5, a6);
  if (__builtin_expect((unsigned long)r > -4096UL, 0)) {
    errno = (int)-r;
    return -1;
  }
  return r;
}
#define TM_SYSCALL_PICK(nr, a, b, c, d, e, f, ...) \
  tm_syscall6((nr), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define tm_syscall(...) TM_SYSCALL_PICK(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)

#endif
