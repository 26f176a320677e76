/* The CPU budget (THREADMON_BUDGET): judged over each BUDGET_WINDOW_NS of
 * the probe thread's own CPU time, a ladder of detail, one step a window.
 * From full detail (level 0):
 *   1-3  ticks 2, 4 and 8 times the interval asked for (every /proc read
 *        and frame with them)
 *   4    switch records paused too (the step the switch-rate limit takes
 *        on its own: records are off while either asks)
 *   5-   ticks twice as long again each step, at most one a second
 * Over the budget in a window: one step down; under 45% of it: one step
 * back up (each step about halves or doubles the ticks' cost, so the climb
 * lands under the budget and a probe near it does not flap). Back from the
 * records' step, and from a level whose last climb was over the budget at
 * once, only under a quarter of it. Each change is a Notice. */
#ifndef THREADMON_BUDGET_H
#define THREADMON_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct tm_session;

#define BUDGET_WINDOW_NS 1000000000ull
#define BUDGET_MAX_INTERVAL_NS 1000000000ull
#define BUDGET_RECORDS_LEVEL 4u

typedef struct tm_budget {
  uint64_t win_wall, win_cpu; /* the window's start: wall and thread CPU time */
  unsigned level;             /* 0 = full detail */
  unsigned wary_level;        /* a level climbed from and straight back to: 0 = none */
  bool climbed;               /* the last window climbed a step */
  double share;               /* the last window's share of a core */
} tm_budget;

/* One reading of the clocks (wall, the probe thread's CPU): at the end of
 * a window, judges it against budget (a share of one core) and returns
 * the new level, at most top; otherwise the level as it is. */
unsigned tm_budget_judge(tm_budget *b, double budget, uint64_t wall, uint64_t cpu, unsigned top);
/* The tick interval at a level, for the interval asked for. */
uint64_t tm_budget_interval(unsigned level, uint64_t asked);
/* Whether switch records are off at a level. */
static inline bool tm_budget_records_off(unsigned level) { return level >= BUDGET_RECORDS_LEVEL; }
/* The last step: records off and ticks at their longest. */
unsigned tm_budget_top(uint64_t asked);

/* After a tick: judges and applies (the interval; tick.c reads the level
 * for the records) and says so in a Notice. */
void tm_budget_keep(struct tm_session *s, uint64_t wall, uint64_t cpu);

#endif
