/* tm-bench-create: what a pthread_create + pthread_join of a thread that
 * does nothing costs, in CPU time of the program's own threads (the
 * creating thread and the created ones), so that a probe's sampler thread,
 * preemption by other work on a shared machine and cross-CPU wake-up
 * latency do not count.
 *
 *   tm-bench-create [--inherit-events] OPS [WARMUP_MS [PROBE_COMM_PREFIX]]
 *
 * --inherit-events: without any probe, first open what the probe opens for
 * its switch records (a dummy event with context_switch, inherited by new
 * threads, one per CPU, each with a mapped ring): the kernel's share of a
 * create+join under the probe, alone.
 * WARMUP_MS (default 0): create+joins for that long first, untimed (the
 * probe stops its switch records after a second of it: the steady state
 * comes after). Prints one JSON line: wall ns per create+join, the program's CPU ns per
 * create+join (the process's CPU time, ended threads included, less that
 * of the threads named PROBE_COMM_PREFIX*, default "threadmon"), and those
 * threads' CPU ns per create+join. */
#include "bench_common.h"

#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t process_cpu_ns(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
         (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

static void *noop_thread(void *arg) { return arg; }

/* The probe's switch events (probe/base/perf_switch.c), kept open until exit. */
static void open_inherited_events(void) {
  long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  for (long c = 0; c < ncpu; c++) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
    a.sample_id_all = a.context_switch = a.exclude_kernel = 1;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    a.inherit = a.inherit_thread = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, getpid(), (int)c, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
      perror("perf_event_open");
      exit(2);
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (mmap(NULL, 17 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED) {
      perror("mmap of the perf ring");
      exit(2);
    }
  }
}

static void create_join(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, noop_thread, NULL) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    exit(2);
  }
  pthread_join(t, NULL);
}

int main(int argc, char **argv) {
  bool events = argc > 1 && strcmp(argv[1], "--inherit-events") == 0;
  if (events) {
    argv++;
    argc--;
  }
  if (argc < 2 || argc > 4) {
    fprintf(stderr,
            "usage: tm-bench-create [--inherit-events] OPS [WARMUP_MS [PROBE_COMM_PREFIX]]\n");
    return 2;
  }
  long ops = bench_parse_count(argv[1], "OPS");
  long warmup_ms = argc > 2 ? atol(argv[2]) : 0;
  const char *prefix = argc > 3 ? argv[3] : "threadmon";
  bench_start_idle_thread();
  if (events) open_inherited_events();
  for (uint64_t end = bench_now_ns() + (uint64_t)warmup_ms * 1000000u; bench_now_ns() < end;)
    create_join();
  int probe_threads = 0;
  uint64_t probe0 = bench_probe_cpu_ns(prefix, &probe_threads);
  uint64_t cpu0 = process_cpu_ns(), t0 = bench_now_ns();
  for (long i = 0; i < ops; i++) create_join();
  uint64_t t1 = bench_now_ns(), cpu1 = process_cpu_ns();
  uint64_t probe1 = bench_probe_cpu_ns(prefix, &probe_threads);
  double program = (double)(cpu1 - cpu0) - (double)(probe1 - probe0);
  printf("{\"bench\":\"create-join\",\"ops\":%ld,\"wall_ns_per_op\":%.1f,"
         "\"cpu_ns_per_op\":%.1f,\"probe_cpu_ns_per_op\":%.1f,\"probe_threads\":%d}\n",
         ops, (double)(t1 - t0) / (double)ops, program / (double)ops,
         (double)(probe1 - probe0) / (double)ops, probe_threads);
  return 0;
}
