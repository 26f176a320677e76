/* Frame emission and batching: the frames a tick sends (thread and object
 * descriptions, Transitions and CpuSwitches batches, the Tick's sample
 * arrays, ThreadEnd), and what a capture file needs again after a gap.
 * Sampler-thread only (or the thread running the final tick). */
#ifndef THREADMON_FRAMES_H
#define THREADMON_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "threadmon.pb-c.h"
#include "thread_state.h"

struct tm_session;

#define BATCH_MAX 16384 /* entries per Transitions/CpuSwitches frame */
/* A batch holding only the sampler's own switches (its sleep and wake-up,
 * every tick) waits up to this long for company: an idle program then
 * costs one CpuSwitches write per 100 ms instead of one per tick. The
 * records and their times are the same, only sent later. */
#define SWITCH_HOLD_NS 100000000ull
/* Threads that ended since the capture file's last whole write: if that
 * write was the last before a gap, their ThreadEnd goes into the file again
 * with the resync (bounded: a reader keeps any others alive to the end). */
#define GAP_ENDS_MAX 4096

/* A growable batch of (time, tid, state or kind, object or CPU, holder,
 * releaser), times as deltas from base. */
typedef struct batch {
  uint64_t base, last;
  size_t n, cap;
  uint32_t *tid, *obj, *holder, *releaser;
  int64_t *delta;
  int *state; /* ThreadState or SwitchKind */
} batch;

typedef struct ended {
  uint32_t tid;
  uint64_t time_ns, oncpu_ns;
  uint64_t yields;
  uint64_t folded_changes; /* 0: fold_ns unused */
  uint64_t fold_ns[TM_FOLD_STATES];
} ended;

/* A start routine's name, by its address (frames.c, known_routine). */
#define ROUTINE_CACHE 64
typedef struct routine_entry {
  uintptr_t addr;
  char *name;
  bool std_lib; /* libstdc++'s: a std::thread, named by its state */
} routine_entry;

typedef struct tm_frames {
  batch transitions, switches;
  bool switches_urgent;   /* the batch has a record of a program thread */
  bool switches_stopping; /* the batch is the last: the events are being closed */
  Threadmon__LwpSample *lwps;
  Threadmon__LwpSample **lwp_ptrs;
  size_t lwp_n, lwp_cap;
  Threadmon__SyncStats *syncs;
  Threadmon__SyncStats **sync_ptrs;
  size_t sync_n, sync_cap;
  Threadmon__CpuSample *cpu_msgs;
  Threadmon__CpuSample **cpu_ptrs;
  unsigned cpu_cap;
  ended *ends; /* this tick's */
  size_t end_n, end_cap;
  ended gap_ends[GAP_ENDS_MAX];
  size_t gap_end_n;
  long ncpu_conf; /* configured CPUs, looked up once (affinity masks) */
  routine_entry routines[ROUTINE_CACHE];
} tm_frames;

bool tm_batch_push(batch *b, uint64_t t, uint32_t tid, int state, uint32_t obj, uint32_t holder,
                   uint32_t releaser);
void tm_batch_free(batch *b);
/* Frees every array and zeroes f. */
void tm_frames_free(tm_frames *f);

/* Packs and sends one frame (to: TM_TO_*). */
void tm_emit(struct tm_session *s, const Threadmon__Frame *f, int to);
void tm_emit_notice(struct tm_session *s, const char *text, int to);

Threadmon__LwpSample *tm_lwp_add(tm_frames *f);
Threadmon__SyncStats *tm_sync_add(tm_frames *f);
/* t's end, with what it folded (tm_thread_folded) when it did. */
void tm_note_end(tm_frames *f, const tm_thread *t, uint64_t time_ns, uint64_t oncpu_ns);

void tm_emit_thread_start(struct tm_session *s, const tm_thread *t, tm_sampler_thread *st,
                          bool live, int to);
void tm_emit_thread_attr(struct tm_session *s, const tm_thread *t, int to);
/* A thread first seen: its ThreadStart, and a ThreadAttr at its start time
 * when the attributes it started with (inherited from its creator, or
 * given by the pthread attr) are not the defaults and it has not changed
 * them since (attr_version 0). */
void tm_emit_thread_begun(struct tm_session *s, const tm_thread *t, tm_sampler_thread *st,
                          bool live, int to);
void tm_emit_sync_object(struct tm_session *s, tm_object *o, bool with_stack, int to);
void tm_emit_thread_end(struct tm_session *s, const ended *e, int to);
void tm_emit_transitions(struct tm_session *s, const batch *b, int to);
void tm_flush_transitions(struct tm_session *s);
/* Sends the switch batch when it holds a program thread's record, is
 * full, lost records or waited SWITCH_HOLD_NS (all: now). */
void tm_flush_switches(struct tm_session *s, uint64_t now, bool all);
/* Everything a reader needs to understand later frames: the threads and
 * objects described so far and the stacks sent. */
void tm_send_descriptions(struct tm_session *s, int to);
/* The capture file lost frames: a Notice, the descriptions again, every
 * known thread UNKNOWN from the gap's start. */
void tm_resync_file(struct tm_session *s);

#endif
