/* Signals: a process whose threads all block in wrapped calls still dies of
 * SIGINT, SIGTERM or SIGALRM; sigwait in a dedicated thread; pthread_kill
 * and pthread_sigqueue reach their thread; a process-directed signal goes
 * to the one thread that does not block it (never to the probe's); signal
 * masks and dispositions are the program's own, inherited as usual; and a
 * handler interrupting each wrapped wait leaves it as glibc would (EINTR or
 * carrying on). */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static sem_t sem_never;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;

static void *cond_waiter(void *arg) {
  *(pid_t *)arg = conf_gettid();
  pthread_mutex_lock(&lock);
  for (;;) pthread_cond_wait(&never, &lock);
  return NULL;
}

static void *sem_waiter(void *arg) {
  *(pid_t *)arg = conf_gettid();
  for (;;) sem_wait(&sem_never);
  return NULL;
}

static void *lock_waiter(void *arg) {
  *(pid_t *)arg = conf_gettid();
  pthread_mutex_lock(&held);
  return NULL;
}

static void *sleeper(void *arg) {
  *(pid_t *)arg = conf_gettid();
  for (;;) sleep(100);
  return NULL;
}

/* Starts fn in a thread and returns once it blocks. */
static pthread_t start_blocked(void *(*fn)(void *)) {
  static _Atomic pid_t tids[16];
  static _Atomic int used;
  _Atomic pid_t *tid = &tids[used++];
  pthread_t th = conf_spawn(fn, (void *)tid);
  while (!*tid) sched_yield();
  conf_wait_blocked(*tid);
  return th;
}

/* A child sends sig to this process once the main thread blocks too. */
static void signal_me_from_a_child(int sig) {
  pid_t main_tid = conf_gettid();
  pid_t pid = fork();
  if (pid == 0) {
    conf_wait_blocked_in(getppid(), main_tid);
    kill(getppid(), sig);
    _exit(0);
  }
}

static void die_blocked(int sig) {
  sem_init(&sem_never, 0, 0);
  pthread_mutex_lock(&held);
  start_blocked(cond_waiter);
  start_blocked(cond_waiter);
  start_blocked(sem_waiter);
  pthread_t last = start_blocked(lock_waiter);
  start_blocked(sleeper);
  say("every thread blocks; waiting for %s", sigabbrev_np(sig));
  if (sig == SIGALRM) {
    struct itimerval it = {{0, 0}, {0, 50000}};
    setitimer(ITIMER_REAL, &it, NULL);
  } else {
    signal_me_from_a_child(sig);
  }
  pthread_join(last, NULL);
  say("not reached");
}

static void sigterm_while_blocked(void) { die_blocked(SIGTERM); }
static void sigint_while_blocked(void) { die_blocked(SIGINT); }
static void sigalrm_while_blocked(void) { die_blocked(SIGALRM); }

/* The main thread in pthread_cond_wait itself when the signal comes. */
static void sigterm_main_in_cond_wait(void) {
  start_blocked(cond_waiter);
  start_blocked(cond_waiter);
  say("main waits on the cond");
  signal_me_from_a_child(SIGTERM);
  pthread_mutex_lock(&lock);
  for (;;) pthread_cond_wait(&never, &lock);
}

/* ---- sigwait ---- */

static sem_t ack;

static void *signal_thread(void *arg) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  for (int n = 1;; n++) {
    int sig = 0;
    int rc = sigwait(&set, &sig);
    say("sigwait -> %s, %s #%d", err_name(rc), sigabbrev_np(sig), n);
    sem_post(&ack);
    if (sig == SIGUSR2) return arg;
  }
}

static void sigwait_thread(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  sem_init(&ack, 0, 0);
  pthread_t th = conf_spawn(signal_thread, NULL);
  for (int i = 0; i < 3; i++) {
    kill(getpid(), SIGUSR1);
    sem_wait(&ack);
  }
  kill(getpid(), SIGUSR2);
  sem_wait(&ack);
  pthread_join(th, NULL);

  /* sigwaitinfo and sigtimedwait on the main thread. */
  union sigval v = {.sival_int = 42};
  sigqueue(getpid(), SIGUSR1, v);
  siginfo_t si;
  int sig = sigwaitinfo(&set, &si);
  say("sigwaitinfo -> %s, code %s, value %d", sigabbrev_np(sig),
      si.si_code == SI_QUEUE ? "SI_QUEUE" : "other", si.si_value.sival_int);
  struct timespec ts = {0, 20000000};
  errno = 0;
  sig = sigtimedwait(&set, &si, &ts);
  say("sigtimedwait with nothing pending -> %d, errno %s", sig, err_name(errno));
}

/* ---- pthread_kill, pthread_sigqueue, process-directed delivery ---- */

static _Atomic pid_t handled_on;
static _Atomic int handled_value;

static void record_handler(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)uc;
  handled_on = conf_gettid();
  handled_value = si->si_code == SI_QUEUE ? si->si_value.sival_int : -1;
}

static _Atomic pid_t target_tid;
static _Atomic int target_sleep_rc, target_sleep_errno, target_done;

static void *interruptible_sleeper(void *arg) {
  target_tid = conf_gettid();
  struct timespec ts = {10, 0};
  int rc = nanosleep(&ts, NULL);
  target_sleep_errno = errno;
  target_sleep_rc = rc;
  target_done = 1;
  return arg;
}

static void install(int sig, void (*fn)(int, siginfo_t *, void *), int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fn;
  sa.sa_flags = SA_SIGINFO | flags;
  sigaction(sig, &sa, NULL);
}

static void pthread_kill_thread(void) {
  install(SIGUSR1, record_handler, 0);
  pthread_t th = conf_spawn(interruptible_sleeper, NULL);
  while (!target_tid) sched_yield();
  conf_wait_blocked(target_tid);
  say("pthread_kill(th, 0) -> %s", err_name(pthread_kill(th, 0)));
  say("pthread_kill(th, 12345) -> %s", err_name(pthread_kill(th, 12345)));
  say("pthread_kill(th, SIGUSR1) -> %s", err_name(pthread_kill(th, SIGUSR1)));
  pthread_join(th, NULL);
  say("handler ran on the target: %s", handled_on == target_tid ? "yes" : "no");
  say("its nanosleep -> %d, errno %s", (int)target_sleep_rc, err_name(target_sleep_errno));

  handled_on = 0;
  target_tid = 0;
  th = conf_spawn(interruptible_sleeper, NULL);
  while (!target_tid) sched_yield();
  conf_wait_blocked(target_tid);
  union sigval v = {.sival_int = 7};
  say("pthread_sigqueue -> %s", err_name(pthread_sigqueue(th, SIGUSR1, v)));
  pthread_join(th, NULL);
  say("queued handler ran on the target: %s, value %d", handled_on == target_tid ? "yes" : "no",
      (int)handled_value);
}

static _Atomic int stop_sleeping, eintrs;

static void *sleeps_until_stopped(void *arg) {
  target_tid = conf_gettid();
  while (!stop_sleeping) {
    struct timespec ts = {10, 0};
    if (nanosleep(&ts, NULL) != 0 && errno == EINTR) eintrs++;
  }
  return arg;
}

/* Every program thread but one blocks SIGUSR1: a process-directed SIGUSR1
 * must run its handler there (the probe's thread blocks everything). */
static void process_signal_to_the_unblocked_thread(void) {
  install(SIGUSR1, record_handler, 0);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  pthread_t blocked_one = start_blocked(sleeper);
  (void)blocked_one;
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  pthread_t th = conf_spawn(sleeps_until_stopped, NULL);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  while (!target_tid) sched_yield();
  for (int i = 0; i < 5; i++) {
    conf_wait_blocked(target_tid);
    handled_on = 0;
    if (i == 4) stop_sleeping = 1;
    kill(getpid(), SIGUSR1);
    while (!handled_on) sched_yield();
    if (handled_on != target_tid) say("signal %d ran elsewhere", i);
  }
  pthread_join(th, NULL);
  say("5 process-directed signals, handled by the one thread not blocking them");
  say("its nanosleep returned EINTR %d times", (int)eintrs);
}

/* ---- masks and dispositions ---- */

static void print_dispositions(const char *label) {
  char line[512];
  size_t used = (size_t)snprintf(line, sizeof line, "%s not default:", label);
  int n = 0;
  for (int sig = 1; sig < NSIG; sig++) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) != 0) continue; /* glibc's own (SIGCANCEL, SIGSETXID) */
    if (sa.sa_handler == SIG_DFL && !(sa.sa_flags & SA_SIGINFO)) continue;
    const char *name = sigabbrev_np(sig);
    used += (size_t)snprintf(line + used, sizeof line - used, " %s%d", name ? name : "SIG", sig);
    n++;
  }
  say("%s%s", line, n ? "" : " none");
}

static void *print_mask_thread(void *arg) {
  conf_print_mask((const char *)arg);
  return NULL;
}

static void *changes_mask_then_creates(void *arg) {
  conf_print_mask("  thread");
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  sigemptyset(&set);
  sigaddset(&set, SIGUSR2);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  pthread_join(conf_spawn(print_mask_thread, "  thread's thread"), NULL);
  return arg;
}

static void masks_inherited(void) {
  conf_print_mask("main at start");
  print_dispositions("dispositions at start,");
  pthread_join(conf_spawn(print_mask_thread, "  first thread"), NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGRTMIN + 3);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  conf_print_mask("main after blocking");
  pthread_join(conf_spawn(changes_mask_then_creates, NULL), NULL);

  /* A mask given in the attributes (glibc 2.32). */
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  pthread_attr_setsigmask_np(&attr, &set);
  pthread_t th;
  pthread_create(&th, &attr, print_mask_thread, "  thread with an attr mask");
  pthread_join(th, NULL);
  pthread_attr_destroy(&attr);
  conf_print_mask("main at the end");

  /* A forked child and an exec'd shell see the same mask and dispositions. */
  pid_t pid = fork();
  if (pid == 0) {
    conf_print_mask("  forked child");
    print_dispositions("  forked child's dispositions,");
    execl("/bin/sh", "sh", "-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status | sed 's/^/  shell /'",
          (char *)NULL);
    _exit(127);
  }
  waitpid(pid, NULL, 0);
}

/* ---- a handler interrupting each wrapped wait ---- */

static void empty_handler(int sig) { (void)sig; }

typedef struct waiter {
  const char *name;
  int (*wait)(void);
  void (*release)(void);
} waiter;

static sem_t s_zero;
static pthread_mutex_t m_cond = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c_cond = PTHREAD_COND_INITIALIZER;
static int cond_flag;
static pthread_barrier_t barrier;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_t joined_thread;
static sem_t joined_go;

static int w_sem_wait(void) { return sem_wait(&s_zero) ? errno : 0; }
static int w_sem_timedwait(void) {
  struct timespec when = conf_deadline(CLOCK_REALTIME, 5000);
  return sem_timedwait(&s_zero, &when) ? errno : 0;
}
static void r_sem(void) { sem_post(&s_zero); }

static int w_cond_wait(void) {
  pthread_mutex_lock(&m_cond);
  int rc = 0;
  while (!cond_flag && rc == 0) rc = pthread_cond_wait(&c_cond, &m_cond);
  cond_flag = 0;
  pthread_mutex_unlock(&m_cond);
  return rc;
}
static void r_cond(void) {
  pthread_mutex_lock(&m_cond);
  cond_flag = 1;
  pthread_cond_signal(&c_cond);
  pthread_mutex_unlock(&m_cond);
}

static int w_mutex_lock(void) {
  int rc = pthread_mutex_lock(&held);
  pthread_mutex_unlock(&held);
  return rc;
}
static void r_mutex(void) { pthread_mutex_unlock(&held); }

static int w_rwlock_wrlock(void) {
  int rc = pthread_rwlock_wrlock(&rw);
  pthread_rwlock_unlock(&rw);
  return rc;
}
static void r_rwlock(void) { pthread_rwlock_unlock(&rw); }

static int w_barrier(void) {
  int rc = pthread_barrier_wait(&barrier);
  return rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : rc;
}
static void r_barrier(void) { pthread_barrier_wait(&barrier); }

static void *joined_body(void *arg) {
  sem_wait(&joined_go);
  return arg;
}
static int w_join(void) { return pthread_join(joined_thread, NULL); }
static void r_join(void) { sem_post(&joined_go); }

static int w_nanosleep(void) {
  struct timespec ts = {5, 0};
  return nanosleep(&ts, NULL) ? errno : 0;
}
static int w_clock_nanosleep(void) {
  struct timespec ts = {5, 0};
  return clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}
static void r_nothing(void) {}

static const waiter waiters[] = {
    {"sem_wait", w_sem_wait, r_sem},
    {"sem_timedwait", w_sem_timedwait, r_sem},
    {"pthread_cond_wait", w_cond_wait, r_cond},
    {"pthread_mutex_lock", w_mutex_lock, r_mutex},
    {"pthread_rwlock_wrlock", w_rwlock_wrlock, r_rwlock},
    {"pthread_barrier_wait", w_barrier, r_barrier},
    {"pthread_join", w_join, r_join},
    {"nanosleep", w_nanosleep, r_nothing},
    {"clock_nanosleep", w_clock_nanosleep, r_nothing},
};

static _Atomic int wait_rc;

static void *run_waiter(void *arg) {
  const waiter *w = arg;
  target_tid = conf_gettid();
  wait_rc = w->wait();
  return NULL;
}

static void interrupt_each_wait(int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = empty_handler;
  sa.sa_flags = flags;
  sigaction(SIGUSR1, &sa, NULL);
  sem_init(&s_zero, 0, 0);
  sem_init(&joined_go, 0, 0);
  pthread_barrier_init(&barrier, NULL, 2);
  for (size_t i = 0; i < sizeof waiters / sizeof waiters[0]; i++) {
    const waiter *w = &waiters[i];
    if (w->release == r_mutex) pthread_mutex_lock(&held);
    if (w->release == r_rwlock) pthread_rwlock_rdlock(&rw);
    if (w->release == r_join) joined_thread = conf_spawn(joined_body, NULL);
    target_tid = 0;
    pthread_t th = conf_spawn(run_waiter, (void *)w);
    while (!target_tid) sched_yield();
    conf_wait_blocked(target_tid);
    pthread_kill(th, SIGUSR1);
    conf_sleep_ms(30);
    w->release(); /* a wait that carried on ends now */
    pthread_join(th, NULL);
    say("%s interrupted by a handler -> %s", w->name, err_name(wait_rc));
    if (w->release == r_sem && wait_rc != 0) sem_trywait(&s_zero); /* the unused post */
    if (w->release == r_cond && wait_rc != 0) cond_flag = 0;
  }
}

static void handler_interrupts_waits(void) { interrupt_each_wait(0); }
static void restarting_handler_interrupts_waits(void) { interrupt_each_wait(SA_RESTART); }

/* setresuid and friends in a threaded process: glibc signals every thread
 * (SIGSETXID, which no mask blocks) to change its credentials too, and
 * waits for all of them, the probe's thread included. */
static void setxid_with_threads(void) {
  sem_init(&sem_never, 0, 0);
  start_blocked(sem_waiter);
  start_blocked(sleeper);
  uid_t r, e, s;
  getresuid(&r, &e, &s);
  say("setresuid to the same ids: %d", setresuid(r, e, s));
  gid_t gr, ge, gs;
  getresgid(&gr, &ge, &gs);
  say("setresgid to the same ids: %d", setresgid(gr, ge, gs));
  say("setegid: %d", setegid(ge));
}

static const conf_case cases[] = {
    CONF_CASE(sigterm_while_blocked),
    CONF_CASE(sigint_while_blocked),
    CONF_CASE(sigalrm_while_blocked),
    CONF_CASE(sigterm_main_in_cond_wait),
    CONF_CASE(sigwait_thread),
    CONF_CASE(pthread_kill_thread),
    CONF_CASE(process_signal_to_the_unblocked_thread),
    CONF_CASE(masks_inherited),
    CONF_CASE(handler_interrupts_waits),
    CONF_CASE(restarting_handler_interrupts_waits),
    CONF_CASE(setxid_with_threads),
};

int main(int argc, char **argv) {
  return conf_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
