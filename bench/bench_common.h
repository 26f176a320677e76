/* Helpers shared by the benchmark programs: a clock, CPU pinning and the
 * idle thread that keeps glibc on its multi-threaded (atomic) lock path. */
#ifndef THREADMON_BENCH_COMMON_H
#define THREADMON_BENCH_COMMON_H

#include <stdint.h>

uint64_t bench_now_ns(void);

/* CPU time of the calling thread. Single-threaded loops are timed with it so
 * that being preempted by other work on this shared 2-core machine does not
 * count as lock cost. */
uint64_t bench_thread_cpu_ns(void);

/* Starts a thread that blocks until the process exits. glibc skips the lock
 * atomics while __libc_single_threaded is set, which would make any wrapper
 * look far more expensive than it is in a real threaded program. */
void bench_start_idle_thread(void);

/* Pins the calling thread to one CPU; returns 0 on success. */
int bench_pin_to_cpu(int cpu);

/* Run time (ns, from /proc/self/task/TID/schedstat) of this process's
 * threads whose name starts with prefix; how many in *n. */
uint64_t bench_probe_cpu_ns(const char *prefix, int *n);

/* Parses a positive count; exits with a message on bad input. */
long bench_parse_count(const char *text, const char *what);

#endif
