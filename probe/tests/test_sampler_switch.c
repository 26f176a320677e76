/* PERF_RECORD_SWITCH for threads created after the probe started.
 *
 * Runs preloaded (THREADMON_OUTPUT names the capture). The probe opens its
 * per-CPU switch events on the main thread with inherit before main(); every
 * thread here is created later, some of them by other late threads, so their
 * records exist only if inheritance works. Each spinner burns a known amount
 * of its own CPU time, sleeps once in the middle, and notes (time, CPU) pairs
 * from clock_gettime(CLOCK_MONOTONIC) and sched_getcpu(). Then the program
 * waits for the sampler to flush and checks its own capture:
 *   - every spinner has records, in IN/OUT order, and none were lost;
 *   - its on-CPU intervals sum to its CLOCK_THREAD_CPUTIME_ID time (10%);
 *   - each noted (time, CPU) lies inside an interval on that CPU, so record
 *     times are CLOCK_MONOTONIC and record CPUs are right;
 *   - the sleep shows up as a voluntary switch-out, and with more spinners
 *     than CPUs some switch-outs are preemptions;
 *   - while it sleeps once more at the end, the probe's LwpSample of it
 *     holds what getrusage(RUSAGE_THREAD) said just before (plus that one
 *     voluntary switch): context switch counts, user and system time,
 *     faults; so counts kept from switch records equal the kernel's. */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "test_session_util.h"
#include "tm_check.h"

#define SPIN_NS 100000000ull  /* CPU time each spinner burns */
#define SLEEP_NS 20000000ull  /* one voluntary sleep in the middle */
#define MAX_SPINNERS 34
#define MAX_NOTES 4096
/* The last sleep, watched by several ticks: longer than the 150 ms after
 * which a thread come to rest is read (sampler.c LIGHT_SETTLE_NS), with
 * room for a late sampler on a loaded machine. */
#define REST_NS 400000000ull

typedef struct note {
  uint64_t t0, t1; /* CLOCK_MONOTONIC before and after sched_getcpu */
  int cpu;
} note;

typedef struct spinner {
  pthread_t handle;
  uint32_t tid;
  bool make_child; /* creates one more spinner from inside itself */
  struct spinner *child;
  uint64_t begin_ns, end_ns;     /* monotonic, while running */
  uint64_t sleep0_ns, sleep1_ns; /* around the voluntary sleep */
  uint64_t cpu_ns;               /* its own CPU time at the end */
  struct rusage ru;              /* just before the last sleep */
  struct rusage ru_after;        /* just after it */
  uint64_t ru_cpu_ns;
  uint64_t rest0_ns, rest1_ns;   /* around the last sleep */
  note notes[MAX_NOTES];
  size_t n_notes;
} spinner;

static spinner spinners[MAX_SPINNERS];
static size_t n_spinners;

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The machine's steal time so far (all CPUs, /proc/stat): on a busy host a
 * vCPU's thread is on the CPU by the records while the hypervisor runs
 * something else, and its CPU clock does not count that time. */
static uint64_t steal_ns(void) {
  FILE *f = fopen("/proc/stat", "r");
  unsigned long long v[8] = {0};
  if (f) {
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) != 8)
      v[7] = 0;
    fclose(f);
  }
  return v[7] * (1000000000u / (uint64_t)sysconf(_SC_CLK_TCK));
}
static uint64_t steal_during_spin; /* ns, all CPUs */

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Burns CPU until this thread has used `until` ns, noting (time, CPU)
 * about every 200 µs of wall time. */
static void spin_until(spinner *s, uint64_t until) {
  uint64_t next_note = 0;
  volatile unsigned x = 1;
  while (thread_cpu_ns() < until) {
    for (int i = 0; i < 2000; i++) x = x * 1103515245u + 12345u;
    uint64_t now = mono_ns();
    if (now >= next_note && s->n_notes < MAX_NOTES) {
      note *n = &s->notes[s->n_notes];
      n->t0 = now;
      n->cpu = sched_getcpu();
      n->t1 = mono_ns();
      s->n_notes++;
      next_note = now + 200000;
    }
  }
}

static void *spin_main(void *arg) {
  spinner *s = arg;
  s->tid = (uint32_t)gettid();
  s->begin_ns = mono_ns();
  if (s->make_child) CHECK(pthread_create(&s->child->handle, NULL, spin_main, s->child) == 0);
  spin_until(s, SPIN_NS / 2);
  s->sleep0_ns = mono_ns();
  struct timespec ts = {0, (long)SLEEP_NS};
  nanosleep(&ts, NULL);
  s->sleep1_ns = mono_ns();
  spin_until(s, SPIN_NS);
  s->cpu_ns = thread_cpu_ns();
  s->end_ns = mono_ns();
  if (s->make_child) CHECK(pthread_join(s->child->handle, NULL) == 0);
  CHECK(getrusage(RUSAGE_THREAD, &s->ru) == 0);
  s->ru_cpu_ns = thread_cpu_ns();
  s->rest0_ns = mono_ns();
  struct timespec rest = {0, (long)REST_NS};
  nanosleep(&rest, NULL);
  s->rest1_ns = mono_ns();
  CHECK(getrusage(RUSAGE_THREAD, &s->ru_after) == 0);
  return NULL;
}

/* ---- the capture ---- */

typedef struct rec {
  uint64_t t;
  uint32_t cpu;
  int kind;
} rec;

static int by_time(const void *a, const void *b) {
  const rec *x = a, *y = b;
  return x->t < y->t ? -1 : x->t > y->t;
}

/* The probe writes whole frames as it goes: wait until a Tick later than
 * `after` is in the file, so every switch before it has been flushed. */
static void load_after(const char *path, uint64_t after, capture *c) {
  for (int tries = 0; tries < 500; tries++) {
    if (capture_load(path, c) == 0) {
      const Threadmon__Frame *last = capture_last(c, THREADMON__FRAME__BODY_TICK);
      if (last && last->tick->time_ns > after) return;
      capture_free(c);
    }
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "no Tick after the spinners ended in %s\n", path);
  exit(1);
}

static rec *records_of(const capture *c, uint32_t tid, size_t *n) {
  size_t cap = 64;
  rec *r = malloc(cap * sizeof *r);
  CHECK(r != NULL);
  *n = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (c->frames[i]->body_case != THREADMON__FRAME__BODY_SWITCHES) continue;
    const Threadmon__CpuSwitches *sw = c->frames[i]->switches;
    CHECK(sw->n_tid == sw->n_delta_ns && sw->n_tid == sw->n_cpu && sw->n_tid == sw->n_kind);
    uint64_t t = sw->base_ns;
    for (size_t k = 0; k < sw->n_tid; k++) {
      t += (uint64_t)sw->delta_ns[k];
      if (sw->tid[k] != tid) continue;
      if (*n == cap) {
        cap *= 2;
        r = realloc(r, cap * sizeof *r);
        CHECK(r != NULL);
      }
      r[(*n)++] = (rec){t, sw->cpu[k], (int)sw->kind[k]};
    }
  }
  /* Per-CPU rings are drained one after another: sort by time. */
  qsort(r, *n, sizeof *r, by_time);
  return r;
}

static size_t preempts;

static void check_spinner(const capture *c, const spinner *s, long ncpu) {
  size_t n;
  rec *r = records_of(c, s->tid, &n);
  if (n < 3) fprintf(stderr, "tid %u: %zu switch records\n", s->tid, n);
  CHECK(n >= 3); /* at least in, out (the sleep), in */
  /* Intervals: IN then OUT, alternating, each on one CPU. The kernel
   * detaches a thread's inherited events before its last switch-out, so
   * an ended thread's last record is an IN: the exit closes that one. */
  uint64_t on_cpu = 0;
  bool slept = false;
  uint64_t mid = s->sleep0_ns + (s->sleep1_ns - s->sleep0_ns) / 2;
  for (size_t i = 0; i < n; i += 2) {
    const rec *in = &r[i], *out = i + 1 < n ? &r[i + 1] : NULL;
    CHECK_EQ(in->kind, THREADMON__SWITCH_KIND__SWITCH_IN);
    CHECK((long)in->cpu < ncpu);
    if (!out) break;
    CHECK(out->kind == THREADMON__SWITCH_KIND__SWITCH_OUT ||
          out->kind == THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT);
    CHECK_EQ(in->cpu, out->cpu);
    if (out->kind == THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT) preempts++;
    /* The sleep: a voluntary switch-out inside the program's sleep window,
     * and its middle outside every interval. */
    if (out->kind == THREADMON__SWITCH_KIND__SWITCH_OUT && out->t >= s->sleep0_ns &&
        out->t <= s->sleep1_ns)
      slept = true;
    CHECK(!(in->t <= mid && mid <= out->t));
  }
  CHECK(slept);
  /* On-CPU time up to the moment the thread read its own CPU clock. */
  for (size_t i = 0; i < n && r[i].t < s->end_ns; i += 2) {
    uint64_t out = i + 1 < n && r[i + 1].t < s->end_ns ? r[i + 1].t : s->end_ns;
    on_cpu += out - r[i].t;
  }
  /* The program's own clock readings lie inside the recorded span: on a
   * CPU at its first and its last reading. */
  CHECK(r[0].t <= s->begin_ns);
  size_t last_in = (n - 1) & ~(size_t)1;
  while (last_in > 0 && r[last_in].t > s->end_ns) last_in -= 2;
  CHECK(r[last_in].t <= s->end_ns && (last_in + 1 >= n || r[last_in + 1].t >= s->end_ns));

  /* Every noted (time, CPU) falls in an interval on that CPU. */
  size_t matched = 0, j = 0;
  for (size_t k = 0; k < s->n_notes; k++) {
    const note *nt = &s->notes[k];
    while (j + 2 < n && r[j + 1].t < nt->t0) j += 2;
    for (size_t i = j; i < n && r[i].t <= nt->t1; i += 2) {
      uint64_t out = i + 1 < n ? r[i + 1].t : UINT64_MAX;
      if (out >= nt->t0 && (int)r[i].cpu == nt->cpu) {
        matched++;
        break;
      }
    }
  }
  double err = (double)on_cpu / (double)s->cpu_ns - 1.0;
  /* Stolen time is on the CPU by the records but not by the clock; one
   * thread can have lost at most the steal of all CPUs (counted in whole
   * USER_HZ ticks: one more per CPU). */
  double steal_allowed =
      (double)(steal_during_spin + (uint64_t)ncpu * (1000000000u / (uint64_t)sysconf(_SC_CLK_TCK))) /
      (double)s->cpu_ns;
  printf("tid %u: %zu records, on-CPU %.2f ms by records vs %.2f ms by its clock (%+.2f%%; "
         "machine steal meanwhile %.2f ms), %zu/%zu (time, CPU) notes inside a matching interval\n",
         s->tid, n, on_cpu / 1e6, s->cpu_ns / 1e6, 100 * err, steal_during_spin / 1e6, matched,
         s->n_notes);
  CHECK(s->n_notes > 10);
  CHECK_EQ(matched, s->n_notes);
  CHECK(err > -0.10 && (err < 0.10 || err < steal_allowed + 0.02));

  /* Each sample's oncpu_ns against the records up to its read_ns: they
   * grow alike but for stolen time (schedstat alone lags a running thread
   * by a scheduler tick; the probe reads the exact clock of a thread on a
   * CPU). The CPU time a new thread uses before its first record is a
   * constant offset: compared to the first sample. */
  int64_t lo = INT64_MAX, hi = INT64_MIN, d0 = 0;
  size_t samples = 0;
  for (size_t f = 0; f < c->n; f++) {
    if (c->frames[f]->body_case != THREADMON__FRAME__BODY_TICK) continue;
    const Threadmon__Tick *t = c->frames[f]->tick;
    for (size_t k = 0; k < t->n_lwps; k++) {
      const Threadmon__LwpSample *l = t->lwps[k];
      if (l->tid != s->tid || l->read_ns < s->begin_ns || l->read_ns > s->end_ns) continue;
      uint64_t by_records = 0;
      for (size_t i = 0; i < n && r[i].t < l->read_ns; i += 2) {
        uint64_t out = i + 1 < n && r[i + 1].t < l->read_ns ? r[i + 1].t : l->read_ns;
        by_records += out - r[i].t;
      }
      int64_t d = (int64_t)by_records - (int64_t)l->oncpu_ns;
      if (!samples) d0 = d;
      d -= d0;
      if (d < lo) lo = d;
      if (d > hi) hi = d;
      samples++;
    }
  }
  printf("  %zu samples: records - oncpu_ns from %.3f to %.3f ms\n", samples, lo / 1e6, hi / 1e6);
  CHECK(samples > 3);
  CHECK(lo > -1000000);
  CHECK((double)hi < 1e6 + steal_allowed * (double)s->cpu_ns);
  free(r);
}

/* The probe's view of a thread asleep in its last sleep: the last sample
 * inside the sleep was read after it switched out (a sample from before
 * the switch-out is followed by one more, as the switch moved it). */
static void check_counters(const capture *c, const spinner *s) {
  long hz = sysconf(_SC_CLK_TCK);
  CHECK(hz > 0);
  uint64_t tick_ns = 1000000000u / (uint64_t)hz;
  const Threadmon__LwpSample *l = NULL;
  for (size_t i = 0; i < c->n; i++) {
    if (c->frames[i]->body_case != THREADMON__FRAME__BODY_TICK) continue;
    const Threadmon__Tick *t = c->frames[i]->tick;
    if (t->time_ns <= s->rest0_ns || t->time_ns > s->rest1_ns) continue;
    for (size_t k = 0; k < t->n_lwps; k++)
      if (t->lwps[k]->tid == s->tid) l = t->lwps[k];
  }
  CHECK(l != NULL);
  uint64_t ru_user = ((uint64_t)s->ru.ru_utime.tv_sec * 1000000u + (uint64_t)s->ru.ru_utime.tv_usec) *
                     1000u / tick_ns * tick_ns;
  uint64_t ru_sys = ((uint64_t)s->ru.ru_stime.tv_sec * 1000000u + (uint64_t)s->ru.ru_stime.tv_usec) *
                    1000u / tick_ns * tick_ns;
  printf("tid %u asleep: vol %llu (getrusage %ld + 1), invol %llu (%ld..%ld), user %llu (%llu) "
         "system %llu (%llu) ns, minflt %llu (%ld), oncpu %llu (>= %llu) ns\n",
         s->tid, (unsigned long long)l->vol_ctxsw, s->ru.ru_nvcsw,
         (unsigned long long)l->invol_ctxsw, s->ru.ru_nivcsw, s->ru_after.ru_nivcsw,
         (unsigned long long)l->user_ns,
         (unsigned long long)ru_user, (unsigned long long)l->system_ns,
         (unsigned long long)ru_sys, (unsigned long long)l->minflt, s->ru.ru_minflt,
         (unsigned long long)l->oncpu_ns, (unsigned long long)s->ru_cpu_ns);
  CHECK_EQ(l->vol_ctxsw, (uint64_t)s->ru.ru_nvcsw + 1);
  /* Preemptions between getrusage and the sleep are possible (two, once,
   * with 4 spinners on 2 CPUs): the count after the sleep bounds them. */
  CHECK(l->invol_ctxsw >= (uint64_t)s->ru.ru_nivcsw &&
        l->invol_ctxsw <= (uint64_t)s->ru_after.ru_nivcsw);
  CHECK_EQ(l->minflt, s->ru.ru_minflt);
  CHECK_EQ(l->majflt, s->ru.ru_majflt);
  /* Clock ticks split by the kernel's ratio: only their sum is fixed
   * against a reading a moment earlier, and each of the two readings here
   * is rounded down to a tick on its own (a tick of each may differ; seen
   * under load). */
  CHECK(l->user_ns + l->system_ns + tick_ns >= ru_user + ru_sys &&
        l->user_ns + l->system_ns <= ru_user + ru_sys + 2 * tick_ns);
  CHECK(l->oncpu_ns >= s->ru_cpu_ns && l->oncpu_ns < s->ru_cpu_ns + 2000000);
}

int main(void) {
  const char *path = getenv("THREADMON_OUTPUT");
  if (!path || !path[0]) {
    fprintf(stderr, "run preloaded with THREADMON_OUTPUT set\n");
    return 1;
  }
  long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  CHECK(ncpu >= 1);
  /* More spinners than CPUs (so some are preempted); half of them are
   * created by other spinners. */
  n_spinners = (size_t)ncpu + 2;
  if (n_spinners > MAX_SPINNERS) n_spinners = MAX_SPINNERS;
  if (n_spinners % 2) n_spinners++;
  if (n_spinners > MAX_SPINNERS) n_spinners = MAX_SPINNERS;

  /* Well after the probe opened its events. */
  struct timespec ts = {0, 100000000};
  nanosleep(&ts, NULL);
  size_t half = n_spinners / 2;
  for (size_t i = 0; i < half; i++) {
    spinners[i].make_child = true;
    spinners[i].child = &spinners[half + i];
  }
  uint64_t steal0 = steal_ns();
  for (size_t i = 0; i < half; i++)
    CHECK(pthread_create(&spinners[i].handle, NULL, spin_main, &spinners[i]) == 0);
  for (size_t i = 0; i < half; i++) CHECK(pthread_join(spinners[i].handle, NULL) == 0);
  steal_during_spin = steal_ns() - steal0;
  uint64_t last_end = 0;
  for (size_t i = 0; i < n_spinners; i++)
    if (spinners[i].rest1_ns > last_end) last_end = spinners[i].rest1_ns;

  capture c;
  load_after(path, last_end + 30000000, &c);
  CHECK(!c.damaged);
  uint64_t lost = 0;
  for (size_t i = 0; i < c.n; i++)
    if (c.frames[i]->body_case == THREADMON__FRAME__BODY_SWITCHES) lost += c.frames[i]->switches->lost;
  const Threadmon__Hello *h = c.frames[0]->hello;
  bool have_switch = false;
  for (size_t i = 0; i < h->n_sources; i++)
    if (h->sources[i] == THREADMON__SOURCE__SOURCE_PERF_SWITCH) have_switch = true;
  if (!have_switch) {
    /* The fallback (status every 10 ticks) must get the counters right. */
    printf("PERF_RECORD_SWITCH unavailable in this session: counters only\n");
    for (size_t i = 0; i < n_spinners; i++) check_counters(&c, &spinners[i]);
    capture_free(&c);
    return 0;
  }
  CHECK_EQ(lost, 0);
  for (size_t i = 0; i < n_spinners; i++) {
    /* The probe knows the thread by the tid the program saw. */
    bool started = false;
    for (size_t k = 0; k < c.n; k++)
      if (c.frames[k]->body_case == THREADMON__FRAME__BODY_THREAD_START &&
          c.frames[k]->thread_start->tid == spinners[i].tid)
        started = true;
    CHECK(started);
    check_spinner(&c, &spinners[i], ncpu);
    check_counters(&c, &spinners[i]);
  }
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  printf("%zu spinners on %ld CPUs: %zu preempted switch-outs\n", n_spinners, online, preempts);
  if ((long)n_spinners > online) CHECK(preempts > 0);
  capture_free(&c);
  return 0;
}
