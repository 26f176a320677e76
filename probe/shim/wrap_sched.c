/* Scheduling attributes: after a successful real call, the target thread's
 * record gets the new name/policy/priority/nice/affinity and attr_version
 * is bumped so the sampler sends a ThreadAttr. Targets are the caller (pid
 * 0), a pthread_t, or a tid of ours; on Linux these calls are per thread.
 *
 * The *_setaffinity* pair has an old GLIBC_2.3.3 ABI (no size argument) at
 * its own address: exported and forwarded separately, like cond. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "observe.h"
#include "real.h"
#include "wrap.h"

_Atomic int tm_concurrency_hint;

#define TM_SYMVER(local, name, version) __asm__(".symver " #local ", " #name version)
TM_SYMVER(tm_pthread_setaffinity, pthread_setaffinity_np, "@@GLIBC_2.34");
TM_SYMVER(tm_pthread_setaffinity_234, pthread_setaffinity_np, "@GLIBC_2.3.4");
TM_SYMVER(tm_pthread_setaffinity_old, pthread_setaffinity_np, "@GLIBC_2.3.3");
TM_SYMVER(tm_sched_setaffinity, sched_setaffinity, "@@GLIBC_2.3.4");
TM_SYMVER(tm_sched_setaffinity_old, sched_setaffinity, "@GLIBC_2.3.3");

static void changed(tm_thread *t) {
  atomic_fetch_add_explicit(&t->attr_version, 1, memory_order_release);
  tm_thread_touch(t);
}

/* Record for a sched_* pid argument: 0 = the caller, else a tid of ours. */
static tm_thread *by_pid(tm_thread *self, pid_t pid) {
  return pid == 0 ? self : tm_thread_by_tid((uint32_t)pid);
}

static void set_affinity(tm_thread *t, size_t size, const cpu_set_t *set) {
  if (!t || !set) return;
  memset(t->affinity, 0, sizeof t->affinity);
  memcpy(t->affinity, set, size < sizeof t->affinity ? size : sizeof t->affinity);
  changed(t);
}

TM_EXPORT int tm_pthread_setaffinity(pthread_t th, size_t size, const cpu_set_t *set);
TM_EXPORT int tm_pthread_setaffinity_234(pthread_t th, size_t size, const cpu_set_t *set);
TM_EXPORT int tm_pthread_setaffinity_old(pthread_t th, cpu_set_t *set);
TM_EXPORT int tm_sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set);
TM_EXPORT int tm_sched_setaffinity_old(pid_t pid, const cpu_set_t *set);

int tm_pthread_setaffinity(pthread_t th, size_t size, const cpu_set_t *set) {
  tm_thread *self = tm_observer();
  int rc = tm_real.setaffinity(th, size, set);
  if (self && rc == 0) set_affinity(tm_thread_by_handle((uintptr_t)th), size, set);
  return rc;
}

/* GLIBC_2.3.4 and 2.34 are one function in glibc. */
int tm_pthread_setaffinity_234(pthread_t th, size_t size, const cpu_set_t *set) {
  return tm_pthread_setaffinity(th, size, set);
}

/* The old ABI: forwarded untouched (glibc decides the mask size there). */
int tm_pthread_setaffinity_old(pthread_t th, cpu_set_t *set) {
  tm_observer();
  return tm_real.setaffinity_old(th, set);
}

int tm_sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set) {
  tm_thread *self = tm_observer();
  int rc = tm_real.sched_setaffinity(pid, size, set);
  if (self && rc == 0) {
    int saved = errno;
    set_affinity(by_pid(self, pid), size, set);
    errno = saved;
  }
  return rc;
}

int tm_sched_setaffinity_old(pid_t pid, const cpu_set_t *set) {
  tm_observer();
  return tm_real.sched_setaffinity_old(pid, set);
}

TM_EXPORT int pthread_setschedparam(pthread_t th, int policy, const struct sched_param *param) {
  tm_thread *self = tm_observer();
  int rc = tm_real.pthread_setschedparam(th, policy, param);
  tm_thread *t = self && rc == 0 ? tm_thread_by_handle((uintptr_t)th) : NULL;
  if (t) {
    t->policy = policy & ~SCHED_RESET_ON_FORK;
    t->priority = param->sched_priority;
    changed(t);
  }
  return rc;
}

TM_EXPORT int sched_setscheduler(pid_t pid, int policy, const struct sched_param *param) {
  tm_thread *self = tm_observer();
  int rc = tm_real.sched_setscheduler(pid, policy, param);
  tm_thread *t = self && rc != -1 ? by_pid(self, pid) : NULL;
  if (t) {
    t->policy = policy & ~SCHED_RESET_ON_FORK;
    t->priority = param->sched_priority;
    changed(t);
  }
  return rc;
}

TM_EXPORT int sched_setparam(pid_t pid, const struct sched_param *param) {
  tm_thread *self = tm_observer();
  int rc = tm_real.sched_setparam(pid, param);
  tm_thread *t = self && rc == 0 ? by_pid(self, pid) : NULL;
  if (t) {
    t->priority = param->sched_priority;
    changed(t);
  }
  return rc;
}

TM_EXPORT int setpriority(__priority_which_t which, id_t who, int prio) {
  tm_thread *self = tm_observer();
  int rc = tm_real.setpriority(which, who, prio);
  tm_thread *t = self && rc == 0 && which == PRIO_PROCESS ? by_pid(self, (pid_t)who) : NULL;
  if (t) {
    /* The kernel clamps to [-20, 19]. */
    t->nice = prio < -20 ? -20 : prio > 19 ? 19 : prio;
    changed(t);
  }
  return rc;
}

TM_EXPORT int pthread_setname_np(pthread_t th, const char *name) {
  tm_thread *self = tm_observer();
  int rc = tm_real.pthread_setname_np(th, name);
  tm_thread *t = self && rc == 0 ? tm_thread_by_handle((uintptr_t)th) : NULL;
  if (t) {
    strncpy(t->name, name, TM_NAME_BYTES - 1);
    t->name[TM_NAME_BYTES - 1] = '\0';
    changed(t);
  } else if (self && (rc == 0 || rc == ENOENT) && strlen(name) < TM_NAME_BYTES) {
    /* The thread ended first (ENOENT: its /proc comm was gone; 0: it ended
     * just after): the program still meant it to have this name. */
    tm_thread_rename_ended((uintptr_t)th, name);
  }
  return rc;
}

/* Rust's std before 1.64 (Debian's 1.63 among them), and runtimes that name
 * a thread from inside it, call prctl(PR_SET_NAME) on themselves: the same
 * rename as pthread_setname_np. Every other option goes straight through.
 * glibc's prctl takes its four further arguments as unsigned longs. */
TM_EXPORT int prctl(int option, ...) {
  va_list ap;
  va_start(ap, option);
  unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
  unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
  va_end(ap);
  if (option != PR_SET_NAME) {
    tm_real_ensure();
    return tm_real.prctl(option, a2, a3, a4, a5);
  }
  tm_thread *self = tm_observer();
  int rc = tm_real.prctl(option, a2, a3, a4, a5);
  if (self && rc == 0) {
    /* The kernel keeps the first 15 bytes, as the record does. */
    strncpy(self->name, (const char *)a2, TM_NAME_BYTES - 1);
    self->name[TM_NAME_BYTES - 1] = '\0';
    changed(self);
  }
  return rc;
}

TM_EXPORT int pthread_setconcurrency(int level) {
  tm_observer();
  int rc = tm_real.pthread_setconcurrency(level);
  if (rc == 0) atomic_store_explicit(&tm_concurrency_hint, level, memory_order_relaxed);
  return rc;
}

/* Counted per thread; yielding does not change the thread's state. */
TM_EXPORT int sched_yield(void) {
  tm_thread *t = tm_observer();
  if (t) t->yields++;
  return tm_real.sched_yield();
}
