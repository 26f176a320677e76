/* The task rescan: threads no wrapper saw (made inside libc, by raw clone)
 * and threads that left without passing one, from a listing of the
 * process's task directory (tm_proc: this process or another). Listing
 * 10,000 threads costs ~3 ms, reading the kernel's thread count a few
 * microseconds: the listing is made only when that count is not the
 * number of threads known, or every RESCAN_QUIET_NS anyway.
 * Sampler-thread only. */
#ifndef THREADMON_TASK_RESCAN_H
#define THREADMON_TASK_RESCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "thread_state.h"

#define RESCAN_NS 1000000000ull /* how often the count is looked at: ~1 s */
#define RESCAN_QUIET_NS 10000000000ull

typedef struct tid_set { /* kept sorted */
  uint32_t *v;
  size_t n, cap;
} tid_set;

typedef struct tm_rescan {
  tid_set seen_now, unknown_now, unknown_before;
  uint64_t last_rescan_ns, last_listing_ns;
  uint32_t known_live; /* the last walk's count of live threads */
  uint32_t listings;   /* listings made, for tests and benchmarks */
} tm_rescan;

/* Rescans when due at `now`: adopts tids listed unknown twice in a row,
 * marks exited the LIVE threads with a state that are no longer listed
 * (started over RESCAN_NS/2 before now). */
void tm_rescan_tick(tm_sampler *m, uint64_t now);
/* Appends tid to the tid_set arg (tm_list_tasks's callback): sorted only
 * while each tid is larger than those before. */
void tm_tid_set_add(uint32_t tid, void *arg);
void tm_rescan_free(tm_rescan *r);

#endif
