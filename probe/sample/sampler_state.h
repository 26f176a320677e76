/* Everything the sampler keeps, in one struct owned by the session
 * (tm_session.smp): the stages' states, each in its own part, and the
 * sampler thread's controls. A fork child (or a failed exec) resets it:
 * tm_sampler_reset frees what it holds and zeroes it, so that nothing of
 * the parent's threads can be left behind. Zero is a valid initial state.
 *
 * The tick's stages, each in its own file and testable without a target
 * (probe/tests drives them with synthetic records, /proc directories and
 * clocks):
 *   switch_track.c  switch records -> per-thread state, the rate limit
 *   read_plan.c     which slots a tick visits, what it reads of each
 *   thread_read.c   reading a thread's /proc files into an LwpSample
 *   task_rescan.c   the task directory listing
 *   frames.c        frame emission and batching
 *   tick.c          the tick itself, in that order
 *   budget.c        the CPU budget between ticks */
#ifndef THREADMON_SAMPLER_STATE_H
#define THREADMON_SAMPLER_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "budget.h"
#include "frames.h"
#include "hidden.h"
#include "perf_switch.h"
#include "procfs.h"
#include "read_plan.h"
#include "switch_track.h"
#include "symbolize.h"
#include "task_rescan.h"
#include "thread_state.h"

struct tm_session;

/* What the stages do differently for a process read from outside
 * (threadmon-attach, attach/xsampler.c): no wrapper registers its threads
 * or reports its waits, and its addresses are named by its own modules.
 * NULL in tm_sampler.outside: the probe inside its program. */
typedef struct tm_outside {
  void *ctx;
  /* Thread t was read now: asleep in futex() on word, or in no futex wait
   * (0); line: its syscall file when just read, NULL when it has not run
   * since (the same call). Replaces hidden.c. */
  void (*futex_wait)(void *ctx, struct tm_session *s, tm_thread *t, uint64_t word,
                     const char *line);
  /* A tid the task listing found that the walk does not know: registered
   * at once (no wrapper will), NULL when the registry is full. */
  tm_thread *(*adopt)(void *ctx, uint32_t tid);
  /* Names a target address (SyncObject), and a frame of a stack. */
  int (*symbolize)(void *ctx, uintptr_t addr, tm_symbol *out);
  void (*frame)(void *ctx, uintptr_t pc, bool return_address, char *out, size_t n);
  /* A thread's name as its stat gives it (TM_NAME_BYTES), replaced by
   * the one the target's runtime knows it by (a Go M's); NULL: none. */
  void (*name)(void *name_ctx, uint32_t tid, char *name);
  void *name_ctx;
} tm_outside;

/* Per-object: the counters last sent (proto/counters.def), indexed like
 * the object ids. */
typedef struct obj_sent {
#define TM_SYNC_COUNTER(field, ...) uint64_t field;
#include "counters.def"
} obj_sent;

typedef struct tm_object_walk {
  obj_sent *sent;
  uint32_t cap;
  uint32_t walked;     /* last id as of the last walk */
  uint64_t keyframe_at; /* when every object's counters are sent again */
} tm_object_walk;

/* Counters are sent when they change. A reader that opens a window of a
 * long capture starts from the records of the second before it
 * (CaptureWindow's warm-up): an object idle longer than that would have
 * no value to count the window from, so every one is sent again this often. */
#define TM_KEYFRAME_NS 500000000ull

/* What sites_wire.c has sent: Stack frames for ids [TM_SITE_UNKNOWN,
 * stacks], each pair's totals (by pair index, TM_SITE_PAIRS of them,
 * allocated at the first pair sent). */
typedef struct tm_pair_sent {
  uint64_t contentions, wait_ns;
} tm_pair_sent;

typedef struct tm_sites_sent {
  uint32_t stacks;
  bool all; /* a new connection: every pair next tick */
  tm_pair_sent *pairs;
} tm_sites_sent;

/* What userthreads_wire.c has sent (UserThread frames for ids [1,
 * described]) and the batch of switches it is filling. */
typedef struct tm_ut_sent {
  uint32_t described;
  uint64_t base, last;
  size_t n, cap;
  uint32_t *tid, *from, *to;
  int64_t *delta;
  Threadmon__UserSwitchKind *kind;
} tm_ut_sent;

/* The sampler thread's controls (sampler.c). */
typedef struct tm_sampler_ctl {
  pthread_t handle;
  bool running;
  bool uncounted;        /* the probe's thread is not in glibc's thread count */
  bool single_before_us; /* glibc thought the process single-threaded until our thread */
  _Atomic int stop_requested;
  _Atomic int pause_requested, in_tick;
  /* Work handed to the sampler by a thread that must not run it itself,
   * and whether it is done (futex words). */
  void (*_Atomic handoff_fn)(void);
  _Atomic int handoff_done;
} tm_sampler_ctl;

/* What the last tick did: for tests and benchmarks (the cost of a tick
 * follows these). */
typedef struct tm_tick_counts {
  uint32_t visited;   /* slots visited */
  uint32_t read;      /* threads whose files were read */
  uint32_t file_reads; /* /proc files read */
} tm_tick_counts;

typedef struct tm_sampler {
  /* CLOCK_MONOTONIC in ns; NULL: tm_now_ns. Tests give their own. */
  uint64_t (*clock)(void);
  /* Where switch records come from; NULL: the session's perf rings
   * (tm_perf_switch_drain). Tests replay their own. */
  void (*switch_source)(struct tm_session *s, tm_switch_fn fn, void *arg);
  tm_proc proc; /* the process sampled: "" = this one */
  const tm_outside *outside; /* NULL: this process, from inside */
  uint64_t tick_no;    /* ticks run, the first is 1 */
  uint64_t started_ns; /* switch records cover threads born after it */
  bool own_thread;     /* this tick runs on the sampler thread */
  bool final_tick;     /* the session's last tick, wherever it runs */
  bool program_ran;    /* a program thread ran or may have: objects moved */
  bool hidden_noted;   /* a hidden wait was seen this tick */
  bool untracked_noticed;
  uint64_t sampler_cpu_ns; /* the sampler thread's, updated by itself */
  tm_thread_states threads;
  tm_switch_track sw;
  tm_visits plan;
  tm_rescan rescan;
  tm_object_walk objects;
  tm_frames fr;
  tm_budget budget;
  tm_tick_counts counts;
  tm_sites_sent sites;
  tm_ut_sent uts;
  tm_hidden hidden;
  tm_sampler_ctl ctl;
} tm_sampler;

static inline uint64_t tm_sampler_now(const tm_sampler *m) {
  return m->clock ? m->clock() : tm_now_ns();
}

/* Frees everything m holds (thread states and their descriptors, tables,
 * batches) and zeroes it. */
void tm_sampler_reset(tm_sampler *m);
/* In a fork child that will never sample (THREADMON_FOLLOW=0): closes the
 * threads' descriptors and writes nothing, since every page of m and of
 * the heap the parent wrote would be copied at the child's first write
 * (freeing and zeroing all of it was 160 such faults and most of the
 * child's cost). What m holds is left to the child's copy of the heap. */
void tm_sampler_close_inherited(const tm_sampler *m);

/* The calling thread's CPU time. */
uint64_t tm_thread_cpu_ns(void);

/* One sampling pass; own_thread: false for the final tick on a program
 * thread. */
void tm_tick_run(struct tm_session *s, bool own_thread);

#endif
