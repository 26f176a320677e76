/* Switch tracking: what each PERF_RECORD_SWITCH says of its thread (ran,
 * on a CPU, preempted, blocked; its context switch counts), kept by tid,
 * and the switch-rate limit. Sampler-thread only; the records may come
 * from the kernel's rings (perf_switch.h) or, in tests, from anywhere. */
#ifndef THREADMON_SWITCH_TRACK_H
#define THREADMON_SWITCH_TRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "thread_state.h"

/* tid -> state, and records of tids that have no state yet: open
 * addressing with linear probing; deletion shifts back. An entry without
 * state remembers the latest record of a thread the walk has not met yet
 * (started since the last walk, or foreign), so that it is known to be
 * covered when its state is made. */
typedef struct tid_entry {
  uint32_t tid; /* 0 = empty */
  int kind, cpu;
  uint64_t time_ns, tick;
  /* Switch-outs seen before the walk met it; complete (from its birth)
   * unless records were lost meanwhile. */
  uint32_t vol, invol;
  bool counts_lost;
  tm_sampler_thread *st;
} tid_entry;

typedef struct tm_switch_track {
  tid_entry *tids;
  uint32_t tids_cap, tids_used;
  uint32_t probe_tid; /* the sampler thread's records do not make a program run */
  uint64_t drained;   /* records this tick */
  uint64_t rate_window_start, rate_window_records;
  /* Paused by the rate limit: records resume at resume_at; a pause soon
   * after a resume (within SWITCH_CALM_NS) doubles the next one. */
  uint64_t resume_at, resumed_at, backoff_ns;
  uint32_t pauses;
  /* The thread-creation limit's window: its start and the threads claimed
   * before it; windows over the limit in a row. */
  uint64_t create_window_start, create_window_base;
  uint32_t create_windows_over;
  /* The creation storm's shorter window (tm_create_storm). */
  uint64_t storm_window_start, storm_window_base;
} tm_switch_track;

tid_entry *tm_tid_find(tm_switch_track *w, uint32_t tid);
/* Finds or adds (empty, kind SW_UNKNOWN); NULL when out of memory. */
tid_entry *tm_tid_get(tm_switch_track *w, uint32_t tid);
void tm_tid_remove(tm_switch_track *w, tid_entry *e);
/* Drops records of tids that never got a state and had no record for
 * ~5 s (threads that left before the walk met them, foreign ones). */
void tm_tids_prune(tm_switch_track *w, uint64_t tick_no);

/* One switch record (perf_switch.h's tm_switch_fn, arg: the tm_sampler). */
void tm_switch_record(void *arg, uint32_t tid, uint64_t time_ns, uint32_t cpu, int kind);
/* Records were lost: no thread's last record can be trusted, nor its
 * counts. Every thread is read in full until it has a record again, and
 * re-reads its status. */
void tm_switch_forget(tm_sampler *m);
/* The rate limit: whether `records` more records at `now` (two a switch:
 * out and in) make the last window of SWITCH_LIMIT_NS go over max_rate
 * switches per second and CPU (0: never). */
bool tm_switch_rate_exceeded(tm_switch_track *w, uint64_t max_rate, int ncpu, uint64_t now,
                             uint64_t records);
/* Records pause at now: returns for how long (1 s, doubling up to 64 s
 * while pauses follow resumes within 10 s) and sets resume_at. */
uint64_t tm_switch_pause_for(tm_switch_track *w, uint64_t now);
/* Records resume at now: a new rate window. */
void tm_switch_resumed(tm_switch_track *w, uint64_t now);
/* The thread-creation limit: whether the program created threads (claimed:
 * the registry's running count) faster than max_rate / ncpu a second in
 * each of the last CREATE_WINDOWS_OVER windows of CREATE_WINDOW_NS (0:
 * never). Each new thread costs the kernel a copy of every per-CPU switch
 * event at its creation and their release at its end, whether the records
 * are on or paused; a start-up burst of a pool does not last that long. */
bool tm_create_rate_exceeded(tm_switch_track *w, uint64_t max_rate, int ncpu, uint64_t now,
                             uint64_t claimed);
/* A storm of creations: threads made over four times faster than the
 * creation limit in the last window of CREATE_STORM_NS (0: never). With
 * few threads alive (they end as fast as they are made) the records then
 * pause at once, closed, so that the threads made meanwhile get no copies
 * of the events; the limit above still closes them for good after a
 * second of it. */
bool tm_create_storm(tm_switch_track *w, uint64_t max_rate, int ncpu, uint64_t now,
                     uint64_t claimed);

#endif
