/* User threads on the wire (sampler thread, userthreads_wire.c): what was
 * sent is s->smp.uts (sampler_state.h). */
#ifndef THREADMON_USERTHREADS_WIRE_H
#define THREADMON_USERTHREADS_WIRE_H

#include <stdint.h>

#include "probe.h"

struct tm_session;

/* A user-thread event drained from tid's ring (state >= TM_EV_USER_SWITCH). */
TM_HIDDEN void tm_ut_wire_event(struct tm_session *s, uint32_t tid, const tm_event *e);
/* Each tick, after the rings were drained: UserThread frames for the user
 * threads made since the last tick, then the batch of switches. */
TM_HIDDEN void tm_ut_wire_tick(struct tm_session *s);
/* Every UserThread sent so far again (a new connection, a capture gap). */
TM_HIDDEN void tm_ut_wire_resend(struct tm_session *s, int to);

#endif
