/* The probe's own thread.
 *
 * Every tick (absolute deadlines, no drift) the sampler drains the threads'
 * event rings, describes new threads and objects, samples /proc and perf,
 * and sends the frames (tick.c and its stages, sampler_state.h). It is the
 * only thread that encodes or sends while a session runs; the thread that
 * ends a session first stops it (join), then runs the final tick itself. */
#ifndef THREADMON_SAMPLER_H
#define THREADMON_SAMPLER_H

#include <stdbool.h>

#include "session.h"

/* Starts the sampler thread; it sends Hello and the notices first.
 * Returns 0, or -1 with errno set. */
int tm_sampler_start(tm_session *s);
/* Stops and joins it (no-op when it is not running). */
void tm_sampler_stop(tm_session *s);
/* One sampling pass on the calling thread. */
void tm_sampler_tick(tm_session *s);
/* The session's last pass: reads every thread and writes the batch out. */
void tm_sampler_final_tick(tm_session *s);
/* Runs fn on the sampler thread and waits for it, at most timeout_ms: for a
 * thread that may be in a signal handler or hold locks fn needs (_exit).
 * Only futex calls on the caller's side. False if it did not run in time. */
bool tm_sampler_handoff(tm_session *s, void (*fn)(void), int timeout_ms);
/* Called by handed-off work that ended the session: the thread stops. */
void tm_sampler_stop_after_handoff(tm_session *s);
/* While set, the sampler does not start a tick (fork in progress). Pausing
 * returns whether the sampler is idle now (it waits a tick out, bounded):
 * idle, it holds no lock of libc's. */
bool tm_sampler_pause(tm_session *s, bool paused);
/* Whether glibc would see this process single-threaded but for the probe's
 * thread: the program never created a thread and only main is alive. */
bool tm_sampler_program_single_threaded(tm_session *s);
/* In a fork child or after a failed exec: forgets every per-thread and
 * per-object state (tm_sampler_reset: all of the sampler's is in
 * s->smp; the objects' sent marks). */
void tm_sampler_forget(tm_session *s);

#endif
