/* Wait kinds from symbol names (waitkind.h). */
#include "waitkind.h"

#include <stdbool.h>
#include <string.h>

/* Frames looked at: the futex call sits a few frames in (syscall, the
 * runtime's wait helper, its lock loop); the caller that says what the
 * object is comes within the next few. */
#define CLASSIFY_DEPTH 10

typedef struct pattern {
  const char *needle; /* substring of the symbol, mangled or not */
  tm_wait_kind kind;
  const char *what;
  bool weak; /* a generic helper: only when nothing stronger is found */
} pattern;

/* Substrings of mangled names too: "_ZN3std3sys...5futex5Mutex14lock_contended",
 * "_ZNSt8__detail15__platform_wait". Within a frame the first that matches. */
static const pattern patterns[] = {
    /* glibc */
    {"pthread_mutex_cond_lock", TM_WAIT_MUTEX, "pthread_cond_wait (taking the mutex back)", false},
    {"pthread_mutex_lock", TM_WAIT_MUTEX, "pthread_mutex_lock", false},
    {"pthread_mutex_timedlock", TM_WAIT_MUTEX, "pthread_mutex_timedlock", false},
    {"pthread_mutex_clocklock", TM_WAIT_MUTEX, "pthread_mutex_clocklock", false},
    {"mtx_lock", TM_WAIT_MUTEX, "mtx_lock", false},
    {"mtx_timedlock", TM_WAIT_MUTEX, "mtx_timedlock", false},
    {"pthread_cond_wait", TM_WAIT_COND, "pthread_cond_wait", false},
    {"pthread_cond_timedwait", TM_WAIT_COND, "pthread_cond_timedwait", false},
    {"pthread_cond_clockwait", TM_WAIT_COND, "pthread_cond_clockwait", false},
    {"cnd_wait", TM_WAIT_COND, "cnd_wait", false},
    {"cnd_timedwait", TM_WAIT_COND, "cnd_timedwait", false},
    {"rwlock_rdlock", TM_WAIT_RWLOCK_READ, "pthread_rwlock_rdlock", false},
    {"rwlock_timedrdlock", TM_WAIT_RWLOCK_READ, "pthread_rwlock_timedrdlock", false},
    {"rwlock_clockrdlock", TM_WAIT_RWLOCK_READ, "pthread_rwlock_clockrdlock", false},
    {"rwlock_wrlock", TM_WAIT_RWLOCK_WRITE, "pthread_rwlock_wrlock", false},
    {"rwlock_timedwrlock", TM_WAIT_RWLOCK_WRITE, "pthread_rwlock_timedwrlock", false},
    {"rwlock_clockwrlock", TM_WAIT_RWLOCK_WRITE, "pthread_rwlock_clockwrlock", false},
    {"pthread_barrier_wait", TM_WAIT_BARRIER, "pthread_barrier_wait", false},
    {"pthread_join", TM_WAIT_JOIN, "pthread_join", false},
    {"pthread_timedjoin", TM_WAIT_JOIN, "pthread_timedjoin_np", false},
    {"pthread_clockjoin", TM_WAIT_JOIN, "pthread_clockjoin_np", false},
    {"thrd_join", TM_WAIT_JOIN, "thrd_join", false},
    {"sem_wait", TM_WAIT_SEM, "sem_wait", false},
    {"sem_timedwait", TM_WAIT_SEM, "sem_timedwait", false},
    {"sem_clockwait", TM_WAIT_SEM, "sem_clockwait", false},
    {"__lll_lock_wait_private", TM_WAIT_INTERNAL, "a glibc-internal lock", true},
    /* C++20: libstdc++'s templates, in the program's binary */
    {"__atomic_semaphore", TM_WAIT_CXX_SEMAPHORE, "C++ std::counting_semaphore", false},
    {"counting_semaphore", TM_WAIT_CXX_SEMAPHORE, "C++ std::counting_semaphore", false},
    {"__tree_barrier", TM_WAIT_CXX_ATOMIC, "C++ std::barrier", false},
    {"5latch", TM_WAIT_CXX_ATOMIC, "C++ std::latch", false},
    {"__platform_wait", TM_WAIT_CXX_ATOMIC, "C++ std::atomic::wait", true},
    {"__atomic_wait_address", TM_WAIT_CXX_ATOMIC, "C++ std::atomic::wait", true},
    /* Rust std::sync on futexes */
    {"futex_mutex", TM_WAIT_RUST_MUTEX, "Rust std::sync::Mutex", false},
    {"5Mutex14lock_contended", TM_WAIT_RUST_MUTEX, "Rust std::sync::Mutex", false},
    {"Mutex>::lock_contended", TM_WAIT_RUST_MUTEX, "Rust std::sync::Mutex", false},
    {"read_contended", TM_WAIT_RUST_RWLOCK, "Rust std::sync::RwLock", false},
    {"write_contended", TM_WAIT_RUST_RWLOCK, "Rust std::sync::RwLock", false},
    {"futex_rwlock", TM_WAIT_RUST_RWLOCK, "Rust std::sync::RwLock", false},
    {"7Condvar", TM_WAIT_RUST_CONDVAR, "Rust std::sync::Condvar", false},
    {"7condvar", TM_WAIT_RUST_CONDVAR, "Rust std::sync::Condvar", false},
    /* Go's runtime (static binaries, symbols in .symtab) */
    {"runtime.lock2", TM_WAIT_GO_RUNTIME, "Go runtime lock", false},
    {"runtime.notesleep", TM_WAIT_GO_RUNTIME, "Go runtime notesleep (an M without a goroutine to run)", false},
    {"runtime.notetsleep", TM_WAIT_GO_RUNTIME, "Go runtime note (timed)", false},
    {"runtime.futexsleep", TM_WAIT_GO_RUNTIME, "Go runtime futexsleep", true},
};

/* A thread std parked (Thread::park) waits for an unpark, never for a
 * Mutex: a lock frame beyond the park is a stale return address. Parked
 * inside a channel's send or receive it waits for the channel, a queue (it
 * read as "Rust std::sync::Mutex"; the display's model says the same). */
static int rust_channel_park(const char *const *names, int n) {
  int park = -1;
  for (int i = 0; i < n && i < CLASSIFY_DEPTH; i++) {
    if (!names[i]) continue;
    if (park < 0 && strstr(names[i], "park") && strstr(names[i], "std"))
      park = i;
    else if (park >= 0 && (strstr(names[i], "mpmc") || strstr(names[i], "mpsc")))
      return park;
  }
  return -1;
}

tm_wait_class tm_wait_classify_names(const char *const *names, int n) {
  tm_wait_class weak = {TM_WAIT_UNKNOWN, "futex", -1};
  const int park = rust_channel_park(names, n);
  if (park >= 0)
    return (tm_wait_class){TM_WAIT_RUST_CHANNEL, "Rust std::sync::mpsc channel (parked in it)",
                           park};
  for (int i = 0; i < n && i < CLASSIFY_DEPTH; i++) {
    if (!names[i]) continue;
    for (size_t k = 0; k < sizeof patterns / sizeof *patterns; k++) {
      const pattern *p = &patterns[k];
      if (!strstr(names[i], p->needle)) continue;
      if (!p->weak) return (tm_wait_class){p->kind, p->what, i};
      if (weak.frame < 0) weak = (tm_wait_class){p->kind, p->what, i};
      break;
    }
  }
  return weak;
}

tm_wait_class tm_wait_classify(tm_symtabs *syms, const uintptr_t *pcs, int n) {
  const char *names[CLASSIFY_DEPTH];
  int k = 0;
  for (; k < n && k < CLASSIFY_DEPTH; k++) {
    uintptr_t off;
    names[k] = tm_symtabs_lookup(syms, pcs[k], k > 0, &off);
  }
  return tm_wait_classify_names(names, k);
}

const char *tm_wait_kind_name(tm_wait_kind kind) {
  switch (kind) {
  case TM_WAIT_MUTEX: return "mutex";
  case TM_WAIT_COND: return "cond";
  case TM_WAIT_SEM: return "semaphore";
  case TM_WAIT_RWLOCK_READ: return "rwlock-read";
  case TM_WAIT_RWLOCK_WRITE: return "rwlock-write";
  case TM_WAIT_BARRIER: return "barrier";
  case TM_WAIT_JOIN: return "join";
  case TM_WAIT_INTERNAL: return "internal-lock";
  case TM_WAIT_CXX_SEMAPHORE: return "c++-semaphore";
  case TM_WAIT_CXX_ATOMIC: return "c++-atomic-wait";
  case TM_WAIT_RUST_MUTEX: return "rust-mutex";
  case TM_WAIT_RUST_RWLOCK: return "rust-rwlock";
  case TM_WAIT_RUST_CONDVAR: return "rust-condvar";
  case TM_WAIT_GO_RUNTIME: return "go-runtime";
  case TM_WAIT_RUST_CHANNEL:
    return "rust-channel";
  case TM_WAIT_UNKNOWN: break;
  }
  return "futex";
}
