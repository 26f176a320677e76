/* tm-bench-create: what a pthread_create + pthread_join of a thread that
 * does nothing costs, in CPU time of the program's own threads (the
 * creating thread and the created ones), so that a probe's sampler thread,
 * preemption by other work on a shared machine and cross-CPU wake-up
 * latency do not count.
 *
 *   tm-bench-create OPS [WARMUP_MS [PROBE_COMM_PREFIX]]
 *
 * WARMUP_MS (default 0): create+joins for that long first, untimed (the
 * probe stops its switch records after a second of it: the steady state
 * comes after). Prints one JSON line: wall ns per create+join, the program's CPU ns per
 * create+join (the process's CPU time, ended threads included, less that
 * of the threads named PROBE_COMM_PREFIX*, default "threadmon"), and those
 * threads' CPU ns per create+join. */
#include "bench_common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static uint64_t process_cpu_ns(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
         (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

static void *noop_thread(void *arg) { return arg; }

static void create_join(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, noop_thread, NULL) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    exit(2);
  }
  pthread_join(t, NULL);
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: tm-bench-create OPS [WARMUP_MS [PROBE_COMM_PREFIX]]\n");
    return 2;
  }
  long ops = bench_parse_count(argv[1], "OPS");
  long warmup_ms = argc > 2 ? atol(argv[2]) : 0;
  const char *prefix = argc > 3 ? argv[3] : "threadmon";
  bench_start_idle_thread();
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
