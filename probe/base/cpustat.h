/* Per-CPU times from /proc/stat, kept open and re-read every tick. */
#ifndef THREADMON_CPUSTAT_H
#define THREADMON_CPUSTAT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct tm_cpu_times {
  uint32_t cpu;
  uint64_t user_ns, nice_ns, system_ns, idle_ns, iowait_ns, irq_ns, softirq_ns,
      steal_ns;
} tm_cpu_times;

typedef struct tm_cpustat {
  int fd;
  char *buf;
  unsigned buf_size;
  tm_cpu_times *cpus;
  unsigned cap, count;
} tm_cpustat;

bool tm_cpustat_open(tm_cpustat *c);
/* Re-reads /proc/stat into c->cpus[0..count). Returns false on failure. */
bool tm_cpustat_read(tm_cpustat *c);
void tm_cpustat_close(tm_cpustat *c);

/* Parses the "cpuN ..." lines of a /proc/stat text; returns how many CPUs
 * were stored (at most cap). */
unsigned tm_cpustat_parse(const char *text, tm_cpu_times *out, unsigned cap);

#endif
