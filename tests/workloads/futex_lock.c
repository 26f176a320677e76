/* futex_lock: ground truth for a lock the program builds itself on the
 * futex system call, as databases, runtimes and allocators do, through
 * glibc's syscall() (no pthread call to interpose).
 *
 * The lock is the classic three-state futex mutex (0 free, 1 held, 2 held
 * with waiters; Drepper, "Futexes Are Tricky", mutex 3) in a global
 * struct, shared_table. N workers ("locker-i") repeat: take it, spin H ms
 * of their own CPU time holding it, let it go, spin G ms. An uncontended
 * take or release is one atomic instruction and never enters the kernel.
 *
 * Truth, measured by each worker itself: its lifetime from its create, the
 * wall time inside its own FUTEX_WAIT calls (clock_gettime around each, a
 * wake-up's wait for a CPU included), how many it made, and how many of
 * them a FUTEX_WAKE ended (returned 0; the others found the word changed
 * before sleeping, EAGAIN, and no one woke them).
 * blocked_futex_pct is that time's share of its life.
 *
 * --pi: the kernel's priority-inheritance lock instead (FUTEX_LOCK_PI and
 * FUTEX_UNLOCK_PI, as PTHREAD_PRIO_INHERIT mutexes and real-time programs
 * use): the word holds the owner's tid, taken and released uncontended by
 * one compare-and-swap. Each wait also notes the tid the word held just
 * before it (held_by), which the probe should name as the holder.
 *
 * --raw: the futex calls made by the syscall instruction itself, as glibc's
 * internal locks and Go's runtime make them: nothing to interpose, so the
 * probe finds the lock only by sampling the threads asleep on its word (a
 * hidden lock, its wait an estimate). The truth is the same.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wl.h"

#define MAX_WORKERS 64

/* The program's lock and what it guards: a global struct, so that the
 * futex word has a symbol (shared_table) in the executable's data. */
struct table {
  _Atomic uint32_t lock; /* the futex word: first member, at the struct's address */
  uint64_t updates;
};
struct table shared_table;

typedef struct worker {
  pthread_t thread;
  pid_t tid;
  int index;
  double created_s, lifetime_s, wait_s;
  long waits, woken, held_by_worker;
} worker;

static worker ws[MAX_WORKERS];

static int workers = 4, rounds = 200, pi = 0, raw = 0;

/* The futex system call, through glibc's syscall() (interposed) or, with
 * --raw, by the instruction (x86-64: number in rax, arguments in rdi, rsi,
 * rdx, r10; rcx and r11 clobbered). Inlined: the call site of syscall()
 * stays the lock's own (the test reads it). */
static inline __attribute__((always_inline)) long futex(_Atomic uint32_t *word, int op,
                                                        uint32_t val) {
#if defined(__x86_64__)
  if (raw) {
    long rc;
    register long r10 __asm__("r10") = 0;
    __asm__ volatile("syscall"
                     : "=a"(rc)
                     : "0"((long)SYS_futex), "D"(word), "S"((long)op), "d"((long)val), "r"(r10)
                     : "rcx", "r11", "memory");
    if (rc < 0) {
      errno = (int)-rc;
      return -1;
    }
    return rc;
  }
#endif
  return syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}
static double hold_ms = 1, gap_ms = 1;

static void table_lock(struct table *t, worker *w) {
  uint32_t c = 0;
  if (atomic_compare_exchange_strong(&t->lock, &c, 1)) return;
  if (c != 2) c = atomic_exchange(&t->lock, 2);
  while (c != 0) {
    double t0 = wl_now_s();
    long rc = futex(&t->lock, FUTEX_WAIT_PRIVATE, 2);
    w->wait_s += wl_now_s() - t0;
    w->waits++;
    w->woken += rc == 0;
    c = atomic_exchange(&t->lock, 2);
  }
}

static void table_unlock(struct table *t) {
  if (atomic_fetch_sub(&t->lock, 1) != 1) {
    atomic_store(&t->lock, 0);
    futex(&t->lock, FUTEX_WAKE_PRIVATE, 1);
  }
}

static bool is_worker(uint32_t tid) {
  for (int i = 0; i < workers; i++)
    if (tid && (uint32_t)ws[i].tid == tid) return true;
  return false;
}

static void table_lock_pi(struct table *t, worker *w) {
  for (;;) {
    uint32_t c = 0;
    if (atomic_compare_exchange_strong(&t->lock, &c, (uint32_t)w->tid)) return;
    double t0 = wl_now_s();
    long rc = futex(&t->lock, FUTEX_LOCK_PI_PRIVATE, 0);
    w->wait_s += wl_now_s() - t0;
    w->waits++;
    w->woken += rc == 0;
    w->held_by_worker += is_worker(c & FUTEX_TID_MASK);
    if (rc == 0) return;
  }
}

static void table_unlock_pi(struct table *t, worker *w) {
  uint32_t c = (uint32_t)w->tid;
  if (!atomic_compare_exchange_strong(&t->lock, &c, 0)) futex(&t->lock, FUTEX_UNLOCK_PI_PRIVATE, 0);
}

static void *work(void *arg) {
  worker *w = arg;
  wl_name_self("locker", w->index);
  w->tid = gettid();
  for (int r = 0; r < rounds; r++) {
    if (pi) table_lock_pi(&shared_table, w);
    else table_lock(&shared_table, w);
    wl_spin_cpu_ms(hold_ms);
    shared_table.updates++;
    if (pi) table_unlock_pi(&shared_table, w);
    else table_unlock(&shared_table);
    wl_spin_cpu_ms(gap_ms);
  }
  w->lifetime_s = wl_now_s() - w->created_s;
  return NULL;
}

int main(int argc, char **argv) {
  const wl_flag flags[] = {
      {"workers", WL_INT, &workers, "threads taking the lock"},
      {"rounds", WL_INT, &rounds, "times each worker takes it"},
      {"hold-ms", WL_DOUBLE, &hold_ms, "CPU time spent holding it per round"},
      {"gap-ms", WL_DOUBLE, &gap_ms, "CPU time spent outside it per round"},
      {"pi", WL_BOOL, &pi, "a priority-inheritance lock (FUTEX_LOCK_PI) instead"},
      {"raw", WL_BOOL, &raw, "futex calls by the syscall instruction (a hidden lock)"},
  };
  wl_parse_flags(argc, argv,
                 "Workers contend on a three-state futex mutex made with syscall(SYS_futex).",
                 flags, (int)(sizeof flags / sizeof flags[0]));
  if (workers < 1 || workers > MAX_WORKERS || rounds < 1) {
    fprintf(stderr, "futex_lock: --workers must be 1..%d and --rounds at least 1\n", MAX_WORKERS);
    return 2;
  }
  double start = wl_now_s();
  for (int i = 0; i < workers; i++) {
    ws[i].index = i;
    ws[i].created_s = wl_now_s();
    wl_check(pthread_create(&ws[i].thread, NULL, work, &ws[i]), "pthread_create");
  }
  double wait = 0;
  long waits = 0, woken = 0, held = 0;
  for (int i = 0; i < workers; i++) {
    wl_check(pthread_join(ws[i].thread, NULL), "pthread_join");
    wait += ws[i].wait_s;
    waits += ws[i].waits;
    woken += ws[i].woken;
    held += ws[i].held_by_worker;
  }
  printf(
      "{\"workload\":\"futex_lock\",\"wall_s\":%.6f,\"lock_symbol\":\"shared_table\","
      "\"pi\":%s,\"raw\":%s,\"updates\":%llu,\"wait_s\":%.6f,\"waits\":%ld,\"woken\":%ld,"
      "\"held_by_worker\":%ld,\"workers\":[",
      wl_now_s() - start, pi ? "true" : "false", raw ? "true" : "false",
      (unsigned long long)shared_table.updates, wait, waits, woken, held);
  for (int i = 0; i < workers; i++)
    printf(
        "%s{\"tid\":%d,\"name\":\"locker-%d\",\"lifetime_s\":%.6f,\"wait_s\":%.6f,"
        "\"waits\":%ld,\"blocked_futex_pct\":%.2f}",
        i ? "," : "", (int)ws[i].tid, i, ws[i].lifetime_s, ws[i].wait_s, ws[i].waits,
        100.0 * ws[i].wait_s / ws[i].lifetime_s);
  printf("]}\n");
  return 0;
}
