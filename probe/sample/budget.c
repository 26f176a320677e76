#include "budget.h"

#include <stdio.h>

#include "session.h"

unsigned tm_budget_judge(tm_budget *b, double budget, uint64_t wall, uint64_t cpu, unsigned top) {
  if (!b->win_wall || wall < b->win_wall) {
    b->win_wall = wall;
    b->win_cpu = cpu;
    return b->level;
  }
  if (wall - b->win_wall < BUDGET_WINDOW_NS) return b->level;
  b->share = (double)(cpu - b->win_cpu) / (double)(wall - b->win_wall);
  b->win_wall = wall;
  b->win_cpu = cpu;
  if (b->share > budget && b->level < top) b->level++;
  else if (b->share < budget / 4 && b->level > 0) b->level--;
  return b->level;
}

uint64_t tm_budget_interval(unsigned level, uint64_t asked) {
  unsigned doublings = level < BUDGET_RECORDS_LEVEL ? level : level - 1;
  uint64_t v = asked;
  for (unsigned i = 0; i < doublings && v < BUDGET_MAX_INTERVAL_NS; i++) v *= 2;
  return v > BUDGET_MAX_INTERVAL_NS && asked < BUDGET_MAX_INTERVAL_NS ? BUDGET_MAX_INTERVAL_NS : v;
}

unsigned tm_budget_top(uint64_t asked) {
  unsigned top = BUDGET_RECORDS_LEVEL;
  while (tm_budget_interval(top, asked) < BUDGET_MAX_INTERVAL_NS && top < 32) top++;
  return top;
}

void tm_budget_keep(tm_session *s, uint64_t wall, uint64_t cpu) {
  tm_budget *b = &s->smp.budget;
  const uint64_t asked = s->cfg.interval_asked_ns;
  if (s->cfg.budget <= 0) return;
  unsigned was = b->level, top = tm_budget_top(asked);
  unsigned level = tm_budget_judge(b, s->cfg.budget, wall, cpu, top);
  if (level == was) return;
  s->cfg.interval_ns = tm_budget_interval(level, asked);
  char text[240];
  snprintf(text, sizeof text,
           "the probe's thread used %.2f%% of a core (THREADMON_BUDGET %g%%): %s, step %u of "
           "%u: a tick every %llu ms%s",
           b->share * 100, s->cfg.budget * 100, level > was ? "less detail" : "detail restored",
           level, top, (unsigned long long)(s->cfg.interval_ns / 1000000u),
           tm_budget_records_off(level) ? ", switch records paused" : "");
  tm_emit_notice(s, text, TM_TO_ALL);
}
