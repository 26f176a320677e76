/* Descriptors: a program that closes or replaces every descriptor from 3
 * up (a daemon's start) keeps working and exits normally; open(2) returns
 * the lowest free descriptor. And what the probe changes (not compared,
 * CONF_DIFFERS; see docs/interposition.md): its descriptors in
 * /proc/self/fd and under RLIMIT_NOFILE, its thread in /proc/self/task,
 * its variables in the environment. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn;

/* Two threads that take turns through a cond 200 times, sleeping a bit:
 * waits and switches the probe records (and writes) after the program
 * took its descriptors. */
static void *ping(void *arg) {
  int me = (int)(long)arg;
  for (int i = 0; i < 100; i++) {
    pthread_mutex_lock(&lock);
    while (turn != me) pthread_cond_wait(&cond, &lock);
    turn = 1 - me;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    if (i % 10 == 0) conf_sleep_ms(2);
  }
  return NULL;
}

static void work(const char *after) {
  pthread_t a = conf_spawn(ping, (void *)0L), b = conf_spawn(ping, (void *)1L);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  if (after) say("threads worked after %s", after);
}

/* Where a daemon's loop stops: the soft limit, which is where the probe
 * keeps its own descriptors (capped to keep the case fast). */
static int fd_limit(void) {
  long n = sysconf(_SC_OPEN_MAX);
  return n < 0 || n > 65536 ? 65536 : (int)n;
}

static void close_range_all(void) {
  work("nothing");
  say("close_range -> %d", close_range(3, ~0U, 0));
  work("close_range(3, ~0U)");
}

/* The same with 300 ms of work afterwards: the probe has ticks left to
 * notice and reopen its capture before the end. */
static void close_range_then_work(void) {
  work("nothing");
  close_range(3, ~0U, 0);
  struct timespec end = conf_deadline(CLOCK_MONOTONIC, 300), now;
  int rounds = 0;
  do {
    work(rounds++ ? NULL : "close_range(3, ~0U), for 300 ms");
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
}

static void closefrom_all(void) {
  work("nothing");
  closefrom(3);
  work("closefrom(3)");
}

static void close_loop_all(void) {
  work("nothing");
  for (int fd = 3; fd < fd_limit(); fd++) close(fd);
  work("close() of every descriptor from 3");
}

static void dup2_devnull_all(void) {
  work("nothing");
  int null = open("/dev/null", O_RDWR);
  for (int fd = 3; fd < fd_limit(); fd++)
    if (fd != null) dup2(null, fd);
  work("dup2 of /dev/null over every descriptor from 3");
}

/* close(0) then open, for 300 ms: POSIX gives the lowest free descriptor,
 * 0, every time; a thread that opens and closes files meanwhile (the
 * probe's sampler reads /proc every tick) can take it in between. */
static void lowest_fd_reused(void) {
  int other = 0, rounds = 0;
  struct timespec end = conf_deadline(CLOCK_MONOTONIC, 300), now;
  do {
    for (int i = 0; i < 100; i++, rounds++) {
      close(0);
      int fd = open("/dev/null", O_RDONLY);
      if (fd != 0) {
        other++;
        if (fd > 0) close(fd);
      }
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
  say("close(0) + open() for 300 ms: another descriptor than 0 %s", other ? "some times" : "never");
  if (other) fprintf(stderr, "%d times in %d\n", other, rounds);
}

/* The program closes stdout and stderr, opens a file into fd 1 and writes
 * there: nothing of the probe's may land in it. */
static void stdout_replaced(void) {
  char path[] = "/tmp/threadmon-conf-stdout-XXXXXX";
  int keep = dup(1);
  int tmp = mkstemp(path);
  close(tmp);
  close(1);
  close(2);
  int fd = open(path, O_WRONLY | O_TRUNC);
  dprintf(fd, "fd %d\n", fd);
  pthread_t a = conf_spawn(ping, (void *)0L), b = conf_spawn(ping, (void *)1L);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  dprintf(fd, "done\n");
  close(fd);
  dup2(keep, 1);
  FILE *f = fopen(path, "r");
  char line[128];
  while (f && fgets(line, sizeof line, f)) printf("file: %s", line);
  fflush(stdout);
  if (f) fclose(f);
  unlink(path);
}

/* ---- what differs (shown, not compared) ---- */

static int count_dir(const char *path) {
  DIR *d = opendir(path);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    if (e->d_name[0] != '.') n++;
  if (d) closedir(d);
  return n - (strcmp(path, "/proc/self/fd") == 0); /* opendir's own */
}

static void fd_count(void) { say("open descriptors: %d", count_dir("/proc/self/fd")); }

/* The probe keeps its descriptors near the top of the soft limit: the
 * program's numbering stays. */
static void first_free_fd(void) {
  say("first free descriptor: %d", open("/dev/null", O_RDONLY));
  say("dup: %d", dup(1));
}

/* Under a tight limit the probe's descriptors cannot move above it: the
 * sampler's /proc reads take one of the program's numbers for a moment. */
static void nofile_limit(void) {
  struct rlimit rl = {16, 16};
  setrlimit(RLIMIT_NOFILE, &rl);
  int n = 0;
  while (open("/dev/null", O_RDONLY) >= 0) n++;
  say("RLIMIT_NOFILE 16: %d more descriptors, then %s", n, err_name(errno));
  work("running out of descriptors");
}

static void task_count(void) {
  say("threads in /proc/self/task: %d", count_dir("/proc/self/task"));
  pthread_t th = conf_spawn(ping, (void *)0L);
  say("with one more thread: %d", count_dir("/proc/self/task"));
  turn = 0;
  pthread_cancel(th);
  pthread_join(th, NULL);
}

static void environment(void) {
  extern char **environ;
  for (char **e = environ; *e; e++)
    if (!strncmp(*e, "THREADMON_", 10) || !strncmp(*e, "LD_PRELOAD=", 11)) {
      int len = (int)(strchr(*e, '=') - *e);
      say("set: %.*s", len, *e);
    }
}

/* A call that needs a single-threaded process (documented in
 * interposition.md): EINVAL under the probe, whose thread is there. Run in
 * a child so that the namespace does not stay. */
static void unshare_user_namespace(void) {
  pid_t pid = fork();
  if (pid == 0) {
    int rc = unshare(CLONE_NEWUSER);
    say("unshare(CLONE_NEWUSER) -> %d, errno %s", rc, rc ? err_name(errno) : "0");
    _exit(0);
  }
  waitpid(pid, NULL, 0);
}

static const conf_case cases[] = {
    CONF_CASE(close_range_all),
    CONF_CASE(close_range_then_work),
    CONF_CASE(closefrom_all),
    CONF_CASE(close_loop_all),
    CONF_CASE(dup2_devnull_all),
    CONF_CASE(stdout_replaced),
    CONF_CASE(first_free_fd),
    {"nofile_limit", nofile_limit, CONF_DIFFERS, 0},
    {"lowest_fd_reused", lowest_fd_reused, CONF_DIFFERS, 0},
    {"fd_count", fd_count, CONF_DIFFERS, 0},
    {"task_count", task_count, CONF_DIFFERS, 0},
    {"environment", environment, CONF_DIFFERS, 0},
    {"unshare_user_namespace", unshare_user_namespace, CONF_DIFFERS, 0},
};

int main(int argc, char **argv) {
  return conf_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
