/* tm-bench-fork: a program that forks many short-lived children one after
 * another, as shells, build tools and pre-fork servers do; measures what each
 * child costs.
 *
 *   tm-bench-fork CHILDREN EXIT WORK_US
 *
 * EXIT: _exit (the usual end of a forked child) or exit. Each child spins
 * for WORK_US microseconds of CPU, then ends; the parent waits for it before
 * forking the next. Prints one JSON line: wall time per child (fork to
 * reaped) and the CPU time of parent and children together, per child. */
#include "bench_common.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static double cpu_ns(int who) {
  struct rusage ru;
  getrusage(who, &ru);
  return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[2], "_exit") && strcmp(argv[2], "exit"))) {
    fprintf(stderr, "usage: tm-bench-fork CHILDREN _exit|exit WORK_US\n");
    return 2;
  }
  long children = bench_parse_count(argv[1], "CHILDREN");
  bool use_exit = !strcmp(argv[2], "exit");
  long work_ns = atol(argv[3]) * 1000L;
  double cpu_before = cpu_ns(RUSAGE_SELF) + cpu_ns(RUSAGE_CHILDREN);
  uint64_t start = bench_now_ns();
  long failed = 0;
  for (long i = 0; i < children; i++) {
    pid_t pid = fork();
    if (pid == 0) {
      uint64_t end = bench_thread_cpu_ns() + (uint64_t)work_ns;
      while (bench_thread_cpu_ns() < end) {
      }
      if (use_exit) exit(0);
      _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
      failed++;
  }
  double wall = (double)(bench_now_ns() - start);
  double cpu = cpu_ns(RUSAGE_SELF) + cpu_ns(RUSAGE_CHILDREN) - cpu_before;
  printf("{\"children\": %ld, \"failed\": %ld, \"wall_us_per_child\": %.1f, "
         "\"cpu_us_per_child\": %.1f}\n",
         children, failed, wall / 1e3 / (double)children, cpu / 1e3 / (double)children);
  return failed ? 1 : 0;
}
