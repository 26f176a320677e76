/* C11 threads (<threads.h>): glibc makes thrd_create, mtx_lock, cnd_wait
 * and the rest call its pthread functions internally, past the exported
 * names this library interposes, so a C11 program's threads had no start
 * routine, its mutex and cond waits read as sleep, and its thrd_join as a
 * lock hidden in a library (a HIGH internal_lock finding). Each wrapper
 * does what glibc's does, through the POSIX wrappers' bodies
 * (posix_calls.h), and maps the result as glibc's thrd_err_map does. The
 * types are glibc's pthread ones underneath (mtx_t is a pthread_mutex_t,
 * cnd_t a pthread_cond_t, thrd_t a pthread_t). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <threads.h>

#include "posix_calls.h"
#include "wrap.h"

_Static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t), "mtx_t is a pthread_mutex_t");
_Static_assert(sizeof(cnd_t) == sizeof(pthread_cond_t), "cnd_t is a pthread_cond_t");
_Static_assert(sizeof(thrd_t) == sizeof(pthread_t), "thrd_t is a pthread_t");

static int thrd_result(int err) {
  switch (err) {
    case 0:
      return thrd_success;
    case ENOMEM:
      return thrd_nomem;
    case ETIMEDOUT:
      return thrd_timedout;
    case EBUSY:
      return thrd_busy;
    default:
      return thrd_error;
  }
}

TM_EXPORT int thrd_create(thrd_t *thr, thrd_start_t func, void *arg) {
  void *routine;
  __builtin_memcpy(&routine, &func, sizeof routine);
  return thrd_result(tm_thread_create((pthread_t *)thr, NULL, routine, arg, true));
}

TM_EXPORT int thrd_join(thrd_t thr, int *res) {
  void *ret;
  int rc = tm_thread_join((pthread_t)thr, &ret);
  if (rc == 0 && res) *res = (int)(uintptr_t)ret;
  return thrd_result(rc);
}

TM_EXPORT TM_NORETURN void thrd_exit(int res) {
  tm_thread_exit((void *)(uintptr_t)res);
}

TM_EXPORT int mtx_lock(mtx_t *m) {
  return thrd_result(tm_mutex_lock_at((pthread_mutex_t *)m, TM_CALLER()));
}

TM_EXPORT int mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict abstime) {
  return thrd_result(tm_mutex_timedlock_at((pthread_mutex_t *)m, abstime, TM_CALLER()));
}

TM_EXPORT int mtx_trylock(mtx_t *m) {
  return thrd_result(tm_mutex_trylock((pthread_mutex_t *)m));
}

TM_EXPORT int mtx_unlock(mtx_t *m) {
  return thrd_result(tm_mutex_unlock((pthread_mutex_t *)m));
}

TM_EXPORT int cnd_wait(cnd_t *c, mtx_t *m) {
  return thrd_result(
      tm_cond_wait_at((pthread_cond_t *)c, (pthread_mutex_t *)m, false, NULL, TM_CALLER()));
}

TM_EXPORT int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m,
                            const struct timespec *restrict abstime) {
  return thrd_result(
      tm_cond_wait_at((pthread_cond_t *)c, (pthread_mutex_t *)m, true, abstime, TM_CALLER()));
}

TM_EXPORT int cnd_signal(cnd_t *c) {
  return thrd_result(tm_cond_notify((pthread_cond_t *)c, false));
}

TM_EXPORT int cnd_broadcast(cnd_t *c) {
  return thrd_result(tm_cond_notify((pthread_cond_t *)c, true));
}
