/* starved: a thread that is alive the whole run but never gets to work.
 *
 * --how idle (default): "starved-0" is a SCHED_IDLE thread pinned to CPU 0
 * together with --busy normal threads that spin there for --duration-ms of
 * wall time. The scheduler runs a SCHED_IDLE thread only when nothing else
 * wants the CPU (weight 3 against 1024 per busy thread). It loops on
 * sched_yield(): always ready to run, but each time it is picked it hands
 * the CPU back, so its on-CPU share stays far below a scheduler slice per
 * second on an idle machine as on a loaded one.
 * --how read: "starved-0" blocks in read() on a pipe nobody writes to until
 * the end: a thread stuck in the kernel, not in any pthread call.
 * --how child: "starved-0" forks a process that reads that pipe and waits
 * for it in waitpid(): a parent waiting for its worker, which is no problem.
 *
 * main joins the busy threads (a pthread wait, unlike starved-0's), then
 * stops starved-0 (a flag, or one byte down the pipe) and joins it. The
 * truth is starved-0's own CPU time and lifetime.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl.h"

static int wake_pipe[2];
static double duration_ms = 1000;
static int use_read; /* read, or child: starved-0 blocks until main writes the pipe */
static int use_child;
static atomic_int stop;

typedef struct starved_truth {
  pid_t tid;
  double lifetime_s, cpu_s;
  long yields;
} starved_truth;

static starved_truth victim;

static void pin_to_cpu0(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  wl_check(pthread_setaffinity_np(pthread_self(), sizeof set, &set), "pthread_setaffinity_np");
}

static void *starve(void *arg) {
  (void)arg;
  wl_name_self("starved", 0);
  victim.tid = gettid();
  double start = wl_now_s(), cpu0 = wl_thread_cpu_s();
  if (use_child) {
    pid_t child = fork();
    if (child == 0) {
      char byte;
      _exit(read(wake_pipe[0], &byte, 1) == 1 ? 0 : 1);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
      fprintf(stderr, "starved: the child process failed\n");
  } else if (use_read) {
    char byte;
    if (read(wake_pipe[0], &byte, 1) != 1) perror("starved: read");
  } else {
    pin_to_cpu0();
    struct sched_param param = {0};
    wl_check(pthread_setschedparam(pthread_self(), SCHED_IDLE, &param), "SCHED_IDLE");
    while (!atomic_load(&stop)) {
      sched_yield();
      victim.yields++;
    }
  }
  victim.cpu_s = wl_thread_cpu_s() - cpu0;
  victim.lifetime_s = wl_now_s() - start;
  return NULL;
}

/* Spins for wall time, not CPU time, so the run lasts --duration-ms however
 * loaded CPU 0 is. */
static void *busy(void *arg) {
  wl_name_self("busy", (int)(long)arg);
  if (!use_read) pin_to_cpu0();
  double until = wl_now_s() + duration_ms * 1e-3;
  while (wl_now_s() < until) wl_busy_loop(2000);
  /* Stop starved-0 before CPU 0 frees up, or it would run (yield) there
   * until main wakes from the join. */
  atomic_store(&stop, 1);
  return NULL;
}

int main(int argc, char **argv) {
  int busy_threads = 2;
  const char *how = "idle";
  const wl_flag flags[] = {
      {"how", WL_STRING, &how,
       "idle (SCHED_IDLE behind busy threads), read (stuck in read()) or child (waits for a "
       "child process)"},
      {"duration-ms", WL_DOUBLE, &duration_ms, "wall time the busy threads spin"},
      {"busy", WL_INT, &busy_threads, "threads spinning meanwhile (on CPU 0 with --how idle)"},
  };
  wl_parse_flags(argc, argv, "A thread stays alive without getting to run.", flags,
                 (int)(sizeof flags / sizeof flags[0]));
  if (strcmp(how, "idle") != 0 && strcmp(how, "read") != 0 && strcmp(how, "child") != 0) {
    fprintf(stderr, "starved: --how must be idle, read or child, not %s\n", how);
    return 2;
  }
  use_child = strcmp(how, "child") == 0;
  use_read = strcmp(how, "read") == 0 || use_child;
  if (busy_threads < 1) {
    fprintf(stderr, "starved: need at least one busy thread\n");
    return 2;
  }
  if (pipe(wake_pipe) != 0) {
    perror("starved: pipe");
    return 1;
  }
  pthread_t *bs = calloc((size_t)busy_threads, sizeof *bs);
  if (!bs) return 1;
  double start = wl_now_s();
  for (int i = 0; i < busy_threads; i++)
    wl_check(pthread_create(&bs[i], NULL, busy, (void *)(long)i), "pthread_create");
  pthread_t s;
  wl_check(pthread_create(&s, NULL, starve, NULL), "pthread_create");
  for (int i = 0; i < busy_threads; i++) wl_check(pthread_join(bs[i], NULL), "pthread_join");
  atomic_store(&stop, 1);
  if (!use_read) {
    /* A SCHED_IDLE thread pinned to a CPU other programs keep busy may not
     * see the flag for a second: back to normal and free to move, it ends
     * at once. Unprivileged threads may return to SCHED_OTHER (RLIMIT_NICE
     * permitting); if not, it just ends later. */
    struct sched_param param = {0};
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++) CPU_SET(c, &all);
    (void)pthread_setschedparam(s, SCHED_OTHER, &param);
    (void)pthread_setaffinity_np(s, sizeof all, &all);
  }
  if (write(wake_pipe[1], "x", 1) != 1) perror("starved: write");
  wl_check(pthread_join(s, NULL), "pthread_join");
  printf("{\"workload\":\"starved\",\"wall_s\":%.6f,\"how\":\"%s\",\"busy\":%d,\"starved\":{"
         "\"tid\":%d,\"name\":\"starved-0\",\"lifetime_s\":%.6f,\"cpu_s\":%.6f,\"on_cpu_pct\":%.3f,"
         "\"yields\":%ld}}\n",
         wl_now_s() - start, how, busy_threads, (int)victim.tid, victim.lifetime_s, victim.cpu_s,
         100.0 * victim.cpu_s / victim.lifetime_s, victim.yields);
  free(bs);
  return 0;
}
