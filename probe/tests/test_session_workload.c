/* The program the session and transport tests run under the probe.
 *   contend MS STATUS  4 threads share a mutex for MS ms, exit(STATUS)
 *   forever            contend until killed
 *   fork               a forked child creates a thread; both exit 0 (with
 *                      THREADMON_FOLLOW=0 the child exits 3 if it still
 *                      holds its parent's capture or a perf event)
 *   exec PATH          threads, then execv(PATH, {PATH, "contend", "50", "0"})
 *   yield MS           2 threads on CPU 0 yield to each other for MS ms
 *   late MS FILE       main, on CPU 0, creates a thread for CPU 0 and keeps
 *                      the CPU for MS ms; writes "before after first tid"
 *                      (CLOCK_MONOTONIC ns around pthread_create, the
 *                      thread's first moment on a CPU, its tid) to FILE
 *   inherit FILE       main takes SCHED_BATCH, nice 4 and CPU 0, then
 *                      creates two threads that live 50 ms: one with no
 *                      attr, one with an attr for CPU 0; writes their tids
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether a descriptor of this process names a capture or a perf event. */
static bool holds_parents_session(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return true;
  bool found = false;
  struct dirent *e;
  while ((e = readdir(d))) {
    char path[300], target[512];
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    if (strstr(target, ".tmcap") || strstr(target, "perf_event")) {
      fprintf(stderr, "child holds fd %s -> %s\n", e->d_name, target);
      found = true;
    }
  }
  closedir(d);
  return found;
}
static volatile long counter;
static volatile int stop;

static void *worker(void *arg) {
  (void)arg;
  while (!stop) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < 200; i++) counter++;
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

static void contend(long ms) {
  pthread_t t[4];
  stop = 0;
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, NULL);
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  if (ms >= 0) {
    nanosleep(&ts, NULL);
    stop = 1;
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  } else {
    for (;;) pause();
  }
}

static void *yielder(void *arg) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  sched_setaffinity(0, sizeof set, &set);
  while (!stop) sched_yield();
  return arg;
}

/* Tens of thousands of context switches a second, for the switch limit. */
static void yield_for(long ms) {
  pthread_t t[2];
  stop = 0;
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, yielder, NULL);
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  stop = 1;
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t first_run_ns;
static volatile pid_t late_tid;

static void *late_child(void *arg) {
  first_run_ns = now_ns();
  late_tid = gettid();
  return arg;
}

/* Puts the caller on CPU 0 and makes attr ask for CPU 0 too. */
static bool pin_to_cpu0(pthread_attr_t *attr) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) return false;
  pthread_attr_init(attr);
  pthread_attr_setaffinity_np(attr, sizeof set, &set);
  return true;
}

/* A thread that waits for its first CPU: its life starts at the create. */
static int late_start(long ms, const char *file) {
  pthread_attr_t attr;
  if (!pin_to_cpu0(&attr)) return 97;
  pthread_t t;
  uint64_t before = now_ns();
  if (pthread_create(&t, &attr, late_child, NULL) != 0) return 96;
  uint64_t after = now_ns();
  while (now_ns() - after < (uint64_t)ms * 1000000u) {
  }
  pthread_join(t, NULL);
  FILE *f = fopen(file, "w");
  if (!f) return 95;
  fprintf(f, "%llu %llu %llu %d\n", (unsigned long long)before, (unsigned long long)after,
          (unsigned long long)first_run_ns, (int)late_tid);
  return fclose(f) == 0 ? 0 : 94;
}

static void *inheritor(void *arg) {
  *(volatile pid_t *)arg = gettid();
  struct timespec ts = {0, 50000000};
  nanosleep(&ts, NULL);
  return NULL;
}

/* Attributes a new thread inherits from its creator without ever setting
 * them itself: what it started with must reach the stream. */
static int inherit(const char *file) {
  struct sched_param sp = {0};
  if (sched_setscheduler(0, SCHED_BATCH, &sp) != 0) return 97;
  if (setpriority(PRIO_PROCESS, 0, 4) != 0) return 96;
  pthread_attr_t attr;
  if (!pin_to_cpu0(&attr)) return 95;
  pid_t tids[2] = {0, 0};
  pthread_t t[2];
  if (pthread_create(&t[0], NULL, inheritor, &tids[0]) != 0) return 94;
  if (pthread_create(&t[1], &attr, inheritor, &tids[1]) != 0) return 93;
  pthread_attr_destroy(&attr);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  FILE *f = fopen(file, "w");
  if (!f) return 92;
  fprintf(f, "%d %d\n", (int)tids[0], (int)tids[1]);
  return fclose(f) == 0 ? 0 : 91;
}

int main(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[1], "inherit")) return inherit(argv[2]);
  if (argc >= 4 && !strcmp(argv[1], "late")) return late_start(atol(argv[2]), argv[3]);
  if (argc >= 3 && !strcmp(argv[1], "yield")) {
    yield_for(atol(argv[2]));
    return 0;
  }
  if (argc >= 4 && !strcmp(argv[1], "contend")) {
    contend(atol(argv[2]));
    return atoi(argv[3]);
  }
  if (argc >= 2 && !strcmp(argv[1], "forever")) contend(-1);
  if (argc >= 2 && !strcmp(argv[1], "fork")) {
    contend(50);
    pid_t pid = fork();
    if (pid == 0) {
      contend(80);
      const char *follow = getenv("THREADMON_FOLLOW");
      return follow && !strcmp(follow, "0") && holds_parents_session() ? 3 : 0;
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
  }
  if (argc >= 3 && !strcmp(argv[1], "exec")) {
    contend(50);
    execl(argv[2], argv[2], "contend", "50", "5", (char *)NULL);
    perror("execl");
    return 98;
  }
  fprintf(stderr,
          "usage: %s contend MS STATUS | forever | fork | exec PATH | yield MS | late MS FILE | "
          "inherit FILE\n",
          argv[0]);
  return 2;
}
