/* The sampler's state of one thread (tm_thread.sampler), and the table of
 * them: made when a tick first meets a thread, freed when its end is
 * reported. Sampler-thread only. */
#ifndef THREADMON_THREAD_STATE_H
#define THREADMON_THREAD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf_counters.h"
#include "probe.h"
#include "procfs.h"

typedef struct tm_sampler tm_sampler;

/*
 * What a tick reads for a thread depends on what the PERF_RECORD_SWITCH
 * records say it did since the last tick:
 *   READ_ALL   it ran (records this tick), is on a CPU (last record IN),
 *              or we cannot tell: schedstat, and when that moved stat, perf
 *              counters and (outside wrapped calls, asleep) syscall;
 *   READ_QUEUE preempted and not run since (last record OUT_PREEMPT): only
 *              its runqueue wait can move (the kernel adds it when the
 *              thread runs or is migrated while queued), schedstat alone;
 *   READ_NONE  blocked and not run since (last record a voluntary OUT):
 *              nothing it owns moved, no read at all.
 * The context switch counts come from the records too, on top of one
 * status read when the thread is first seen (or after records were lost).
 * After lost records every thread is read in full until a record or its
 * kernel state (not R) says where it is again. The kernel writes no record
 * for a thread's last switch-out (perf_switch.h): an ended thread stays
 * READ_ALL until its slot is released. Events in a thread's ring, its
 * dropped count and the objects it uses only change while it runs, so the
 * walk drains rings only for READ_ALL threads and skips the object walk
 * when no program thread ran. The final tick (on the thread that ends the
 * session) reads everything.
 * Threads without records (created before the events were opened, e.g.
 * after a failed exec, or no switch source at all) are read every tick,
 * status only after they ran: at once when they were switched often since
 * the last (see read_status's caller), else every STATUS_EVERY ticks. */

enum { SW_UNKNOWN = -1 }; /* no usable record: treat as running */
enum { READ_NONE, READ_QUEUE, READ_ALL };

typedef struct tm_sampler_thread {
  /* What the walk reads of an idle thread every tick: one cache line. */
  _Alignas(64) tm_thread *owner;
  uint32_t tid;
  uint32_t attr_sent;
  uint64_t sw_tick;      /* tick whose drain had a record of it */
  uint64_t futex_addr;
  uint32_t asleep_syscall; /* LwpSample.asleep_syscall last sent */
  uint64_t yields;         /* LwpSample.yields last sent */
  int sw_kind;           /* latest record's TM_SWITCH_*, or SW_UNKNOWN */
  bool covered;          /* its switches reach our rings (a record was seen) */
  bool have_sched, have_stat;
  bool status_base;      /* vol/invol hold a status read (else read one) */
  bool status_dirty;     /* ran since the last status read (no records) */
  bool pc_open;
  uint32_t slot;
  /* The rest: threads that ran, and records. */
  uint64_t sw_time;      /* of the latest record (rings drain CPU by CPU) */
  uint64_t vol, invol;
  uint64_t ctx_after_ns; /* records up to this time are in vol/invol already */
  uint64_t status_tick;  /* tick of the last status read */
  uint64_t status_slices; /* schedstat's count of times on a CPU at that read */
  uint32_t moved_reads;  /* reads that found it had run (perf counters: every PERF_EVERY) */
  int sw_cpu;            /* CPU of the latest record, -1 before one */
  bool born_covered;     /* born in the session, under the switch events: every switch of its
                          * life is in the records while they are on, counters from zero */
  bool read_on_cpu;      /* its last full read was planned from a switch-in record */
  uint64_t met_tick;     /* tick the walk first met it in */
  uint64_t in_time;      /* its latest switch-in not yet matched by a switch-out */
  uint64_t ran_ns;       /* on a CPU by the records since its last read */
  uint64_t read_tick;    /* tick of its last read */
  uint64_t stat_oncpu_ns; /* its CPU time at the last stat read */
  bool stat_blocked;      /* that read was made with it blocked by its records */
  uint64_t syscall_ns;   /* when the last full read looked at its syscall */
  uint64_t dropped;      /* ring.dropped as last seen */
  uint64_t udropped;     /* uring->dropped as last seen */
  uint64_t read_head;    /* ring head at its last read, in a wrapped call; else UINT64_MAX */
  uint64_t wait_head;    /* never read: ring head when its records said it waits; else UINT64_MAX */
  uint64_t ev_run_from;  /* its latest drained RUNNING event, 0 after a blocking one */
  uint64_t ev_ran_ns;    /* outside wrapped calls by its events since its last read */
  uint64_t ev_tick;      /* tick whose drain had an event of it */
  bool ring_offered;     /* a grown ring was asked for it (tm_ring_offer_growth) */
  uint64_t last_time;    /* its latest transition drained: a capture gap */
  uint32_t last_obj;     /* that lost it is followed by it again */
  int last_state;
  struct tm_sampler_thread *next, **pprev; /* every live state */
  tm_task_sched sched;
  tm_task_stat stat;
  tm_perf_values pv;
  tm_task_fds fds;
  tm_perf_counters pc;
  char *routine; /* start routine's name once sent (routine_name) */
  uint64_t folded;       /* tm_thread.folded as last seen */
  uint64_t folded_sent;  /* folded changes in its last LwpSample */
  uint64_t fold_ns[TM_FOLD_STATES]; /* folded time in its last LwpSample */
} tm_sampler_thread;

_Static_assert(offsetof(tm_sampler_thread, slot) + sizeof(uint32_t) <= 64,
               "the fields an idle thread costs per tick fit one cache line");

/* The states of the threads a tick has met. */
typedef struct tm_thread_states {
  /* Slot i's state is slab[i] (mapped on first use, pages touched as
   * slots are): side by side, and huge pages past the first where the
   * system allows, so that the scattered visits of a tick at thousands of
   * threads miss the TLB less (a state of its own allocation each was a
   * TLB miss per visit). A slot without a state has owner NULL. */
  tm_sampler_thread *slab;
  tm_sampler_thread *all; /* every state, in no order */
  uint32_t count;
  uint64_t live_dropped; /* sum of dropped over live states */
  uint64_t live_folded;  /* sum of folded over live states */
} tm_thread_states;

/* The state of slot's thread t, new (its switch records so far taken from
 * the tid table, switch_track.h); NULL when out of memory. */
tm_sampler_thread *tm_state_new(tm_sampler *m, tm_thread *t, uint32_t slot);
void tm_state_free(tm_sampler *m, tm_sampler_thread *st);
/* Unmaps the states' memory, once every state is freed. */
void tm_states_unmap(tm_thread_states *ts);
/* The state of slot i, if any. */
static inline tm_sampler_thread *tm_state_of_slot(const tm_thread_states *ts, uint32_t i) {
  return ts->slab && i < TM_MAX_THREADS && ts->slab[i].owner ? &ts->slab[i] : NULL;
}

#endif
