/* perf_event_open for the sampler: one helper shared by perf_switch.c and
 * perf_counters.c. */
#ifndef THREADMON_PERF_H
#define THREADMON_PERF_H

#include <linux/perf_event.h>
#include <sys/types.h>

/* Opens an event; returns the descriptor (moved high, close-on-exec) or -1
 * with errno set. counted: charge the descriptor to the fd budget. */
int tm_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int flags, int counted);

#endif
