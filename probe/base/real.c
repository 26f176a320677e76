/* Resolution of the real functions (see real.h). */
#include "real.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int lazy_mutex_unlock(pthread_mutex_t *m) {
  tm_real_init();
  return tm_real.pthread_mutex_unlock(m);
}
static int lazy_rwlock_unlock(pthread_rwlock_t *l) {
  tm_real_init();
  return tm_real.pthread_rwlock_unlock(l);
}
static int lazy_spin_unlock(pthread_spinlock_t *s) {
  tm_real_init();
  return tm_real.pthread_spin_unlock(s);
}
static int lazy_sem_post(sem_t *s) {
  tm_real_init();
  return tm_real.sem_post(s);
}
/* glibc's syscall() before it is resolved: the same call, made here. */
static long raw_syscall(long nr, ...) {
  va_list ap;
  va_start(ap, nr);
  long a[6];
  for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
  va_end(ap);
  return tm_syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

tm_real_fns tm_real = {
    .pthread_mutex_unlock = lazy_mutex_unlock,
    .pthread_rwlock_unlock = lazy_rwlock_unlock,
    .pthread_spin_unlock = lazy_spin_unlock,
    .sem_post = lazy_sem_post,
    .syscall = raw_syscall,
};
_Atomic int tm_real_ready;

static _Atomic int resolving; /* 0 idle, 1 one thread is resolving */

/* Never inlined and never a tail call: dlsym(RTLD_NEXT) looks "next" from
 * the object that contains its return address, which must be this library
 * (a tail call from elsewhere would make it search from the caller). */
__attribute__((noinline)) static void resolve_one(void *slot, const char *name,
                                                  const char *version) {
  void *p = version ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
  if (!p) {
    char line[256];
    int n = snprintf(line, sizeof line, "threadmon: cannot find the real %s%s%s\n", name,
                     version ? "@" : "", version ? version : "");
    tm_real_missing(line, n > 0 ? ((size_t)n < sizeof line ? (size_t)n : sizeof line) : 0);
  }
  memcpy(slot, &p, sizeof p); /* object -> function pointer without a cast */
  __asm__ volatile("" ::: "memory");
}

void tm_real_missing(const char *line, size_t len) {
  /* Plain write(2) and the raw exit_group: stdio would take locks we may be
   * in the middle of, and _exit is our own wrapper, which would wait for the
   * resolution that failed. */
  if (len) {
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
  }
  for (;;) tm_syscall(SYS_exit_group, 127);
}

__attribute__((noinline)) void *tm_real_optional(const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  __asm__ volatile("" ::: "memory"); /* keeps dlsym from being a tail call */
  return p;
}

void tm_real_init(void) {
  if (atomic_load_explicit(&tm_real_ready, memory_order_acquire)) return;
  int expected = 0;
  if (!atomic_compare_exchange_strong(&resolving, &expected, 1)) {
    /* Another thread resolves; dlsym never calls back into our wrappers
     * (glibc's loader uses internal locks only), so this wait ends. */
    while (!atomic_load_explicit(&tm_real_ready, memory_order_acquire))
      __builtin_ia32_pause();
    return;
  }
#define TM_RESOLVE(ret, name, args) resolve_one(&tm_real.name, #name, NULL);
#define TM_RESOLVE_V(ret, name, sym, ver, args) resolve_one(&tm_real.name, sym, ver);
  TM_REAL_FUNCS(TM_RESOLVE)
  TM_REAL_VERSIONED(TM_RESOLVE_V)
  resolve_one(&tm_real.pthread_exit, "pthread_exit", NULL);
  resolve_one(&tm_real.exit, "exit", NULL);
  resolve_one(&tm_real._exit, "_exit", NULL);
  atomic_store_explicit(&tm_real_ready, 1, memory_order_release);
}

void tm_real_need(void *slot, const char *name) {
  void *p;
  memcpy(&p, slot, sizeof p);
  if (!p) resolve_one(slot, name, NULL);
}
