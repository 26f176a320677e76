/* A Go program's threads named from its runtime (xgonames.h). */
#include "xgonames.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "session.h"
#include "thread_read.h"

#define WALK_NS 100000000u

/* Within TM_NAME_BYTES: the role's first word ("template thread" would
 * not fit after an M id). */
static void m_name(const tm_go_m *m, char *out) {
  const char *role = tm_go_m_role(m);
  int len = role ? (int)strcspn(role, " ") : 0;
  snprintf(out, TM_NAME_BYTES, "M%lld%s%.*s", (long long)m->id, role ? " " : "", len,
           role ? role : "");
}

static void name_hook(void *ctx, uint32_t tid, char *name) {
  const tm_xgo *g = ctx;
  const tm_go_m *m = tm_go_m_of(&g->ms, (pid_t)tid);
  if (m) m_name(m, name);
}

static void walk(tm_xgo *g, uint64_t now) {
  tm_go_runtime_free(&g->ms);
  tm_go_runtime_walk(g->x->pid, &g->reader, g->x->syms, &g->ms);
  g->walked_ns = now;
}

void tm_xgo_open(tm_xgo *g, tm_xwaits *x) {
  memset(g, 0, sizeof *g);
  g->x = x;
  if (!x->maps_ok) return;
  tm_go_reader_open(&x->maps, x->syms, &g->reader);
  if (g->reader.found && !g->reader.ready) tm_emit_notice(x->s, g->reader.why, TM_TO_ALL);
  if (!g->reader.ready) return;
  x->hooks.name = name_hook;
  x->hooks.name_ctx = g;
  walk(g, tm_now_ns());
}

void tm_xgo_tick(tm_xgo *g, uint64_t now) {
  if (!g->reader.ready || now - g->walked_ns < WALK_NS) return;
  walk(g, now);
  for (uint32_t i = 0, hw = tm_threads_high_water(); i < hw; i++) {
    tm_thread *t = tm_thread_slot(i);
    const tm_go_m *m;
    if (atomic_load_explicit(&t->slot_state, memory_order_acquire) != TM_SLOT_LIVE ||
        !(m = tm_go_m_of(&g->ms, (pid_t)t->tid)))
      continue;
    char name[TM_NAME_BYTES];
    m_name(m, name);
    tm_thread_rename_seen(t, name);
  }
}

void tm_xgo_free(tm_xgo *g) { tm_go_runtime_free(&g->ms); }

void tm_xgo_image_changed(tm_xgo *g) {
  tm_xwaits *x = g->x;
  tm_xgo_free(g);
  if (x->hooks.name == name_hook) x->hooks.name = NULL;
  tm_xgo_open(g, x);
}
