/* The flight recorder's memory: the session's descriptions whole, its
 * detail (ticks, transitions, switch records, thread ends) for the last
 * window only, as zstd blocks, and what the detail dropped leaves behind:
 * every thread's, object's, call site's and CPU's latest cumulative
 * counters and every thread's last state, so that a capture written from
 * it keeps whole-run totals (docs/user-guide.md, "Flight recorder"). */
#ifndef THREADMON_FLIGHT_RING_H
#define THREADMON_FLIGHT_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keymap.h"
#include "threadmon.pb-c.h"
#include "tmblock.h"

typedef struct fr_bytes {
  uint8_t *p;
  size_t len, cap;
} fr_bytes;

typedef struct fr_chunk {
  uint8_t *record; /* a block record, or plain frames when compression did not pay */
  size_t len;
  uint64_t first_ns, last_ns;
} fr_chunk;

typedef struct fr_ring {
  uint64_t window_ns;
  fr_bytes hello, desc, goodbye; /* frames, prefixed */
  uint64_t start_ns;             /* Hello.start_monotonic_ns */
  fr_chunk *chunks;
  size_t n_chunks, cap_chunks;
  fr_bytes cur; /* the open chunk's frames */
  uint64_t cur_first_ns;
  uint64_t now_ns; /* the newest tick's time */
  tm_block_writer blocks;
  /* left behind by the detail dropped */
  bool dropped;
  uint64_t dropped_until_ns; /* the last dropped tick's time */
  uint64_t dropped_seq;
  keymap lwps, sync, sites, cpus; /* packed LwpSample, SyncStats, SiteStats, CpuSample */
  fr_bytes probe;                 /* packed ProbeStats */
  keymap last_state;              /* tid -> fr_state_entry */
  keymap started;                 /* tid -> ThreadStart.time_ns */
  /* Frames, in time order: one dropped tick a second as it was (so that a
   * reader splits the time before the window a second at a time, not in
   * one span), and per thread that ended, its last sample's tick and its
   * ThreadEnd. */
  fr_bytes history;
  uint64_t next_history_ns;
  /* Triggers waiting for their capture keep the detail from hold_from_ns
   * on: however late the stream arrives, the window before each is whole. */
  unsigned holds;
  uint64_t hold_from_ns;
  bool oom;
} fr_ring;

typedef struct fr_state_entry {
  uint64_t time_ns;
  uint32_t state, object, holder;
} fr_state_entry;

void fr_ring_init(fr_ring *r, uint64_t window_ns);
void fr_ring_free(fr_ring *r);
/* Keeps the detail from from_ns (the probe's clock) on, past the window,
 * until as many fr_ring_release: a trigger's capture is written a while
 * after the trigger, and the stream may arrive late by then. */
void fr_ring_hold(fr_ring *r, uint64_t from_ns);
void fr_ring_release(fr_ring *r);
/* One checked frame of the stream (payload and its unpacked form). */
void fr_ring_take(fr_ring *r, const uint8_t *payload, uint32_t len, const Threadmon__Frame *f);
/* Writes a capture of what the ring holds to path: format 2, an index at
 * the end; without a Goodbye from the probe, one saying the recorder
 * detached (a snapshot while the program runs on). Returns 0, or -1 with
 * errno set. */
int fr_ring_write(fr_ring *r, const char *path, const char *why);
/* The program's end as seen from outside (reason END_EXIT with its status,
 * END_SIGNAL with the signal), for a stream that brought no Goodbye: one is
 * made at the newest tick's time, after a notice saying where it came from.
 * A Goodbye from the probe stands. */
void fr_ring_set_end(fr_ring *r, Threadmon__EndReason reason, int status);

#endif
