/* The CPU budget (THREADMON_BUDGET): judged over each BUDGET_WINDOW_NS of
 * the probe thread's own CPU time; above it the ticks come half as often
 * (every /proc read and frame with them), at most down to one a second;
 * well below it (a quarter), twice as often again, back to the interval
 * asked for. Each change is a Notice. */
#ifndef THREADMON_BUDGET_H
#define THREADMON_BUDGET_H

#include <stdint.h>

struct tm_session;

#define BUDGET_WINDOW_NS 1000000000ull
#define BUDGET_MAX_INTERVAL_NS 1000000000ull

typedef struct tm_budget {
  uint64_t win_wall, win_cpu; /* the window's start: wall and thread CPU time */
} tm_budget;

/* After a tick: wall and cpu are now's clocks (the probe thread's CPU). */
void tm_budget_keep(struct tm_session *s, uint64_t wall, uint64_t cpu);

#endif
