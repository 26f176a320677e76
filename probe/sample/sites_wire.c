/* Call sites on the wire (sampler thread): Stack frames for new stacks,
 * Tick.sites for (object, stack) pairs whose totals moved. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "session.h"
#include "sites.h"
#include "sites_wire.h"
#include "symbolize.h"

#define FRAME_BYTES 320

/* Scratch for the messages of one tick; the state is s->smp.sites. */
static Threadmon__SiteStats msgs[TM_SITE_PAIRS];
static Threadmon__SiteStats *msg_ptrs[TM_SITE_PAIRS];

static void emit_stack(tm_session *s, uint32_t id, int to) {
  void *pcs[TM_SITE_FRAMES];
  uint32_t depth = tm_site_stack(id, pcs);
  char text[TM_SITE_FRAMES][FRAME_BYTES];
  char *ptrs[TM_SITE_FRAMES];
  Threadmon__CodeLocation locs[TM_SITE_FRAMES];
  Threadmon__CodeLocation *loc_ptrs[TM_SITE_FRAMES];
  size_t n = 0;
  if (id == TM_SITE_UNKNOWN) {
    snprintf(text[0], sizeof text[0], "[not unwound]");
    threadmon__code_location__init(&locs[0]);
    loc_ptrs[0] = &locs[0];
    ptrs[n++] = text[0];
  }
  for (uint32_t i = 0; i < depth; i++) {
    /* Every frame of a stack unwound by its own thread is a return address;
     * an internal lock's stack (hidden.c) starts at the interrupted PC. */
    bool ret = !(i == 0 && tm_site_stack_exact_top(id));
    tm_code_location where;
    tm_symbolize_frame((uintptr_t)pcs[i], ret, text[n], sizeof text[n], &where);
    tm_code_location_message(&where, &locs[n]);
    loc_ptrs[n] = &locs[n];
    ptrs[n] = text[n];
    n++;
  }
  Threadmon__Stack m = THREADMON__STACK__INIT;
  m.id = id;
  m.n_frames = n;
  m.frames = ptrs;
  m.n_locations = n;
  m.locations = loc_ptrs;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_STACK;
  f.stack = &m;
  tm_emit(s, &f, to);
}

size_t tm_sites_wire_tick(tm_session *s, Threadmon__SiteStats ***out, bool moved) {
  tm_sites_sent *st = &s->smp.sites;
  *out = msg_ptrs;
  if (!moved && !st->all) return 0;
  bool all = st->all;
  st->all = false;
  uint32_t published = tm_sites_stacks_published();
  while (st->stacks < published) emit_stack(s, ++st->stacks, TM_TO_ALL);
  size_t n = 0;
  uint32_t count = tm_sites_pair_count();
  if (count && !st->pairs) {
    /* calloc: pages the pairs never reach are never touched. */
    st->pairs = calloc(TM_SITE_PAIRS, sizeof *st->pairs);
    if (!st->pairs) return 0;
  }
  for (uint32_t i = 0; i < count && i < TM_SITE_PAIRS; i++) {
    uint32_t object_id, stack_id;
    uint64_t cont, wait;
    if (!tm_site_pair(i, &object_id, &stack_id, &cont, &wait)) continue;
    /* A stack published out of order is sent later: its pair waits. */
    if (stack_id > st->stacks) continue;
    tm_pair_sent *p = &st->pairs[i];
    if (!all && p->contentions == cont && p->wait_ns == wait) continue;
    *p = (tm_pair_sent){cont, wait};
    Threadmon__SiteStats *m = &msgs[n];
    threadmon__site_stats__init(m);
    m->object_id = object_id;
    m->stack_id = stack_id;
    m->contentions = cont;
    m->wait_ns = wait;
    msg_ptrs[n++] = m;
  }
  return n;
}

void tm_sites_wire_resend(tm_session *s, int to) {
  for (uint32_t id = TM_SITE_UNKNOWN; id <= s->smp.sites.stacks; id++) emit_stack(s, id, to);
  s->smp.sites.all = true;
}
