/* User threads on the wire (sampler thread): a UserThread frame for each
 * user thread made, UserSwitches batched from the LWPs' rings. */
#include <stdlib.h>
#include <string.h>

#include "frames.h"
#include "session.h"
#include "symbolize.h"
#include "userthreads.h"
#include "userthreads_wire.h"

#define FUNCTION_BYTES 320
#define BATCH_MAX 16384


static void emit_user_thread(tm_session *s, uint32_t id, int to) {
  const tm_uthread *u = tm_ut_get(id);
  if (!u) return;
  char function[FUNCTION_BYTES] = "";
  if (u->fn) tm_symbolize_format((uintptr_t)u->fn, function, sizeof function);
  Threadmon__UserThread m = THREADMON__USER_THREAD__INIT;
  m.id = id;
  m.time_ns = u->made_ns;
  m.creator_tid = u->creator_tid;
  m.function = function;
  m.context_address = u->ucp;
  m.stack_address = u->stack_lo;
  m.stack_size = u->stack_hi - u->stack_lo;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_USER_THREAD;
  f.user_thread = &m;
  tm_emit(s, &f, to);
}

static void flush(tm_session *s) {
  tm_ut_sent *ub = &s->smp.uts;
  if (!ub->n) return;
  Threadmon__UserSwitches m = THREADMON__USER_SWITCHES__INIT;
  m.base_ns = ub->base;
  m.n_tid = m.n_delta_ns = m.n_from_id = m.n_to_id = m.n_kind = ub->n;
  m.tid = ub->tid;
  m.delta_ns = ub->delta;
  m.from_id = ub->from;
  m.to_id = ub->to;
  m.kind = ub->kind;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_USER_SWITCHES;
  f.user_switches = &m;
  tm_emit(s, &f, TM_TO_ALL);
  ub->n = 0;
}

static void describe_new(tm_session *s) {
  /* Ids are handed out before their records are written: stop at the
   * first one not ready, it is sent next tick. */
  uint32_t *described = &s->smp.uts.described;
  for (uint32_t last = tm_ut_last_id(); *described < last && tm_ut_get(*described + 1);
       (*described)++)
    emit_user_thread(s, *described + 1, TM_TO_ALL);
}

static bool grow(tm_ut_sent *ub) {
  size_t cap = ub->cap ? ub->cap * 2 : 1024;
#define GROW(field)                                               \
  do {                                                            \
    void *p_ = realloc(ub->field, cap * sizeof *ub->field);       \
    if (!p_) return false;                                        \
    ub->field = p_;                                               \
  } while (0)
  GROW(tid);
  GROW(from);
  GROW(to);
  GROW(delta);
  GROW(kind);
#undef GROW
  ub->cap = cap;
  return true;
}

void tm_ut_wire_event(tm_session *s, uint32_t tid, const tm_event *e) {
  tm_ut_sent *ub = &s->smp.uts;
  if (ub->n >= BATCH_MAX) {
    describe_new(s); /* a switch's user threads before it */
    flush(s);
  }
  if (ub->n == ub->cap && !grow(ub)) return;
  if (ub->n == 0) ub->base = ub->last = e->time_ns;
  ub->tid[ub->n] = tid;
  ub->delta[ub->n] = (int64_t)(e->time_ns - ub->last);
  ub->last = e->time_ns;
  ub->from[ub->n] = e->holder_tid;
  ub->to[ub->n] = e->object_id;
  ub->kind[ub->n] = (Threadmon__UserSwitchKind)(e->state - TM_EV_USER_SWITCH);
  ub->n++;
}

void tm_ut_wire_tick(tm_session *s) {
  describe_new(s);
  flush(s);
}

void tm_ut_wire_resend(tm_session *s, int to) {
  for (uint32_t id = 1; id <= s->smp.uts.described; id++) emit_user_thread(s, id, to);
}
