/* The initialisers: pthread_mutex_init, pthread_cond_init (both ABIs, as
 * wrap_cond.c), pthread_rwlock_init, pthread_spin_init,
 * pthread_barrier_init and sem_init. Each forwards to the real function,
 * then notes where the program made the object (core/madeat.h) so that a
 * heap object is named by it ("mutex made in make_table (db.c:40)").
 * Nothing else: an initialiser creates no sync object (one never used is
 * never described), and the lock and wait paths stay as they are.
 * Programs make their locks once, so this costs a lookup per object made. */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include "madeat.h"
#include "observe.h"
#include "real.h"
#include "wrap.h"

#define TM_SYMVER(local, name, version) __asm__(".symver " #local ", " #name version)

TM_SYMVER(tm_cond_init, pthread_cond_init, "@@GLIBC_2.3.2");
TM_SYMVER(tm_cond_init_old, pthread_cond_init, "@GLIBC_2.2.5");

/* The real call answered rc for obj, made by the call returning to caller.
 * The caller's errno stays as the real call left it (registering a thread
 * may make system calls). */
static int made(int rc, const void *obj, const void *caller) {
  if (rc != 0) return rc;
  int err = errno;
  if (tm_observer() != NULL) tm_made_at_note(obj, caller);
  errno = err;
  return rc;
}

TM_EXPORT int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a) {
  tm_real_ensure();
  return made(tm_real.pthread_mutex_init(m, a), m, TM_CALLER());
}

TM_EXPORT int tm_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
int tm_cond_init(pthread_cond_t *c, const pthread_condattr_t *a) {
  tm_real_ensure();
  return made(tm_real.cond_init(c, a), c, TM_CALLER());
}

TM_EXPORT int tm_cond_init_old(pthread_cond_t *c, const pthread_condattr_t *a);
int tm_cond_init_old(pthread_cond_t *c, const pthread_condattr_t *a) {
  tm_real_ensure();
  return made(tm_real.cond_init_old(c, a), c, TM_CALLER());
}

TM_EXPORT int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a) {
  tm_real_ensure();
  return made(tm_real.pthread_rwlock_init(l, a), l, TM_CALLER());
}

TM_EXPORT int pthread_spin_init(pthread_spinlock_t *s, int pshared) {
  tm_real_ensure();
  return made(tm_real.pthread_spin_init(s, pshared), (const void *)s, TM_CALLER());
}

TM_EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
                                   unsigned count) {
  tm_real_ensure();
  return made(tm_real.pthread_barrier_init(b, a, count), b, TM_CALLER());
}

TM_EXPORT int sem_init(sem_t *s, int pshared, unsigned value) {
  tm_real_ensure();
  return made(tm_real.sem_init(s, pshared, value), s, TM_CALLER());
}
