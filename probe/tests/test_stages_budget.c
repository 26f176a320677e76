/* The CPU budget's ladder (budget.c) on a synthetic clock and CPU clock:
 * one step a window down while over the budget, none while between 45% of
 * it and it, one step a window back up below 45% (a quarter past the
 * records' step and where a climb went straight back down); what
 * each step means; and THREADMON_BUDGET's forms. No threads. */
#include <stdlib.h>

#include "budget.h"
#include "config.h"
#include "tm_check.h"

#define MS 1000000ull

/* Runs `windows` one-second windows at `share` of a core, read every
 * 10 ms; returns the level after each in levels. */
static uint64_t wall = 5000 * MS, cpu = 7 * MS;
static void run(tm_budget *b, double share, int windows, unsigned top, unsigned *levels) {
  for (int w = 0; w < windows; w++) {
    for (int t = 0; t < 100; t++) {
      wall += 10 * MS;
      cpu += (uint64_t)(share * 10 * MS);
      unsigned before = b->level;
      unsigned l = tm_budget_judge(b, 0.05, wall, cpu, top);
      if (t < 99) CHECK_EQ(l, before); /* judged once a window */
    }
    levels[w] = b->level;
  }
}

static void test_ladder(void) {
  const uint64_t asked = 10 * MS;
  unsigned top = tm_budget_top(asked);
  /* 20, 40, 80 ms; records off at 80; 160, 320, 640, 1000 ms. */
  CHECK_EQ(top, 8);
  const uint64_t want[] = {10, 20, 40, 80, 80, 160, 320, 640, 1000};
  for (unsigned l = 0; l <= top; l++) {
    CHECK_EQ(tm_budget_interval(l, asked), want[l] * MS);
    CHECK_EQ(tm_budget_records_off(l), l >= 4);
  }
  /* An interval asked for of a second or more: only the records step. */
  CHECK_EQ(tm_budget_top(2000 * MS), BUDGET_RECORDS_LEVEL);
  CHECK_EQ(tm_budget_interval(5, 2000 * MS), 2000 * MS);

  tm_budget b = {0};
  CHECK_EQ(tm_budget_judge(&b, 0.05, wall, cpu, top), 0); /* starts the window */
  unsigned levels[12];
  run(&b, 0.10, 10, top, levels); /* twice the budget */
  for (int w = 0; w < 10; w++) CHECK_EQ(levels[w], w + 1 < 8 ? w + 1 : 8);
  CHECK(b.share > 0.099 && b.share < 0.101);
  run(&b, 0.03, 3, top, levels); /* under it, above 45% of it: stays */
  for (int w = 0; w < 3; w++) CHECK_EQ(levels[w], 8);
  run(&b, 0.02, 6, top, levels); /* under 45%: back a step a window... */
  for (int w = 0; w < 4; w++) CHECK_EQ(levels[w], 7 - w);
  /* ...but not past the records' step above a quarter. */
  CHECK_EQ(levels[4], 4);
  CHECK_EQ(levels[5], 4);
  run(&b, 0.01, 6, top, levels); /* under a quarter: back step by step */
  for (int w = 0; w < 6; w++) CHECK_EQ(levels[w], w < 4 ? 3 - w : 0);
  /* Back over it: down again from full detail. */
  run(&b, 0.06, 1, top, levels);
  CHECK_EQ(levels[0], 1);
  /* A passing peak (a switch-rate pause's /proc reads) pushed it to 20 ms
   * ticks; there the probe costs 2%, under a quarter of the budget no
   * more: back to 10 ms after one window (it stayed at 20 ms before). */
  run(&b, 0.02, 2, top, levels);
  CHECK_EQ(levels[0], 0);
  CHECK_EQ(levels[1], 0);
  run(&b, 0.06, 1, top, levels);
  run(&b, 0.02, 1, top, levels);
  CHECK_EQ(levels[0], 0);
  /* A climb straight back over the budget: that level then waits for a
   * quarter, and the probe does not flap. */
  run(&b, 0.06, 1, top, levels);
  CHECK_EQ(levels[0], 1);
  run(&b, 0.02, 3, top, levels);
  for (int w = 0; w < 3; w++) CHECK_EQ(levels[w], 1);
  run(&b, 0.01, 1, top, levels);
  CHECK_EQ(levels[0], 0);
  /* A clock before the window (another thread's final tick) starts anew. */
  run(&b, 0.06, 1, top, levels);
  CHECK_EQ(tm_budget_judge(&b, 0.05, wall - 3000 * MS, cpu, top), 1);
  CHECK_EQ(b.win_wall, wall - 3000 * MS);
}

static double budget_of(const char *value) {
  setenv("THREADMON_BUDGET", value, 1);
  tm_config c;
  if (tm_config_load(&c) != 0) return -1;
  return c.budget;
}

static void test_config(void) {
  unsetenv("THREADMON_BUDGET");
  tm_config c;
  CHECK_EQ(tm_config_load(&c), 0);
  CHECK(c.budget > 0.0499 && c.budget < 0.0501); /* 5% by default */
  const char *five[] = {"0.05", "5%", "5", "5.0%", ".05"};
  for (size_t i = 0; i < sizeof five / sizeof five[0]; i++) {
    double v = budget_of(five[i]);
    CHECK(v > 0.0499 && v < 0.0501);
  }
  CHECK(budget_of("0") == 0);
  CHECK(budget_of("0.5%") > 0.00499 && budget_of("0.5%") < 0.00501);
  CHECK(budget_of("100%") == 1);
  const char *bad[] = {"150%", "1.5", "-0.1", "x", "5%%", "nan", "0.05 "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK(budget_of(bad[i]) < 0);
}

/* THREADMON_SESSION's "PID:GENERATION", as sscanf("%u:%u") read it. */
static void test_lineage(void) {
  unsigned pid = 0, gen = 0;
  CHECK(tm_config_lineage("1234:0", &pid, &gen));
  CHECK_EQ(pid, 1234u);
  CHECK_EQ(gen, 0u);
  CHECK(tm_config_lineage("4294967295:7", &pid, &gen));
  CHECK_EQ(pid, 4294967295u);
  CHECK_EQ(gen, 7u);
  const char *bad[] = {"", ":1", "12", "12:", "12-1", "x:1", "4294967296:1", "99999999999:1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    CHECK(!tm_config_lineage(bad[i], &pid, &gen));
  CHECK(!tm_config_lineage(NULL, &pid, &gen));
}

int main(void) {
  test_ladder();
  test_config();
  test_lineage();
  return 0;
}
