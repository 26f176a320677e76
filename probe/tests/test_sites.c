/* Call sites and hidden locks end to end: test_sites_workload runs under the
 * probe, its capture is decoded and the Stack frames and Tick.sites checked.
 * Usage: test_sites PROBE.so WORKLOAD TMPDIR */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_session_util.h"
#include "tm_check.h"

static const char *probe, *workload, *dir;

/* No stack a user sees holds a frame of the probe (its wrappers, the
 * threads' start trampoline): it reads as it would without the probe. */
static void check_no_probe_frames(const capture *c) {
  for (size_t i = 0; i < c->n; i++) {
    const Threadmon__Frame *f = c->frames[i];
    char **frames = NULL;
    size_t n = 0;
    if (f->body_case == THREADMON__FRAME__BODY_STACK) {
      frames = f->stack->frames;
      n = f->stack->n_frames;
    } else if (f->body_case == THREADMON__FRAME__BODY_SYNC_OBJECT) {
      frames = f->sync_object->first_contention_stack;
      n = f->sync_object->n_first_contention_stack;
    }
    for (size_t k = 0; k < n; k++) {
      if (strstr(frames[k], "libthreadmon")) fprintf(stderr, "probe frame: %s\n", frames[k]);
      CHECK(strstr(frames[k], "libthreadmon") == NULL);
    }
  }
}

/* Runs the workload in mode and loads its capture; returns the exit code. */
static int run_mode(const char *mode, capture *c) {
  char out[512], env_out[600];
  snprintf(out, sizeof out, "%s/sites-%s.tmcap", dir, mode);
  unlink(out);
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  char *argv[] = {(char *)workload, (char *)mode, NULL};
  char *env[] = {env_out, NULL};
  int status = wait_for(run_probed(probe, argv, env), 30000);
  CHECK(status != -1 && WIFEXITED(status));
  CHECK(capture_load(out, c) == 0);
  CHECK(!c->damaged);
  check_no_probe_frames(c);
  return WEXITSTATUS(status);
}

static const Threadmon__Stack *stack_by_id(const capture *c, uint32_t id) {
  for (size_t i = 0; i < c->n; i++)
    if (c->frames[i]->body_case == THREADMON__FRAME__BODY_STACK && c->frames[i]->stack->id == id)
      return c->frames[i]->stack;
  return NULL;
}

static bool same_frames(const Threadmon__Stack *a, const Threadmon__Stack *b) {
  if (a->n_frames != b->n_frames) return false;
  for (size_t i = 0; i < a->n_frames; i++)
    if (strcmp(a->frames[i], b->frames[i])) return false;
  return true;
}

/* Every stack is sent once, and no two ids carry the same frames. */
static size_t check_interned(const capture *c) {
  size_t n = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (c->frames[i]->body_case != THREADMON__FRAME__BODY_STACK) continue;
    n++;
    const Threadmon__Stack *a = c->frames[i]->stack;
    for (size_t j = i + 1; j < c->n; j++) {
      if (c->frames[j]->body_case != THREADMON__FRAME__BODY_STACK) continue;
      CHECK(c->frames[j]->stack->id != a->id);
      CHECK(!same_frames(c->frames[j]->stack, a));
    }
  }
  return n;
}

static bool has_frame(const Threadmon__Stack *s, const char *needle) {
  for (size_t i = 0; s && i < s->n_frames; i++)
    if (strstr(s->frames[i], needle)) return true;
  return false;
}

typedef struct site_total {
  uint32_t stack;
  uint64_t contentions, wait_ns;
} site_total;

/* Latest (cumulative) totals of the sites of object id. */
static size_t sites_of(const capture *c, uint32_t id, site_total *out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (c->frames[i]->body_case != THREADMON__FRAME__BODY_TICK) continue;
    const Threadmon__Tick *t = c->frames[i]->tick;
    for (size_t j = 0; j < t->n_sites; j++) {
      const Threadmon__SiteStats *s = t->sites[j];
      if (s->object_id != id) continue;
      CHECK(stack_by_id(c, s->stack_id) != NULL); /* sent before it is used */
      size_t k = 0;
      while (k < n && out[k].stack != s->stack_id) k++;
      if (k == n) {
        CHECK(n < max);
        out[n++] = (site_total){s->stack_id, 0, 0};
      }
      CHECK(s->contentions >= out[k].contentions); /* cumulative */
      out[k].contentions = s->contentions;
      out[k].wait_ns = s->wait_ns;
    }
  }
  return n;
}

static const Threadmon__SyncObject *object_of_kind(const capture *c, Threadmon__SyncKind kind,
                                                   const char *module) {
  for (size_t i = 0; i < c->n; i++) {
    if (c->frames[i]->body_case != THREADMON__FRAME__BODY_SYNC_OBJECT) continue;
    const Threadmon__SyncObject *o = c->frames[i]->sync_object;
    if (o->kind == kind && (!module || !strcmp(o->module, module))) return o;
  }
  return NULL;
}

static uint64_t object_contentions(const capture *c, uint32_t id) {
  uint64_t v = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (c->frames[i]->body_case != THREADMON__FRAME__BODY_TICK) continue;
    const Threadmon__Tick *t = c->frames[i]->tick;
    for (size_t j = 0; j < t->n_sync; j++)
      if (t->sync[j]->id == id) v = t->sync[j]->contentions;
  }
  return v;
}

/* A contended mutex: its busiest call site starts in the program's own
 * function, thousands of contentions make a handful of stacks, and every
 * contention is counted at some site. */
static void test_mutex_call_site(void) {
  capture c;
  CHECK_EQ(run_mode("mutex", &c), 0);
  const Threadmon__SyncObject *m =
      object_of_kind(&c, THREADMON__SYNC_KIND__KIND_MUTEX, "test_sites_workload");
  CHECK(m != NULL);
  site_total sites[64];
  size_t n = sites_of(&c, m->id, sites, 64);
  CHECK(n >= 1);
  size_t top = 0;
  uint64_t sum = 0;
  for (size_t i = 0; i < n; i++) {
    sum += sites[i].contentions;
    if (sites[i].wait_ns > sites[top].wait_ns) top = i;
  }
  const Threadmon__Stack *s = stack_by_id(&c, sites[top].stack);
  CHECK(s && s->n_frames >= 2);
  fprintf(stderr, "mutex: %zu sites, %llu contentions, top frame %s\n", n,
          (unsigned long long)sum, s->frames[0]);
  CHECK(strstr(s->frames[0], "test_sites_workload!contend_here+0x") == s->frames[0]);
  CHECK(has_frame(s, "test_sites_workload!mutex_worker"));
  uint64_t total = object_contentions(&c, m->id);
  /* Over a thousand, idle or with six CPU hogs beside it (873 the least
   * seen), now that the holder lets a woken waiter in. */
  CHECK(total >= 100);
  CHECK_EQ(sum, total);
  size_t stacks = check_interned(&c);
  CHECK(stacks >= 1 && stacks < 16);
  capture_free(&c);
}

/* Two threads and more hammering rand(): glibc's random() lock is found as
 * an internal lock in libc, its call site (read from the blocked threads'
 * stacks) passes through the program's rand_loop, and the values the
 * threads drew are those of a plain run (the workload checks). */
static void test_internal_lock(void) {
  capture c;
  CHECK_EQ(run_mode("rand", &c), 0);
  const Threadmon__SyncObject *o =
      object_of_kind(&c, THREADMON__SYNC_KIND__KIND_INTERNAL, "libc.so.6");
  CHECK(o != NULL);
  fprintf(stderr, "internal lock: %s %s\n", o->module, o->symbol);
  site_total sites[64];
  size_t n = sites_of(&c, o->id, sites, 64);
  CHECK(n >= 1);
  bool found = false;
  uint64_t samples = 0;
  for (size_t i = 0; i < n; i++) {
    const Threadmon__Stack *s = stack_by_id(&c, sites[i].stack);
    samples += sites[i].contentions;
    CHECK_EQ(sites[i].wait_ns, sites[i].contentions * 10000000ull);
    if (has_frame(s, "test_sites_workload!rand_loop") && has_frame(s, "libc.so.6!")) {
      found = true;
      fprintf(stderr, "internal site (%llu samples): %s <- ... %s\n",
              (unsigned long long)sites[i].contentions, s->frames[0],
              s->frames[s->n_frames > 3 ? 3 : s->n_frames - 1]);
    }
  }
  CHECK(found);
  CHECK(samples > 0);
  check_interned(&c);
  capture_free(&c);
}

/* The probe never signals the program's threads: a program with handlers
 * on every real-time signal never sees one run (the workload exits 1 when
 * one did); the lock is still found. */
static void test_program_handler_respected(void) {
  capture c;
  CHECK_EQ(run_mode("handler", &c), 0);
  CHECK(object_of_kind(&c, THREADMON__SYNC_KIND__KIND_INTERNAL, "libc.so.6") != NULL);
  capture_free(&c);
}

/* The longest time between the Ticks that carry object id's counters (or,
 * sites, its sites' counters), from the first that does to the last Tick. */
static uint64_t longest_silence(const capture *c, uint32_t id, bool sites) {
  uint64_t last_sent = 0, last_tick = 0, longest = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (c->frames[i]->body_case != THREADMON__FRAME__BODY_TICK) continue;
    const Threadmon__Tick *t = c->frames[i]->tick;
    last_tick = t->time_ns;
    bool sent = false;
    if (sites)
      for (size_t j = 0; j < t->n_sites; j++) sent = sent || t->sites[j]->object_id == id;
    else
      for (size_t j = 0; j < t->n_sync; j++) sent = sent || t->sync[j]->id == id;
    if (!sent) continue;
    if (last_sent && t->time_ns - last_sent > longest) longest = t->time_ns - last_sent;
    last_sent = t->time_ns;
  }
  CHECK(last_sent != 0);
  return last_tick - last_sent > longest ? last_tick - last_sent : longest;
}

/* A lock contended, then left alone for 1.6 s: its counters and its sites'
 * are sent again every half second all the same, so that a reader opening
 * a window of the capture (with a second of records before it) knows what
 * they were at its start; before, the window counted the whole run's waits
 * as its own. */
static void test_idle_counters_resent(void) {
  capture c;
  CHECK_EQ(run_mode("idle", &c), 0);
  const Threadmon__SyncObject *m =
      object_of_kind(&c, THREADMON__SYNC_KIND__KIND_MUTEX, "test_sites_workload");
  CHECK(m != NULL);
  CHECK(object_contentions(&c, m->id) > 0);
  const uint64_t object = longest_silence(&c, m->id, false), sites = longest_silence(&c, m->id, true);
  fprintf(stderr, "idle lock: counters silent at most %.0f ms, sites %.0f ms\n", object / 1e6,
          sites / 1e6);
  /* Half a second and one tick, which a loaded machine may stretch. */
  CHECK(object < 800000000ull && sites < 800000000ull);
  capture_free(&c);
}

int main(int argc, char **argv) {
  CHECK(argc == 4);
  probe = argv[1];
  workload = argv[2];
  dir = argv[3];
  test_mutex_call_site();
  test_internal_lock();
  test_program_handler_respected();
  test_idle_counters_resent();
  printf("test_sites: ok\n");
  return 0;
}
