/* New processes: fork from a single-threaded program whose child gets a
 * signal at once (its handler uses stdio and malloc), fork from a threaded
 * program and from a thread (the child uses malloc, stdio and threads),
 * vfork with exec or _exit, _Fork, posix_spawn, system, popen, and how a
 * child's buffered output survives exit or not _exit, the wait family. The parent prints
 * each child's status after waiting for it, so the output order is fixed. */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf.h"

extern char **environ;

static void report_child(pid_t pid, const char *what) {
  int status;
  pid_t got = waitpid(pid, &status, 0);
  if (got != pid)
    say("%s: waitpid failed", what);
  else if (WIFEXITED(status))
    say("%s: exited %d", what, WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    say("%s: killed by signal %d", what, WTERMSIG(status));
  else
    say("%s: status %#x", what, status);
}

/* ---- a signal at once in the child of a single-threaded program ---- */

static volatile sig_atomic_t got_signal;

static void printing_handler(int sig) {
  char *p = malloc(64);
  snprintf(p, 64, "handler: signal %d", sig);
  printf("  %s\n", p);
  fflush(stdout);
  free(p);
  got_signal = 1;
}

static void single_threaded_child_signal(void) {
  signal(SIGUSR1, printing_handler);
  for (int i = 0; i < 10; i++) {
    pid_t pid = fork();
    if (pid == 0) {
      while (!got_signal) conf_sleep_ms(1);
      char *p = malloc(100);
      snprintf(p, 100, "child %d: back in main", i);
      say("  %s", p);
      free(p);
      exit(0);
    }
    kill(pid, SIGUSR1);
    char what[32];
    snprintf(what, sizeof what, "child %d", i);
    report_child(pid, what);
  }
}

/* A single-threaded program's child that itself forks and prints. */
static void single_threaded_grandchild(void) {
  pid_t pid = fork();
  if (pid == 0) {
    pid_t grandchild = fork();
    if (grandchild == 0) {
      say("grandchild runs");
      exit(3);
    }
    report_child(grandchild, "grandchild");
    exit(4);
  }
  report_child(pid, "child");
}

/* ---- fork while other threads use malloc and stdio ---- */

static atomic_int stop;

static void *malloc_stdio_loop(void *arg) {
  FILE *devnull = fopen("/dev/null", "w");
  while (!atomic_load(&stop)) {
    char *p = malloc(256 + (size_t)(uintptr_t)arg * 64);
    snprintf(p, 256, "busy %p", (void *)p);
    fprintf(devnull, "%s\n", p);
    free(p);
  }
  fclose(devnull);
  return NULL;
}

static pthread_t busy[3];

static void start_busy(void) {
  for (int i = 0; i < 3; i++) busy[i] = conf_spawn(malloc_stdio_loop, (void *)(uintptr_t)i);
}

static void stop_busy(void) {
  atomic_store(&stop, 1);
  for (int i = 0; i < 3; i++) pthread_join(busy[i], NULL);
}

static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t child_cond = PTHREAD_COND_INITIALIZER;
static int child_turn;

static void *child_thread(void *arg) {
  pthread_mutex_lock(&child_lock);
  child_turn = 1;
  pthread_cond_signal(&child_cond);
  pthread_mutex_unlock(&child_lock);
  return arg;
}

/* What a forked child does: malloc, stdio, a thread and a cond wait. */
static void child_work(int i) {
  char *p = malloc(1000);
  snprintf(p, 1000, "child %d: malloc and stdio work", i);
  say("  %s", p);
  free(p);
  pthread_t th = conf_spawn(child_thread, (void *)(intptr_t)i);
  pthread_mutex_lock(&child_lock);
  while (!child_turn) pthread_cond_wait(&child_cond, &child_lock);
  pthread_mutex_unlock(&child_lock);
  void *ret;
  pthread_join(th, &ret);
  say("  child %d: its thread returned %ld", i, (long)(intptr_t)ret);
}

static void threaded_fork(void) {
  start_busy();
  for (int i = 0; i < 10; i++) {
    pid_t pid = fork();
    if (pid == 0) {
      child_work(i);
      exit(i);
    }
    char what[32];
    snprintf(what, sizeof what, "child %d", i);
    report_child(pid, what);
  }
  stop_busy();
}

static void *forking_thread(void *arg) {
  pid_t pid = fork();
  if (pid == 0) {
    child_work(1);
    exit(3);
  }
  report_child(pid, "child of a thread");
  return arg;
}

static void fork_from_thread(void) {
  start_busy();
  pthread_join(conf_spawn(forking_thread, NULL), NULL);
  stop_busy();
}

/* ---- vfork, _Fork, posix_spawn, system, popen ---- */

static void vfork_exec(void) {
  start_busy();
  pid_t pid = vfork();
  if (pid == 0) {
    execl("/bin/echo", "echo", "vfork child's exec ran", (char *)NULL);
    _exit(127);
  }
  report_child(pid, "vfork+exec");
  stop_busy();
}

static void vfork_underscore_exit(void) {
  start_busy();
  pid_t pid = vfork();
  if (pid == 0) _exit(5);
  report_child(pid, "vfork+_exit");
  stop_busy();
}

static void underscore_fork(void) {
  start_busy();
  pid_t pid = _Fork();
  if (pid == 0) _exit(4);
  report_child(pid, "_Fork+_exit");
  stop_busy();
}

static void spawn(void) {
  start_busy();
  pid_t pid;
  char *argv[] = {"sh", "-c", "echo spawned shell ran; exit 3", NULL};
  int rc = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
  if (rc == 0) report_child(pid, "posix_spawn");
  say("posix_spawn: %s", err_name(rc));

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  char *argv2[] = {"echo", "not seen", NULL};
  rc = posix_spawnp(&pid, "echo", &fa, NULL, argv2, environ);
  if (rc == 0) report_child(pid, "posix_spawnp to /dev/null");
  say("posix_spawnp: %s", err_name(rc));
  posix_spawn_file_actions_destroy(&fa);

  char *argv3[] = {"nonexistent", NULL};
  rc = posix_spawn(&pid, "/nonexistent/program", NULL, NULL, argv3, environ);
  say("posix_spawn of a missing program: %s", err_name(rc));
  stop_busy();
}

static void system_and_popen(void) {
  start_busy();
  int status = system("echo system ran; exit 2");
  say("system: exited %d", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  FILE *f = popen("echo popen line", "r");
  char line[64] = "";
  if (f && fgets(line, sizeof line, f)) line[strcspn(line, "\n")] = 0;
  say("popen read: %s", line);
  say("pclose: %d", f ? pclose(f) : -1);
  stop_busy();
}

/* ---- a child's stdio buffer at exit and _exit ---- */

static void child_buffers(void) {
  conf_spawn(malloc_stdio_loop, NULL); /* threaded, never joined */
  pid_t pid = fork();
  if (pid == 0) {
    printf("child's buffered line, flushed by exit\n");
    exit(6);
  }
  report_child(pid, "exit");
  pid = fork();
  if (pid == 0) {
    printf("child's buffered line, lost by _exit\n");
    _exit(7);
  }
  report_child(pid, "_exit");
  pid = fork();
  if (pid == 0) {
    printf("child's buffered line, flushed when its last thread exits\n");
    pthread_exit(NULL); /* the child's only thread: exit status 0 */
  }
  report_child(pid, "pthread_exit");
  exit(0);
}

/* ---- the program's atfork handlers, process-shared objects ---- */

static int atfork_trace[8], atfork_n;

static void prepare_1(void) { atfork_trace[atfork_n++] = 1; }
static void prepare_2(void) { atfork_trace[atfork_n++] = 2; }
static void parent_1(void) { atfork_trace[atfork_n++] = 11; }
static void parent_2(void) { atfork_trace[atfork_n++] = 12; }
static void child_1(void) {
  atfork_trace[atfork_n++] = 21;
  free(malloc(100)); /* malloc works in a child handler */
}
static void child_2(void) { atfork_trace[atfork_n++] = 22; }

static void say_trace(const char *who) {
  char line[64];
  size_t used = (size_t)snprintf(line, sizeof line, "%s ran handlers:", who);
  for (int i = 0; i < atfork_n; i++)
    used += (size_t)snprintf(line + used, sizeof line - used, " %d", atfork_trace[i]);
  say("%s", line);
}

static void atfork_handlers(void) {
  start_busy();
  pthread_atfork(prepare_1, parent_1, child_1);
  pthread_atfork(prepare_2, parent_2, child_2);
  pid_t pid = fork();
  if (pid == 0) {
    say_trace("child");
    exit(0);
  }
  report_child(pid, "child");
  say_trace("parent");
  stop_busy();
}

/* A robust mutex and a semaphore in memory shared with a child: the child
 * dies holding the mutex, then posts from a second child. */
static void process_shared_objects(void) {
  struct shared {
    pthread_mutex_t m;
    sem_t s;
  } *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&sh->m, &a);
  sem_init(&sh->s, 1, 0);
  start_busy();
  pid_t pid = fork();
  if (pid == 0) {
    pthread_mutex_lock(&sh->m);
    _exit(0); /* dies holding it */
  }
  report_child(pid, "child holding the mutex");
  int rc = pthread_mutex_lock(&sh->m);
  say("lock after the owner died: %s", err_name(rc));
  if (rc == EOWNERDEAD) say("consistent: %s", err_name(pthread_mutex_consistent(&sh->m)));
  say("unlock: %s", err_name(pthread_mutex_unlock(&sh->m)));
  pid = fork();
  if (pid == 0) {
    conf_sleep_ms(20);
    sem_post(&sh->s);
    _exit(0);
  }
  say("sem_wait for the child's post: %d", sem_wait(&sh->s));
  report_child(pid, "posting child");
  stop_busy();
}

/* The wait family, which the probe wraps (a child killed by a signal gets
 * its end line from its parent): the statuses, the usage, WNOHANG with
 * nothing to reap, NULL status and info, and ECHILD are the real calls'. */
static pid_t child_exiting(int code, int ms) {
  pid_t pid = fork();
  if (pid == 0) {
    conf_sleep_ms(ms);
    _exit(code);
  }
  return pid;
}

static void wait_family(void) {
  /* Each call before the say() that prints it: arguments are evaluated in
   * no fixed order. */
  int status = 0;
  pid_t pid = child_exiting(7, 0);
  pid_t got = wait(&status);
  say("wait: %s, exited %d", got == pid ? "the child" : "another", WEXITSTATUS(status));
  pid = child_exiting(0, 200);
  errno = 0;
  got = waitpid(pid, &status, WNOHANG);
  say("waitpid WNOHANG before it ends: %d, errno %d", (int)got, errno);
  kill(pid, SIGKILL);
  got = waitpid(pid, NULL, 0);
  say("waitpid NULL status: %s", got == pid ? "the child" : "another");
  pid = child_exiting(3, 0);
  struct rusage ru;
  memset(&ru, 0xff, sizeof ru);
  got = wait4(pid, &status, 0, &ru);
  say("wait4: %s, exited %d, usage filled %d", got == pid ? "the child" : "another",
      WEXITSTATUS(status), ru.ru_utime.tv_sec >= 0 && ru.ru_utime.tv_usec < 1000000);
  pid = child_exiting(0, 200);
  kill(pid, SIGTERM);
  siginfo_t info;
  memset(&info, 0, sizeof info);
  int rc = waitid(P_PID, (id_t)pid, &info, WEXITED);
  say("waitid: %d, code %s, status %d", rc, info.si_code == CLD_KILLED ? "killed" : "other",
      info.si_status);
  pid = child_exiting(5, 0);
  got = wait3(&status, 0, NULL);
  say("wait3: %s, exited %d", got == pid ? "the child" : "another", WEXITSTATUS(status));
  errno = 0;
  got = waitpid(-1, &status, 0);
  say("waitpid with no child: %d, %s", (int)got, errno == ECHILD ? "ECHILD" : "other errno");
  errno = 0;
  rc = waitid(P_ALL, 0, &info, WEXITED);
  say("waitid with no child: %d, %s", rc, errno == ECHILD ? "ECHILD" : "other errno");
}

static const conf_case cases[] = {
    CONF_CASE(single_threaded_child_signal),
    CONF_CASE(single_threaded_grandchild),
    CONF_CASE(threaded_fork),
    CONF_CASE(fork_from_thread),
    CONF_CASE(vfork_exec),
    CONF_CASE(vfork_underscore_exit),
    CONF_CASE(underscore_fork),
    CONF_CASE(spawn),
    CONF_CASE(system_and_popen),
    CONF_CASE(child_buffers),
    CONF_CASE(atfork_handlers),
    CONF_CASE(process_shared_objects),
    {"wait_family", wait_family, CONF_SIGNALLED_CHILD, 0},
};

int main(int argc, char **argv) {
  return conf_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
