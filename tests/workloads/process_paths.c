/* Ways a process ends or treats its descriptors that a preloaded probe must
 * survive (issue: never harm the target). Each mode runs two threads that
 * take a lock for a while, so the capture has something to show, then:
 *
 *   exit_call N      ends with _exit(N)
 *   fork_exit N      a forked child works, then _exit(N); the parent waits
 *                    and exits with the child's status
 *   pthread_exit     main joins the workers and calls pthread_exit (status 0)
 *   dup_all          dup2 of /dev/null over every descriptor from 3 to the
 *                    soft limit (a daemon's start), then works again
 *   close_all        close_range(3, ~0U, 0), then works again
 *   size_limit       ignores SIGXFSZ, caps its file size to 8 KiB, works,
 *                    lifts the cap and works again: a disk that filled up and
 *                    got space back
 *
 * Prints one line, the same with and without a probe: the mode, and whether
 * its threads got work done. */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long acquisitions;

static void *worker(void *arg) {
  long ms = (long)(intptr_t)arg;
  struct timespec end, now;
  clock_gettime(CLOCK_MONOTONIC, &end);
  end.tv_sec += ms / 1000;
  end.tv_nsec += (ms % 1000) * 1000000L;
  if (end.tv_nsec >= 1000000000L) {
    end.tv_sec++;
    end.tv_nsec -= 1000000000L;
  }
  do {
    pthread_mutex_lock(&lock);
    acquisitions++;
    struct timespec hold = {0, 200000};
    nanosleep(&hold, NULL);
    pthread_mutex_unlock(&lock);
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
  return NULL;
}

static void work(long ms) {
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)(intptr_t)ms);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
}

static void report(const char *mode) {
  printf("%s %s\n", mode, acquisitions > 0 ? "worked" : "did no work");
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: process_paths MODE [N]\n");
    return 2;
  }
  const char *mode = argv[1];
  int n = argc > 2 ? atoi(argv[2]) : 0;
  if (!strcmp(mode, "exit_call")) {
    work(200);
    report(mode);
    _exit(n);
  }
  if (!strcmp(mode, "fork_exit")) {
    pid_t pid = fork();
    if (pid == 0) {
      work(200);
      report("child");
      _exit(n);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    report(mode);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
  }
  if (!strcmp(mode, "pthread_exit")) {
    work(200);
    report(mode);
    pthread_exit(NULL);
  }
  if (!strcmp(mode, "dup_all") || !strcmp(mode, "close_all")) {
    work(100);
    if (!strcmp(mode, "dup_all")) {
      int null = open("/dev/null", O_RDWR);
      struct rlimit rl;
      getrlimit(RLIMIT_NOFILE, &rl);
      for (int fd = 3; fd < (int)rl.rlim_cur; fd++)
        if (fd != null) dup2(null, fd);
    } else {
      close_range(3, ~0U, 0);
    }
    work(300);
    report(mode);
    return 0;
  }
  if (!strcmp(mode, "size_limit")) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    struct rlimit small = {8 * 1024, rl.rlim_max}; /* under 400 ms of compressed capture */
    setrlimit(RLIMIT_FSIZE, &small);
    work(400);
    setrlimit(RLIMIT_FSIZE, &rl);
    work(400);
    report(mode);
    return 0;
  }
  fprintf(stderr, "process_paths: unknown mode %s\n", mode);
  return 2;
}
