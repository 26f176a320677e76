/* The flight recorder's triggers on frames built here, without a display or
 * a probe: a deadlock is a cycle of waiters on held kinds only
 * (states.def), a long wait fires once, while open or when it ends, and
 * the specs parse as documented. */
#include <stdio.h>
#include <string.h>

#include "../../probe/tests/tm_check.h"
#include "triggers.h"

/* When the last trigger that fired began to hold. */
static uint64_t fired_at;

static bool object(fr_triggers *t, uint32_t id, Threadmon__SyncKind kind, char *why) {
  Threadmon__SyncObject o = THREADMON__SYNC_OBJECT__INIT;
  o.id = id;
  o.kind = kind;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_SYNC_OBJECT;
  f.sync_object = &o;
  return fr_triggers_take(t, &f, 0, why, 256, &fired_at);
}

/* One transition: tid enters state at at_ns, on object (held by holder). */
static bool enter(fr_triggers *t, uint64_t at_ns, uint32_t tid, Threadmon__ThreadState state,
                  uint32_t obj, uint32_t holder, char *why) {
  int64_t delta = 0;
  Threadmon__ThreadState st = state;
  Threadmon__Transitions tr = THREADMON__TRANSITIONS__INIT;
  tr.base_ns = at_ns;
  tr.n_tid = tr.n_delta_ns = tr.n_state = tr.n_object_id = tr.n_holder_tid = 1;
  tr.tid = &tid;
  tr.delta_ns = &delta;
  tr.state = &st;
  tr.object_id = &obj;
  tr.holder_tid = &holder;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
  f.transitions = &tr;
  return fr_triggers_take(t, &f, 0, why, 256, &fired_at);
}

static bool tick(fr_triggers *t, uint64_t at_ns, char *why) {
  Threadmon__Tick k = THREADMON__TICK__INIT;
  k.time_ns = at_ns;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TICK;
  f.tick = &k;
  return fr_triggers_take(t, &f, 0, why, 256, &fired_at);
}

#define MS 1000000ull
#define BLOCKED THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX
#define RUNNING THREADMON__THREAD_STATE__STATE_RUNNING

/* Threads 10 and 20 each wait for the object the other holds. */
static bool crossed_waits(Threadmon__SyncKind kind) {
  fr_triggers t = {0};
  CHECKF(fr_trigger_parse(&t, "deadlock"), "deadlock spec");
  char why[256] = "";
  object(&t, 1, kind, why);
  object(&t, 2, kind, why);
  enter(&t, 10 * MS, 10, BLOCKED, 2, 20, why);
  CHECKF(!tick(&t, 20 * MS, why), "one waiter is no cycle: %s", why);
  enter(&t, 30 * MS, 20, BLOCKED, 1, 10, why);
  bool fired = tick(&t, 1500 * MS, why);
  if (fired)
    CHECKF(strcmp(why, "deadlock: threads 10 -> object 2 -> 20 -> object 1 -> 10, at 1.5 s") == 0 ||
              strcmp(why, "deadlock: threads 20 -> object 1 -> 10 -> object 2 -> 20, at 1.5 s") == 0,
          "why: %s", why);
  /* The cycle formed when its last wait began, not at the tick that saw it. */
  if (fired) CHECKF(fired_at == 30 * MS, "formed at %llu ns", (unsigned long long)fired_at);
  fr_triggers_free(&t);
  return fired;
}

int main(void) {
  CHECKF(crossed_waits(THREADMON__SYNC_KIND__KIND_MUTEX), "mutex cycle not seen");
  CHECKF(crossed_waits(THREADMON__SYNC_KIND__KIND_RWLOCK), "rwlock cycle not seen");
  CHECKF(crossed_waits(THREADMON__SYNC_KIND__KIND_SPIN), "spin cycle not seen");
  /* Nobody owns a condition variable or a semaphore: no cycle. */
  CHECKF(!crossed_waits(THREADMON__SYNC_KIND__KIND_COND), "cond waits made a cycle");
  CHECKF(!crossed_waits(THREADMON__SYNC_KIND__KIND_SEM), "semaphore waits made a cycle");

  /* A wait past the threshold fires once while it is open... */
  fr_triggers t = {0};
  char why[256] = "";
  CHECKF(fr_trigger_parse(&t, "wait>100ms") && t.wait_ns == 100 * MS, "wait>100ms");
  object(&t, 7, THREADMON__SYNC_KIND__KIND_MUTEX, why);
  enter(&t, 0, 30, BLOCKED, 7, 0, why);
  CHECKF(!tick(&t, 90 * MS, why), "fired at 90 ms: %s", why);
  CHECKF(tick(&t, 150 * MS, why), "silent at 150 ms");
  CHECKF(strcmp(why, "wait>100ms: thread 30 waiting on object 7 for 150 ms at 0.1 s") == 0,
        "why: %s", why);
  CHECKF(fired_at == 100 * MS, "passed the threshold at %llu ns", (unsigned long long)fired_at);
  CHECKF(!tick(&t, 250 * MS, why), "fired twice for one wait");
  CHECKF(!enter(&t, 300 * MS, 30, RUNNING, 0, 0, why), "fired again at the wait's end");
  /* ...or when it ends, if no tick saw it open. */
  enter(&t, 400 * MS, 30, BLOCKED, 7, 0, why);
  CHECKF(enter(&t, 520 * MS, 30, RUNNING, 0, 0, why), "a wait of 120 ms ended unseen");
  CHECKF(strcmp(why, "wait>100ms: thread 30 waited 120 ms on object 7, until 0.5 s") == 0,
        "why: %s", why);
  CHECKF(fired_at == 500 * MS, "passed the threshold at %llu ns", (unsigned long long)fired_at);
  enter(&t, 600 * MS, 30, BLOCKED, 7, 0, why);
  CHECKF(!enter(&t, 650 * MS, 30, RUNNING, 0, 0, why), "a wait of 50 ms fired");
  fr_triggers_free(&t);

  struct {
    const char *spec;
    bool ok;
    uint64_t ns;
  } specs[] = {{"wait>1.5s", true, 1500 * MS}, {"wait>2m", true, 120000 * MS},
               {"wait>250us", true, 250000},   {"wait>", false, 0},
               {"wait>0ms", false, 0},         {"wait>5h", false, 0},
               {"wait>-1s", false, 0},         {"deadlocks", false, 0}};
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    fr_triggers p = {0};
    bool ok = fr_trigger_parse(&p, specs[i].spec);
    CHECKF(ok == specs[i].ok && (!ok || p.wait_ns == specs[i].ns), "%s: %d, %llu ns",
          specs[i].spec, ok, (unsigned long long)p.wait_ns);
  }
  printf("triggers: ok\n");
  return 0;
}
