/* How a process ends: by pthread_exit of its last thread (main first or
 * last, in a forked child, from a signal handler), exit/_exit/return,
 * abort and raise, exit from a thread while others run, and exec from a
 * threaded program. The probe's own thread must never keep a process alive
 * nor change its status. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *short_worker(void *arg) {
  conf_sleep_ms(30);
  return arg;
}

/* Blocks until the process ends. */
static void *blocked_worker(void *arg) {
  pthread_mutex_lock(&lock);
  for (;;) pthread_cond_wait(&never, &lock);
  return arg;
}

static void say_at_exit(void) { say("atexit handler ran"); }

static void main_exit_after_join(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++) t[i] = conf_spawn(short_worker, (void *)i);
  for (int i = 0; i < 2; i++) {
    void *ret;
    pthread_join(t[i], &ret);
    say("joined worker %ld", (long)ret);
  }
  atexit(say_at_exit);
  say("main calls pthread_exit");
  pthread_exit(NULL);
}

static pid_t main_tid;

/* Ends after the main thread ended. */
static void *late_worker(void *arg) {
  conf_wait_exited(main_tid);
  say("worker outlived main");
  return arg;
}

static void main_exit_before_worker(void) {
  conf_spawn(late_worker, NULL);
  atexit(say_at_exit);
  say("main calls pthread_exit");
  pthread_exit(NULL);
}

/* The late worker itself ends the process with a status. */
static void *late_exit_worker(void *arg) {
  conf_wait_exited(main_tid);
  say("worker calls exit(6)");
  exit(6);
  return arg;
}

static void main_exit_worker_exits(void) {
  conf_spawn(late_exit_worker, NULL);
  say("main calls pthread_exit");
  pthread_exit(NULL);
}

static void report_child(pid_t pid) {
  int status;
  if (waitpid(pid, &status, 0) != pid) {
    say("waitpid failed");
    return;
  }
  if (WIFEXITED(status))
    say("child exited %d", WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    say("child killed by signal %d", WTERMSIG(status));
  else
    say("child status %#x", status);
}

static void fork_child_pthread_exit(void) {
  pid_t pid = fork();
  if (pid == 0) {
    say("child calls pthread_exit");
    pthread_exit(NULL);
  }
  report_child(pid);
}

/* The parent has threads when it forks: the child's only thread exits. */
static void threaded_fork_child_pthread_exit(void) {
  conf_spawn(blocked_worker, NULL);
  conf_spawn(blocked_worker, NULL);
  fork_child_pthread_exit();
  exit(0);
}

static void exit_from_handler(int sig) {
  (void)sig;
  pthread_exit(NULL);
}

static void handler_pthread_exit_only_thread(void) {
  signal(SIGUSR1, exit_from_handler);
  atexit(say_at_exit);
  say("main raises SIGUSR1");
  raise(SIGUSR1);
  say("not reached");
}

static void handler_pthread_exit_with_worker(void) {
  signal(SIGUSR1, exit_from_handler);
  conf_spawn(late_worker, NULL);
  say("main raises SIGUSR1");
  raise(SIGUSR1);
  say("not reached");
}

static void exit_n(void) {
  atexit(say_at_exit);
  conf_spawn(blocked_worker, NULL);
  exit(7);
}

static void underscore_exit_n(void) {
  atexit(say_at_exit);
  conf_spawn(blocked_worker, NULL);
  printf("buffered, never flushed");
  _exit(9);
}

static void return_from_main(void) {
  atexit(say_at_exit);
  conf_spawn(blocked_worker, NULL);
  say("returning 5");
  /* conf_main returns 0 after a case: exit with the status main returns. */
}

static void abort_call(void) {
  conf_spawn(blocked_worker, NULL);
  say("calling abort");
  abort();
}

static void raise_sigterm(void) {
  conf_spawn(blocked_worker, NULL);
  say("raising SIGTERM");
  raise(SIGTERM);
  say("not reached");
}

static void *exiting_worker(void *arg) {
  conf_sleep_ms(50);
  say("worker calls exit(4)");
  exit((int)(long)arg);
}

static void exit_from_thread(void) {
  atexit(say_at_exit);
  conf_spawn(blocked_worker, NULL);
  pthread_t th = conf_spawn(exiting_worker, (void *)4L);
  pthread_join(th, NULL);
  say("join returned");
}

static void *underscore_exiting_worker(void *arg) {
  conf_sleep_ms(50);
  say("worker calls _exit(3)");
  _exit((int)(long)arg);
}

static void underscore_exit_from_thread(void) {
  atexit(say_at_exit);
  conf_spawn(blocked_worker, NULL);
  pthread_t th = conf_spawn(underscore_exiting_worker, (void *)3L);
  pthread_join(th, NULL);
  say("join returned");
}

static void exec_from_threaded(void) {
  conf_spawn(blocked_worker, NULL);
  conf_spawn(blocked_worker, NULL);
  say("main execs /bin/sh");
  execl("/bin/sh", "sh", "-c", "echo exec image ran; exit 12", (char *)NULL);
  say("exec failed");
}

static void *exec_worker(void *arg) {
  say("worker execs /bin/true");
  execl("/bin/true", "true", (char *)NULL);
  say("exec failed");
  return arg;
}

static void exec_from_thread(void) {
  conf_spawn(blocked_worker, NULL);
  pthread_t th = conf_spawn(exec_worker, NULL);
  pthread_join(th, NULL);
  say("not reached");
}

static void exec_failure_continues(void) {
  conf_spawn(blocked_worker, NULL);
  int rc = execl("/nonexistent/program", "program", (char *)NULL);
  say("execl returned %d", rc);
  exit(8);
}

static const conf_case cases[] = {
    CONF_CASE(main_exit_after_join),
    CONF_CASE(main_exit_before_worker),
    CONF_CASE(main_exit_worker_exits),
    CONF_CASE(fork_child_pthread_exit),
    CONF_CASE(threaded_fork_child_pthread_exit),
    CONF_CASE(handler_pthread_exit_only_thread),
    CONF_CASE(handler_pthread_exit_with_worker),
    CONF_CASE(exit_n),
    CONF_CASE(underscore_exit_n),
    CONF_CASE(return_from_main),
    CONF_CASE(abort_call),
    CONF_CASE(raise_sigterm),
    CONF_CASE(exit_from_thread),
    CONF_CASE(underscore_exit_from_thread),
    CONF_CASE(exec_from_threaded),
    CONF_CASE(exec_from_thread),
    CONF_CASE(exec_failure_continues),
};

int main(int argc, char **argv) {
  main_tid = conf_gettid();
  int rc = conf_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
  if (rc == 0 && argc == 2 && !strcmp(argv[1], "return_from_main")) return 5;
  return rc;
}
