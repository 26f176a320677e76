#include "budget.h"

#include <stdio.h>

#include "session.h"

/* The share under which a window climbs one step back. A step between
 * tick intervals doubles the ticks' cost, so a share under 45% of the
 * budget climbs (about 90% of it after the step): a run pushed down by a
 * passing peak (the /proc reads of a switch-rate pause) gets its 10 ms
 * ticks back within a window of the peak's end. The records' step costs
 * what the program's switches cost, not twice the ticks, and a level whose
 * last climb went straight back down: both wait for a quarter. */
static double climb_below(const tm_budget *b, double budget) {
  if (b->level == BUDGET_RECORDS_LEVEL || b->level == b->wary_level) return budget / 4;
  return budget * 0.45;
}

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
  if (b->share > budget && b->level < top) {
    /* Over it right after a climb: that climb was one too many, and the
     * next from this level waits for the quarter. */
    if (b->climbed) b->wary_level = b->level + 1;
    b->level++;
    b->climbed = false;
  } else if (b->level > 0 && b->share < climb_below(b, budget)) {
    b->level--;
    b->climbed = true;
  } else {
    b->climbed = false;
  }
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
