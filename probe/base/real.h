/* The real implementations behind every interposed function, resolved once.
 *
 * Most functions are looked up with dlsym(RTLD_NEXT). Where glibc keeps two
 * implementations of one name (pthread_cond_* at GLIBC_2.3.2 and the old
 * GLIBC_2.2.5 ABI, the *_setaffinity* pair at 2.3.4/2.3.3) each exported
 * version of our wrapper forwards to the matching one, found with dlvsym. */
#ifndef THREADMON_REAL_H
#define THREADMON_REAL_H

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <ucontext.h>

#include "probe.h"

#define TM_NORETURN __attribute__((noreturn))

typedef int (*tm_main_fn)(int, char **, char **);

/* X(return type, field, parameter list) */
#define TM_REAL_FUNCS(X)                                                                       \
  X(int, pthread_create, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))     \
  X(int, thrd_create, (thrd_t *, thrd_start_t, void *))                                        \
  X(int, pthread_join, (pthread_t, void **))                                                   \
  X(int, pthread_tryjoin_np, (pthread_t, void **))                                             \
  X(int, pthread_timedjoin_np, (pthread_t, void **, const struct timespec *))                  \
  X(int, pthread_clockjoin_np, (pthread_t, void **, clockid_t, const struct timespec *))       \
  X(int, pthread_detach, (pthread_t))                                                          \
  X(int, pthread_cancel, (pthread_t))                                                          \
  X(int, pthread_mutex_lock, (pthread_mutex_t *))                                              \
  X(int, pthread_mutex_trylock, (pthread_mutex_t *))                                           \
  X(int, pthread_mutex_timedlock, (pthread_mutex_t *, const struct timespec *))                \
  X(int, pthread_mutex_clocklock, (pthread_mutex_t *, clockid_t, const struct timespec *))     \
  X(int, pthread_mutex_unlock, (pthread_mutex_t *))                                            \
  X(int, pthread_cond_clockwait,                                                               \
    (pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *))                 \
  X(int, pthread_rwlock_rdlock, (pthread_rwlock_t *))                                          \
  X(int, pthread_rwlock_tryrdlock, (pthread_rwlock_t *))                                       \
  X(int, pthread_rwlock_timedrdlock, (pthread_rwlock_t *, const struct timespec *))            \
  X(int, pthread_rwlock_clockrdlock, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
  X(int, pthread_rwlock_wrlock, (pthread_rwlock_t *))                                          \
  X(int, pthread_rwlock_trywrlock, (pthread_rwlock_t *))                                       \
  X(int, pthread_rwlock_timedwrlock, (pthread_rwlock_t *, const struct timespec *))            \
  X(int, pthread_rwlock_clockwrlock, (pthread_rwlock_t *, clockid_t, const struct timespec *)) \
  X(int, pthread_rwlock_unlock, (pthread_rwlock_t *))                                          \
  X(int, pthread_barrier_wait, (pthread_barrier_t *))                                          \
  X(int, pthread_spin_lock, (pthread_spinlock_t *))                                            \
  X(int, pthread_spin_trylock, (pthread_spinlock_t *))                                         \
  X(int, pthread_spin_unlock, (pthread_spinlock_t *))                                          \
  X(int, sem_wait, (sem_t *))                                                                  \
  X(int, sem_trywait, (sem_t *))                                                               \
  X(int, sem_timedwait, (sem_t *, const struct timespec *))                                    \
  X(int, sem_clockwait, (sem_t *, clockid_t, const struct timespec *))                         \
  X(int, sem_post, (sem_t *))                                                                  \
  X(int, pthread_mutex_init, (pthread_mutex_t *, const pthread_mutexattr_t *))                 \
  X(int, pthread_rwlock_init, (pthread_rwlock_t *, const pthread_rwlockattr_t *))              \
  X(int, pthread_spin_init, (pthread_spinlock_t *, int))                                       \
  X(int, pthread_barrier_init, (pthread_barrier_t *, const pthread_barrierattr_t *, unsigned)) \
  X(int, sem_init, (sem_t *, int, unsigned))                                                   \
  X(int, sched_yield, (void))                                                                  \
  X(pid_t, fork, (void))                                                                       \
  X(int, pthread_setschedparam, (pthread_t, int, const struct sched_param *))                  \
  X(int, sched_setscheduler, (pid_t, int, const struct sched_param *))                         \
  X(int, sched_setparam, (pid_t, const struct sched_param *))                                  \
  X(int, setpriority, (__priority_which_t, id_t, int))                                         \
  X(int, pthread_setconcurrency, (int))                                                        \
  X(int, pthread_setname_np, (pthread_t, const char *))                                        \
  X(int, prctl, (int, ...))                                                                    \
  X(int, nanosleep, (const struct timespec *, struct timespec *))                              \
  X(int, clock_nanosleep, (clockid_t, int, const struct timespec *, struct timespec *))        \
  X(int, usleep, (useconds_t))                                                                 \
  X(unsigned, sleep, (unsigned))                                                               \
  X(int, getcontext, (ucontext_t *))                                                           \
  X(int, setcontext, (const ucontext_t *))                                                     \
  X(int, swapcontext, (ucontext_t *, const ucontext_t *))                                      \
  X(void, makecontext, (ucontext_t *, void (*)(void), int, ...))                               \
  X(long, syscall, (long, ...))                                                                \
  X(pid_t, wait4, (pid_t, int *, int, struct rusage *))                                        \
  X(int, waitid, (idtype_t, id_t, siginfo_t *, int))                                           \
  X(int, __libc_start_main,                                                                    \
    (tm_main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *))

/* X(return type, field, symbol, version, parameter list) */
#define TM_REAL_VERSIONED(X)                                                                    \
  X(int, cond_wait, "pthread_cond_wait", "GLIBC_2.3.2", (pthread_cond_t *, pthread_mutex_t *)) \
  X(int, cond_wait_old, "pthread_cond_wait", "GLIBC_2.2.5",                                     \
    (pthread_cond_t *, pthread_mutex_t *))                                                      \
  X(int, cond_timedwait, "pthread_cond_timedwait", "GLIBC_2.3.2",                               \
    (pthread_cond_t *, pthread_mutex_t *, const struct timespec *))                             \
  X(int, cond_timedwait_old, "pthread_cond_timedwait", "GLIBC_2.2.5",                           \
    (pthread_cond_t *, pthread_mutex_t *, const struct timespec *))                             \
  X(int, cond_signal, "pthread_cond_signal", "GLIBC_2.3.2", (pthread_cond_t *))                 \
  X(int, cond_signal_old, "pthread_cond_signal", "GLIBC_2.2.5", (pthread_cond_t *))             \
  X(int, cond_broadcast, "pthread_cond_broadcast", "GLIBC_2.3.2", (pthread_cond_t *))           \
  X(int, cond_broadcast_old, "pthread_cond_broadcast", "GLIBC_2.2.5", (pthread_cond_t *))       \
  X(int, cond_init, "pthread_cond_init", "GLIBC_2.3.2",                                         \
    (pthread_cond_t *, const pthread_condattr_t *))                                             \
  X(int, cond_init_old, "pthread_cond_init", "GLIBC_2.2.5",                                     \
    (pthread_cond_t *, const pthread_condattr_t *))                                             \
  X(int, setaffinity, "pthread_setaffinity_np", "GLIBC_2.3.4",                                  \
    (pthread_t, size_t, const cpu_set_t *))                                                     \
  X(int, setaffinity_old, "pthread_setaffinity_np", "GLIBC_2.3.3", (pthread_t, cpu_set_t *))    \
  X(int, sched_setaffinity, "sched_setaffinity", "GLIBC_2.3.4", (pid_t, size_t, const cpu_set_t *)) \
  X(int, sched_setaffinity_old, "sched_setaffinity", "GLIBC_2.3.3", (pid_t, const cpu_set_t *))

#define TM_REAL_FIELD(ret, name, args) ret(*name) args;
#define TM_REAL_VFIELD(ret, name, sym, ver, args) ret(*name) args;

typedef struct tm_real_fns {
  TM_REAL_FUNCS(TM_REAL_FIELD)
  TM_REAL_VERSIONED(TM_REAL_VFIELD)
  TM_NORETURN void (*pthread_exit)(void *);
  TM_NORETURN void (*exit)(int);
  TM_NORETURN void (*_exit)(int);
} tm_real_fns;

/* Resolved by the session's start (life/session.c: before the program's
 * main, or for a lazy image at its first wrapped call or session). Until
 * tm_real_init ran, the unlock and post pointers (called without any
 * check on their hot paths) point to stubs that resolve first, and syscall
 * to one that makes the system call itself (no dlsym: a signal handler may
 * call it, as glibc's); every other pointer is NULL and its callers go
 * through tm_real_ensure/tm_observer. */
extern tm_real_fns tm_real TM_HIDDEN;
extern _Atomic int tm_real_ready TM_HIDDEN;

/* Resolves everything (idempotent, thread-safe). Exits with one line on
 * stderr when a function cannot be found: forwarding to NULL would crash
 * the program later and less clearly. */
TM_HIDDEN void tm_real_init(void);

/* Writes LINE (one line, LEN bytes) to stderr and ends the process with
 * status 127 at once, without calling anything the probe interposes. */
TM_HIDDEN TM_NORETURN void tm_real_missing(const char *line, size_t len);

/* A function of a library the program may not load (Boost.Context's
 * jump_fcontext): dlsym(RTLD_NEXT), NULL when absent. Never a tail call. */
TM_HIDDEN void *tm_real_optional(const char *name);

/* Resolves the one function at *slot (a field of tm_real) when it is not
 * yet: the entry points every image passes (__libc_start_main, exit,
 * _exit), so that a lazy image that ends without a thread never resolves
 * the rest. Exits like tm_real_init when it is missing. */
TM_HIDDEN void tm_real_need(void *slot, const char *name);

static inline void tm_real_ensure(void) {
  if (TM_UNLIKELY(!atomic_load_explicit(&tm_real_ready, memory_order_acquire)))
    tm_real_init();
}

#endif
