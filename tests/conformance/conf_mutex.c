/* Every mutex kind, protocol and robustness, through every lock variant,
 * from the owner and from another thread: the probe's wrappers try the
 * lock first and block only when that fails, so any kind whose trylock
 * answers otherwise than its lock would show here (issue 24: a
 * PRIO_PROTECT mutex above the caller's priority). Each line is one call's
 * result and errno, compared with and without the probe. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"

static const struct {
  const char *name;
  int type;
} kTypes[] = {{"normal", PTHREAD_MUTEX_NORMAL},
              {"errorcheck", PTHREAD_MUTEX_ERRORCHECK},
              {"recursive", PTHREAD_MUTEX_RECURSIVE},
              {"adaptive", PTHREAD_MUTEX_ADAPTIVE_NP}};

static const struct {
  const char *name;
  int protocol;
} kProtocols[] = {{"none", PTHREAD_PRIO_NONE},
                  {"inherit", PTHREAD_PRIO_INHERIT},
                  {"protect", PTHREAD_PRIO_PROTECT}};

#define N_TYPES (sizeof kTypes / sizeof kTypes[0])
#define N_PROTOCOLS (sizeof kProtocols / sizeof kProtocols[0])

static int make(pthread_mutex_t *m, int type, int protocol, int robust, int pshared,
                int ceiling) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, type);
  pthread_mutexattr_setprotocol(&a, protocol);
  if (protocol == PTHREAD_PRIO_PROTECT) pthread_mutexattr_setprioceiling(&a, ceiling);
  pthread_mutexattr_setrobust(&a, robust);
  pthread_mutexattr_setpshared(&a, pshared);
  int rc = pthread_mutex_init(m, &a);
  pthread_mutexattr_destroy(&a);
  return rc;
}

static pthread_mutex_t *shared_m;

static void *try_from_other(void *unused) {
  (void)unused;
  CONF_SHOW(pthread_mutex_trylock(shared_m));
  struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(pthread_mutex_timedlock(shared_m, &past));
  struct timespec soon = conf_deadline(CLOCK_MONOTONIC, 20);
  CONF_SHOW(pthread_mutex_clocklock(shared_m, CLOCK_MONOTONIC, &soon));
  CONF_SHOW(pthread_mutex_unlock(shared_m)); /* not the owner */
  return NULL;
}

static void *die_holding(void *unused) {
  (void)unused;
  CONF_SHOW(pthread_mutex_lock(shared_m));
  return NULL; /* ends owning it */
}

/* The owner's calls on a mutex it holds, another thread's on it, then the
 * owner's unlocks. A normal mutex is never locked twice by its owner
 * without a timeout: that would deadlock with and without the probe. */
static void owner_and_other(pthread_mutex_t *m, int type) {
  CONF_SHOW(pthread_mutex_lock(m));
  CONF_SHOW(pthread_mutex_trylock(m));
  struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(pthread_mutex_timedlock(m, &past));
  struct timespec mono_past = conf_deadline(CLOCK_MONOTONIC, -1000);
  CONF_SHOW(pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &mono_past));
  if (type != PTHREAD_MUTEX_NORMAL && type != PTHREAD_MUTEX_ADAPTIVE_NP)
    CONF_SHOW(pthread_mutex_lock(m));
  shared_m = m;
  pthread_join(conf_spawn(try_from_other, NULL), NULL);
  for (int i = 0; i < 4; i++) CONF_SHOW(pthread_mutex_unlock(m));
}

static void matrix(int robust) {
  for (size_t t = 0; t < N_TYPES; t++)
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
      pthread_mutex_t m;
      int ceiling = sched_get_priority_max(SCHED_FIFO);
      int rc = make(&m, kTypes[t].type, kProtocols[p].protocol, robust, 0, ceiling);
      say("-- %s %s %s: init %s", kTypes[t].name, kProtocols[p].name,
          robust ? "robust" : "stalled", err_name(rc));
      if (rc) continue;
      owner_and_other(&m, kTypes[t].type);
      CONF_SHOW(pthread_mutex_destroy(&m));
    }
}

static void kinds_stalled(void) { matrix(PTHREAD_MUTEX_STALLED); }
static void kinds_robust(void) { matrix(PTHREAD_MUTEX_ROBUST); }

/* Robust mutexes whose owner died, for each type and protocol but
 * PROTECT (glibc's PP mutexes are not robust-capable with PI's path): the
 * next locker is told (EOWNERDEAD) by each variant; unlocked without
 * pthread_mutex_consistent, every variant answers ENOTRECOVERABLE. */
static void owner_died(void) {
  for (size_t t = 0; t < N_TYPES; t++)
    for (size_t p = 0; p < 2; p++) {
      pthread_mutex_t m;
      int rc = make(&m, kTypes[t].type, kProtocols[p].protocol, PTHREAD_MUTEX_ROBUST, 0, 0);
      say("-- %s %s robust, owner dies: init %s", kTypes[t].name, kProtocols[p].name,
          err_name(rc));
      if (rc) continue;
      shared_m = &m;
      pthread_join(conf_spawn(die_holding, NULL), NULL);
      CONF_SHOW(pthread_mutex_lock(&m));
      CONF_SHOW(pthread_mutex_consistent(&m));
      CONF_SHOW(pthread_mutex_unlock(&m));
      pthread_join(conf_spawn(die_holding, NULL), NULL);
      CONF_SHOW(pthread_mutex_trylock(&m));
      CONF_SHOW(pthread_mutex_unlock(&m)); /* not made consistent */
      CONF_SHOW(pthread_mutex_lock(&m));
      CONF_SHOW(pthread_mutex_trylock(&m));
      struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
      CONF_SHOW(pthread_mutex_timedlock(&m, &past));
      struct timespec mono = conf_deadline(CLOCK_MONOTONIC, 10);
      CONF_SHOW(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &mono));
      CONF_SHOW(pthread_mutex_destroy(&m));
    }
}

/* PRIO_PROTECT ceilings below and above a real-time caller's priority:
 * glibc refuses a lock by a thread above the ceiling (EINVAL) in every
 * variant. Needs SCHED_FIFO (root or RLIMIT_RTPRIO), said otherwise. */
static void protect_ceilings(void) {
  struct sched_param sp = {.sched_priority = 10};
  int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
  say("SCHED_FIFO 10: %s", rc == 0 ? "set" : "refused (the rest shows the refusal)");
  if (rc != 0) return;
  const int ceilings[] = {5, 10, 20};
  for (size_t t = 0; t < N_TYPES; t++)
    for (size_t c = 0; c < sizeof ceilings / sizeof ceilings[0]; c++) {
      pthread_mutex_t m;
      rc = make(&m, kTypes[t].type, PTHREAD_PRIO_PROTECT, PTHREAD_MUTEX_STALLED, 0, ceilings[c]);
      say("-- %s protect, ceiling %d: init %s", kTypes[t].name, ceilings[c], err_name(rc));
      if (rc) continue;
      CONF_SHOW(pthread_mutex_lock(&m));
      CONF_SHOW(pthread_mutex_unlock(&m));
      CONF_SHOW(pthread_mutex_trylock(&m));
      CONF_SHOW(pthread_mutex_unlock(&m));
      struct timespec later = conf_deadline(CLOCK_REALTIME, 1000);
      CONF_SHOW(pthread_mutex_timedlock(&m, &later));
      CONF_SHOW(pthread_mutex_unlock(&m));
      struct timespec mono = conf_deadline(CLOCK_MONOTONIC, 1000);
      CONF_SHOW(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &mono));
      CONF_SHOW(pthread_mutex_unlock(&m));
      int old = -1;
      CONF_SHOW(pthread_mutex_setprioceiling(&m, 30, &old));
      say("old ceiling %d", old);
      CONF_SHOW(pthread_mutex_lock(&m));
      CONF_SHOW(pthread_mutex_unlock(&m));
      CONF_SHOW(pthread_mutex_destroy(&m));
    }
  sp.sched_priority = 0;
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
}

/* A process-shared robust mutex in shared memory: a forked child locks it
 * and exits holding it; the parent's trylock sees it busy while the child
 * lives, and its lock is told the owner died. */
static void pshared_across_fork(void) {
  pthread_mutex_t *m = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                            -1, 0);
  int rc = make(m, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_ROBUST,
                PTHREAD_PROCESS_SHARED, 0);
  say("init %s", err_name(rc));
  int go[2], held[2];
  if (pipe(go) || pipe(held)) return;
  pid_t child = fork();
  if (child == 0) {
    int lrc = pthread_mutex_lock(m);
    char c = (char)lrc;
    if (write(held[1], &c, 1) != 1) _exit(2);
    if (read(go[0], &c, 1) != 1) _exit(3);
    _exit(0); /* ends holding it */
  }
  char c = 1;
  if (read(held[0], &c, 1) == 1) say("child's lock: %s", err_name(c));
  CONF_SHOW(pthread_mutex_trylock(m));
  struct timespec past = conf_deadline(CLOCK_REALTIME, -1000);
  CONF_SHOW(pthread_mutex_timedlock(m, &past));
  if (write(go[1], &c, 1) != 1) return;
  int status = 0;
  waitpid(child, &status, 0);
  say("child exited %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  CONF_SHOW(pthread_mutex_lock(m));
  CONF_SHOW(pthread_mutex_consistent(m));
  CONF_SHOW(pthread_mutex_unlock(m));
  CONF_SHOW(pthread_mutex_destroy(m));
  munmap(m, sizeof *m);
}

/* Bad deadlines and clocks on a busy mutex, and on a free one (where glibc
 * locks without looking at the deadline). */
static void bad_arguments(void) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  struct timespec bad_ns = {0, 1000000000}, negative = {0, -1};
  struct timespec mono = conf_deadline(CLOCK_MONOTONIC, 10);
  CONF_SHOW(pthread_mutex_timedlock(&m, &bad_ns));
  CONF_SHOW(pthread_mutex_unlock(&m));
  CONF_SHOW(pthread_mutex_clocklock(&m, CLOCK_PROCESS_CPUTIME_ID, &mono));
  CONF_SHOW(pthread_mutex_clocklock(&m, (clockid_t)99, &mono));
  CONF_SHOW(pthread_mutex_lock(&m));
  CONF_SHOW(pthread_mutex_timedlock(&m, &bad_ns));
  CONF_SHOW(pthread_mutex_timedlock(&m, &negative));
  CONF_SHOW(pthread_mutex_clocklock(&m, CLOCK_THREAD_CPUTIME_ID, &mono));
  CONF_SHOW(pthread_mutex_unlock(&m));
}

int main(int argc, char **argv) {
  static const conf_case cases[] = {
      CONF_CASE(kinds_stalled),      CONF_CASE(kinds_robust),  CONF_CASE(owner_died),
      CONF_CASE(protect_ceilings),   CONF_CASE(pshared_across_fork), CONF_CASE(bad_arguments),
  };
  return conf_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
