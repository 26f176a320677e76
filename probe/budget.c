#include "budget.h"

#include <stdio.h>

#include "session.h"

void tm_budget_keep(tm_session *s, uint64_t wall, uint64_t cpu) {
  tm_budget *b = &s->smp.budget;
  const uint64_t base_interval = s->cfg.interval_asked_ns;
  if (!s->cfg.budget_pct) return;
  if (!b->win_wall) {
    b->win_wall = wall;
    b->win_cpu = cpu;
    return;
  }
  if (wall - b->win_wall < BUDGET_WINDOW_NS) return;
  double share = (double)(cpu - b->win_cpu) / (double)(wall - b->win_wall);
  b->win_wall = wall;
  b->win_cpu = cpu;
  double budget = s->cfg.budget_pct / 100.0;
  uint64_t was = s->cfg.interval_ns;
  if (share > budget && was < BUDGET_MAX_INTERVAL_NS)
    s->cfg.interval_ns = was * 2 < BUDGET_MAX_INTERVAL_NS ? was * 2 : BUDGET_MAX_INTERVAL_NS;
  else if (share < budget / 4 && was > base_interval)
    s->cfg.interval_ns = was / 2 > base_interval ? was / 2 : base_interval;
  if (s->cfg.interval_ns == was) return;
  char text[200];
  snprintf(text, sizeof text,
           "the probe's thread used %.1f%% of a core (THREADMON_BUDGET %u%%): %s, a tick every "
           "%llu ms",
           share * 100, s->cfg.budget_pct,
           s->cfg.interval_ns > was ? "less detail" : "detail restored",
           (unsigned long long)(s->cfg.interval_ns / 1000000u));
  tm_emit_notice(s, text, TM_TO_ALL);
}

