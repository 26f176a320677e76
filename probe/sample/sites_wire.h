/* Call sites on the wire (sampler thread, sites_wire.c): what was sent is
 * s->smp.sites (sampler_state.h). */
#ifndef THREADMON_SITES_WIRE_H
#define THREADMON_SITES_WIRE_H

#include <stdbool.h>
#include <stddef.h>

struct tm_session;
struct Threadmon__SiteStats;

/* Sends Stack frames for stacks published since the last call, and returns
 * SiteStats of the pairs whose totals moved (valid until the next call).
 * moved: a program thread ran or a hidden wait was seen (else nothing can
 * have changed and the pairs are not scanned). */
size_t tm_sites_wire_tick(struct tm_session *s, struct Threadmon__SiteStats ***out, bool moved);
/* A new connection: sends every stack sent so far again (to: TM_TO_*), and
 * the next tick carries every pair. */
void tm_sites_wire_resend(struct tm_session *s, int to);

#endif
