/* The kind of a futex wait, from the waiting thread's frames: which library
 * or runtime code made the call (pthread_mutex_lock, sem_wait, a C++20
 * semaphore, Rust's std Mutex, Go's runtime ...). A futex word alone does
 * not say; the functions on the stack do. */
#ifndef THREADMON_ATTACH_WAITKIND_H
#define THREADMON_ATTACH_WAITKIND_H

#include <stdint.h>

#include "elfsyms.h"

typedef enum tm_wait_kind {
  TM_WAIT_UNKNOWN = 0, /* a futex wait nothing on the stack explains */
  TM_WAIT_MUTEX,       /* glibc pthread_mutex_t (also std::mutex, C11 mtx_t) */
  TM_WAIT_COND,
  TM_WAIT_SEM,
  TM_WAIT_RWLOCK_READ,
  TM_WAIT_RWLOCK_WRITE,
  TM_WAIT_BARRIER,
  TM_WAIT_JOIN,
  TM_WAIT_INTERNAL, /* a glibc-internal lock (stdio, malloc, random) */
  TM_WAIT_CXX_SEMAPHORE,
  TM_WAIT_CXX_ATOMIC, /* std::atomic::wait, barrier, latch */
  TM_WAIT_RUST_MUTEX,
  TM_WAIT_RUST_RWLOCK,
  TM_WAIT_RUST_CONDVAR,
  TM_WAIT_GO_RUNTIME,
  TM_WAIT_RUST_CHANNEL, /* parked in a std::sync::mpsc/mpmc send or receive */
} tm_wait_kind;

typedef struct tm_wait_class {
  tm_wait_kind kind;
  const char *what; /* "pthread_mutex_lock", "C++ std::counting_semaphore" ... */
  int frame;        /* index of the frame that said so, -1 when none */
} tm_wait_class;

/* From frames pcs[0..n) (pcs[0] the exact PC, the rest return addresses). */
tm_wait_class tm_wait_classify(tm_symtabs *syms, const uintptr_t *pcs, int n);
/* The same from the frames' symbol names (NULL: a frame without one). */
tm_wait_class tm_wait_classify_names(const char *const *names, int n);

/* "mutex", "cond", "rust-mutex" ...: a short name for output. */
const char *tm_wait_kind_name(tm_wait_kind kind);

#endif
