/* Per-thread perf counters: software (task clock, page faults) always
 * user-only (exclude_kernel, allowed unprivileged), hardware (cycles,
 * instructions) when the machine has a PMU we may use. Descriptors count
 * against the probe's fd budget; threads beyond it go without. */
#ifndef THREADMON_PERF_COUNTERS_H
#define THREADMON_PERF_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { TM_PC_TASK_CLOCK, TM_PC_FAULTS, TM_PC_CYCLES, TM_PC_INSTRUCTIONS, TM_PC_COUNT };

/* Two groups, (task clock, faults) and (cycles, instructions): the
 * sampler reads each group with one read() on its leader, the first of the
 * pair; a member whose leader failed to open stands alone. */
typedef struct tm_perf_counters {
  int fd[TM_PC_COUNT];
  bool grouped[TM_PC_COUNT]; /* leader: read returns the whole group */
} tm_perf_counters;

typedef struct tm_perf_values {
  uint64_t v[TM_PC_COUNT];
} tm_perf_values;

/* Probes what this process may open (on the calling thread). Sets
 * software and hardware, and writes a line into why for what is missing. */
void tm_perf_counters_probe(bool *software, bool *hardware, char *why, size_t n);

/* Opens the available counters for one thread; absent ones stay -1. A
 * closed-then-reopened set must be cleared with tm_perf_counters_close. */
void tm_perf_counters_open(tm_perf_counters *c, uint32_t tid, bool software, bool hardware);
void tm_perf_counters_read(tm_perf_counters *c, tm_perf_values *out);
void tm_perf_counters_close(tm_perf_counters *c);

#endif
