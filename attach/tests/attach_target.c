/* A C program whose threads wait in every glibc way, then stay there:
 * two deadlock on two mutexes, others wait on a cond, a semaphore, a
 * rwlock the main thread holds for writing (a reader and a writer), a
 * barrier, a PI mutex the main thread holds, a mutex whose owner ended
 * holding it, a FILE's internal lock main holds, a futex_waitv on two
 * words, and main joins one of the deadlocked threads. It prints the
 * truth (target_truth.h) and sleeps until killed.
 * --not-dumpable: prctl(PR_SET_DUMPABLE, 0) once ready;
 * --extra N: N more threads waiting on one cond (to time an attach to a
 * process with many threads). */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "target_truth.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER, lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_mutex = PTHREAD_MUTEX_INITIALIZER, pi_mutex;
static pthread_mutex_t orphan = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t both_hold, lonely;
static sem_t sem;
enum { FIRST, SECOND, CONDW, SEMW, RDLOCK, WRLOCK, BARRIER, PIW, ORPHAN, ORPHANW, STDIO, WAITV, SLOTS };
static _Atomic pid_t tids[SLOTS];

static void *first(void *arg) {
  tids[FIRST] = gettid();
  pthread_mutex_lock(&lock_a);
  pthread_barrier_wait(&both_hold);
  pthread_mutex_lock(&lock_b);
  return arg;
}

static void *second(void *arg) {
  tids[SECOND] = gettid();
  pthread_mutex_lock(&lock_b);
  pthread_barrier_wait(&both_hold);
  pthread_mutex_lock(&lock_a);
  return arg;
}

static void *cond_waiter(void *arg) {
  tids[CONDW] = gettid();
  pthread_mutex_lock(&cond_mutex);
  for (;;) pthread_cond_wait(&cond, &cond_mutex);
  return arg;
}

static void *sem_waiter(void *arg) {
  tids[SEMW] = gettid();
  sem_wait(&sem);
  return arg;
}

static void *reader(void *arg) {
  tids[RDLOCK] = gettid();
  pthread_rwlock_rdlock(&rwlock);
  return arg;
}

static void *writer(void *arg) {
  tids[WRLOCK] = gettid();
  pthread_rwlock_wrlock(&rwlock);
  return arg;
}

static void *barrier_waiter(void *arg) {
  tids[BARRIER] = gettid();
  pthread_barrier_wait(&lonely);
  return arg;
}

/* Ends holding a mutex: a thread that died with a lock. */
static void *orphan_maker(void *arg) {
  tids[ORPHAN] = gettid();
  pthread_mutex_lock(&orphan);
  return arg;
}

static void *orphan_waiter(void *arg) {
  tids[ORPHANW] = gettid();
  pthread_mutex_lock(&orphan);
  return arg;
}

/* A FILE whose lock main holds (flockfile): a glibc-internal lock, never
 * a pthread call. */
static FILE *locked_file;

static void *stdio_waiter(void *arg) {
  tids[STDIO] = gettid();
  fputs("blocked\n", locked_file);
  return arg;
}

/* futex_waitv(2) on two words nobody wakes: no library wraps it yet, so
 * its kind is a plain futex; the word is the first of its array. */
static uint32_t waitv_words[2];

static void *waitv_waiter(void *arg) {
  tids[WAITV] = gettid();
  struct futex_waitv w[2] = {
      {.val = 0, .uaddr = (uintptr_t)&waitv_words[0], .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG},
      {.val = 0, .uaddr = (uintptr_t)&waitv_words[1], .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG},
  };
  syscall(SYS_futex_waitv, w, 2, 0, NULL, CLOCK_MONOTONIC);
  return arg;
}

static void *extra_waiter(void *arg) {
  pthread_mutex_lock(&cond_mutex);
  for (;;) pthread_cond_wait(&cond, &cond_mutex);
  return arg;
}

static void start_extra(int n) {
  pthread_attr_t small;
  pthread_attr_init(&small);
  pthread_attr_setstacksize(&small, 64 * 1024);
  for (int i = 0; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, &small, extra_waiter, NULL) != 0) {
      fprintf(stderr, "target: only %d extra threads\n", i);
      exit(1);
    }
  }
}

static void *pi_waiter(void *arg) {
  tids[PIW] = gettid();
  pthread_mutex_lock(&pi_mutex);
  return arg;
}

static pthread_t start(void *(*fn)(void *), const char *name, int slot) {
  pthread_t t;
  pthread_create(&t, NULL, fn, NULL);
  pthread_setname_np(t, name);
  while (!tids[slot]) nanosleep(&(struct timespec){0, 100000}, NULL);
  return t;
}

static void truth(int slot, const char *kind, const void *obj, size_t size, pid_t owner) {
  truth_wait_asleep(tids[slot]);
  printf("truth %d %s %#lx %zu %d\n", (int)tids[slot], kind, (unsigned long)obj, size, (int)owner);
}

int main(int argc, char **argv) {
  pthread_barrier_init(&both_hold, NULL, 2);
  pthread_barrier_init(&lonely, NULL, 2);
  sem_init(&sem, 0, 0);
  pthread_mutexattr_t pi;
  pthread_mutexattr_init(&pi);
  pthread_mutexattr_setprotocol(&pi, PTHREAD_PRIO_INHERIT);
  pthread_mutex_init(&pi_mutex, &pi);
  pthread_mutex_lock(&pi_mutex);
  pthread_rwlock_wrlock(&rwlock);
  locked_file = fopen("/dev/null", "w");
  flockfile(locked_file);

  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--extra")) start_extra(atoi(argv[i + 1]));
  pthread_t t1 = start(first, "dl-first", FIRST);
  start(second, "dl-second", SECOND);
  start(cond_waiter, "cond-wait", CONDW);
  start(sem_waiter, "sem-wait", SEMW);
  start(reader, "rd-lock", RDLOCK);
  start(writer, "wr-lock", WRLOCK);
  start(barrier_waiter, "barrier", BARRIER);
  start(pi_waiter, "pi-wait", PIW);
  pthread_join(start(orphan_maker, "orphan-maker", ORPHAN), NULL);
  start(orphan_waiter, "orphan-wait", ORPHANW);
  start(stdio_waiter, "stdio-wait", STDIO);
  start(waitv_waiter, "waitv", WAITV);
  pid_t me = gettid();
  truth(FIRST, "mutex", &lock_b, sizeof lock_b, tids[SECOND]);
  truth(SECOND, "mutex", &lock_a, sizeof lock_a, tids[FIRST]);
  truth(CONDW, "cond", &cond, sizeof cond, 0);
  truth(SEMW, "semaphore", &sem, sizeof sem, 0);
  truth(RDLOCK, "rwlock-read", &rwlock, sizeof rwlock, me);
  truth(WRLOCK, "rwlock-write", &rwlock, sizeof rwlock, me);
  truth(BARRIER, "barrier", &lonely, sizeof lonely, 0);
  truth(PIW, "mutex", &pi_mutex, sizeof pi_mutex, me);
  truth(ORPHANW, "mutex", &orphan, sizeof orphan, -tids[ORPHAN]);
  /* _IO_lock_t: int lock, int cnt, void *owner. */
  truth(STDIO, "internal-lock", locked_file->_lock, 16, 0);
  truth(WAITV, "futex", &waitv_words[0], sizeof waitv_words[0], 0);
  printf("truth %d join %#lx %zu %d\n", (int)me, 0ul, (size_t)0, (int)tids[FIRST]);
  /* Only now: a process that is not dumpable cannot read its own task
   * files (root owns them), which truth() needs. */
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--not-dumpable")) prctl(PR_SET_DUMPABLE, 0);
  printf("cycle %d %d\nready\n", (int)tids[FIRST], (int)tids[SECOND]);
  fflush(stdout);
  pthread_join(t1, NULL);
  return 0;
}
