/* The POSIX wrappers' bodies, for other wrappers to call directly (C11's
 * mtx_*, cnd_* and thrd_*, wrap_c11.c): never through the exported names,
 * which would go back through the symbol lookup. The ones that take a
 * caller account a wait at that call site (the exported function's own
 * return address). */
#ifndef THREADMON_POSIX_CALLS_H
#define THREADMON_POSIX_CALLS_H

#include <pthread.h>
#include <stdbool.h>
#include <time.h>

#include "real.h"
#include "wrap.h"

TM_HIDDEN int tm_mutex_lock_at(pthread_mutex_t *m, const void *caller);
TM_HIDDEN int tm_mutex_timedlock_at(pthread_mutex_t *m, const struct timespec *abstime,
                                    const void *caller);
/* Aliases of pthread_mutex_trylock and pthread_mutex_unlock (nothrow, as
 * glibc declares those). */
TM_HIDDEN int tm_mutex_trylock(pthread_mutex_t *m) __attribute__((nothrow));
TM_HIDDEN int tm_mutex_unlock(pthread_mutex_t *m) __attribute__((nothrow));

/* The current (GLIBC_2.3.2) implementation; abstime on CLOCK_REALTIME when
 * timed. */
TM_HIDDEN int tm_cond_wait_at(pthread_cond_t *c, pthread_mutex_t *m, bool timed,
                              const struct timespec *abstime, const void *caller);
/* pthread_cond_signal (all: broadcast) of the current implementation. */
TM_HIDDEN int tm_cond_notify(pthread_cond_t *c, bool all);

/* routine_ptr: a POSIX start routine, or with c11 a C11 one (int (*)(void *)),
 * whose int the thread's pointer result carries as glibc's thrd_create does. */
TM_HIDDEN int tm_thread_create(pthread_t *th, const pthread_attr_t *attr, void *routine_ptr,
                               void *arg, bool c11);
TM_HIDDEN int tm_thread_join(pthread_t th, void **ret);
TM_HIDDEN TM_NORETURN void tm_thread_exit(void *ret);

#endif
