/* Exact on-CPU intervals from PERF_RECORD_SWITCH.
 *
 * One dummy software event per CPU, attached to the process's first thread
 * with inherit (+ inherit_thread: forked children are not followed), so
 * threads created later write their switches into the same per-CPU rings.
 * Must be opened before the program creates threads. Unprivileged here:
 * exclude_kernel=1 is enough with perf_event_paranoid=2.
 *
 * Verified by tests/test_sampler_switch.c: threads created later, also by
 * other late threads, get records with their gettid() tid, the CPU that
 * sched_getcpu() saw and CLOCK_MONOTONIC times; their intervals sum to their
 * CLOCK_THREAD_CPUTIME_ID time within about 1%. One gap, from the kernel: a
 * thread's inherited events are detached in do_exit() before its last
 * switch-out, so an ended thread's last record is a SWITCH_IN; its exit
 * (ThreadEnd) closes that interval. */
#ifndef THREADMON_PERF_SWITCH_H
#define THREADMON_PERF_SWITCH_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

enum { TM_SWITCH_IN = 0, TM_SWITCH_OUT = 1, TM_SWITCH_OUT_PREEMPT = 2 };

typedef struct tm_perf_switch {
  int ncpu;
  int *fd;
  uint8_t **ring; /* mmap: one metadata page + data */
  size_t page, data_bytes; /* data_bytes: a power of two */
  uint64_t lost;  /* records the kernel reported lost, not yet reported */
  /* Read from outside (tm_perf_switch_open_threads): every other thread's
   * events, one a CPU, writing into the rings of the first one's. */
  int *tfd;
  size_t ntfd, tfd_cap;
} tm_perf_switch;

/* The switch-record event: a dummy software event whose ring gets
 * PERF_RECORD_SWITCH with TID, time (CLOCK_MONOTONIC) and CPU, user space
 * only (what perf_event_paranoid 2 allows). Shared with the attach
 * permission check (attach/access.c), which must try exactly this. */
static inline void tm_perf_switch_attr(struct perf_event_attr *a) {
  memset(a, 0, sizeof *a);
  a->size = sizeof *a;
  a->type = PERF_TYPE_SOFTWARE;
  a->config = PERF_COUNT_SW_DUMMY;
  a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
  a->sample_id_all = 1;
  a->context_switch = 1;
  a->exclude_kernel = 1;
  a->use_clockid = 1;
  a->clockid = CLOCK_MONOTONIC;
}

/* Returns false and writes one line into why when unavailable. */
bool tm_perf_switch_open(tm_perf_switch *p, pid_t pid, char *why, size_t n);

/* Another process's threads, which exist already: one event per thread
 * and CPU, with inherit so that the threads they create are followed, all
 * of a CPU's writing into one ring (an inherited event opened with CPU -1
 * can be neither mapped nor redirected). Threads that ended meanwhile are
 * skipped. Returns false and one line in why when unavailable. */
bool tm_perf_switch_open_threads(tm_perf_switch *p, const uint32_t *tids, size_t n, char *why,
                                 size_t wn);
/* One more thread's events (found later, not inherited): 1 opened, 0 the
 * thread is gone, -1 refused. */
int tm_perf_switch_add_thread(tm_perf_switch *p, uint32_t tid);

typedef void (*tm_switch_fn)(void *arg, uint32_t tid, uint64_t time_ns, uint32_t cpu,
                             int kind);
/* Reports every record written since the last call, CPU by CPU (so not
 * in time order across CPUs). */
void tm_perf_switch_drain(tm_perf_switch *p, tm_switch_fn fn, void *arg);
void tm_perf_switch_close(tm_perf_switch *p);
/* In a fork child that never samples: closes and unmaps the inherited
 * events, writing nothing of p (tm_transport_close_inherited says why). */
void tm_perf_switch_close_inherited(const tm_perf_switch *p);
/* Stops (on = false) or restarts the records of every thread, the ones
 * that inherited the events included; the events stay, so a burst of
 * switching can end and records resume (a disabled event still costs the
 * kernel its context on each switch, ~0.4 us, against ~1.5 us recording). */
void tm_perf_switch_enable(tm_perf_switch *p, bool on);
/* Closes every event and ring but keeps ncpu: a pause that costs the
 * kernel nothing at a switch (a disabled event still costs it the
 * thread's perf context). Records come
 * back only through tm_perf_switch_open_threads over the threads then
 * alive: threads created meanwhile never had the events. */
void tm_perf_switch_drop(tm_perf_switch *p);

#endif
