/* The whole tick (tick.c) on a synthetic process: registry records for
 * made-up tids, a /proc tree in a temporary directory (task/TID/schedstat,
 * stat, status; status with Threads:), switch records replayed by the test
 * and a clock it moves. No preload, no threads but this one.
 *
 * What it holds the tick to: its cost follows what threads did, not how
 * many exist (a quiet tick over thousands of blocked threads visits and
 * reads none; a thread that ran is read, its sample has the /proc values),
 * deferred reads fall due, threads that vanish from the task directory end,
 * unknown ones are adopted after two listings, and a reset (fork child)
 * leaves nothing behind. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_switch.h"
#include "session.h"
#include "tm_check.h"

#define MS 1000000ull
#define N 4096
#define TID0 3000000u /* above any pid_max a test machine is likely to use */

static tm_session s;
static char root[256];
static uint64_t fake_now;
static tm_thread *threads[N];

static uint64_t fake_clock(void) { return fake_now; }

/* ---- the /proc tree ---- */

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(text, f);
  fclose(f);
}

static void write_task(uint32_t tid, uint64_t oncpu_ns, uint64_t slices, unsigned utime_ticks) {
  char dir[320], path[352], text[512];
  snprintf(dir, sizeof dir, "%s/task/%u", root, tid);
  if (mkdir(dir, 0755) != 0) CHECK(errno == EEXIST);
  snprintf(path, sizeof path, "%s/schedstat", dir);
  snprintf(text, sizeof text, "%llu %llu %llu\n", (unsigned long long)oncpu_ns, 2000ull,
           (unsigned long long)slices);
  write_file(path, text);
  /* stat: state S, minflt 11 (field 10), majflt 1 (12), utime (14), stime
   * 2 (15), processor 1 (39). */
  int len = snprintf(text, sizeof text, "%u (w) S", tid);
  for (int field = 4; field <= 52; field++) {
    unsigned v = field == 10 ? 11 : field == 12 ? 1 : field == 14 ? utime_ticks
               : field == 15 ? 2 : field == 39 ? 1 : 0;
    len += snprintf(text + len, sizeof text - (size_t)len, " %u", v);
  }
  snprintf(text + len, sizeof text - (size_t)len, "\n");
  snprintf(path, sizeof path, "%s/stat", dir);
  write_file(path, text);
  snprintf(path, sizeof path, "%s/status", dir);
  write_file(path, "Name:\tw\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t5\n"
                   "nonvoluntary_ctxt_switches:\t1\n");
}

static void remove_task(uint32_t tid) {
  static const char *const files[] = {"schedstat", "stat", "status"};
  char path[352];
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/task/%u/%s", root, tid, files[i]);
    CHECK(unlink(path) == 0);
  }
  snprintf(path, sizeof path, "%s/task/%u", root, tid);
  CHECK(rmdir(path) == 0);
}

static void write_thread_count(unsigned n) {
  char path[300], text[64];
  snprintf(path, sizeof path, "%s/status", root);
  snprintf(text, sizeof text, "Name:\tw\nThreads:\t%u\n", n);
  write_file(path, text);
}

/* ---- switch records, replayed inside the tick ---- */

typedef struct record {
  uint32_t tid;
  uint64_t time_ns;
  int kind;
} record;
static record records[2 * N];
static size_t nrecords;
static uint64_t lose; /* records the next drain reports lost */

static void replay(tm_session *sess, tm_switch_fn fn, void *arg) {
  sess->perf.lost += lose;
  lose = 0;
  for (size_t i = 0; i < nrecords; i++) fn(arg, records[i].tid, records[i].time_ns, 0, records[i].kind);
  nrecords = 0;
}

static void add_record(uint32_t tid, uint64_t time_ns, int kind) {
  records[nrecords++] = (record){tid, time_ns, kind};
}

static void tick(void) {
  fake_now += 10 * MS;
  tm_tick_run(&s, true);
}

static const Threadmon__LwpSample *sample_of(uint32_t tid) {
  for (size_t i = 0; i < s.smp.fr.lwp_n; i++)
    if (s.smp.fr.lwps[i].tid == tid) return &s.smp.fr.lwps[i];
  return NULL;
}

int main(void) {
  /* 12,000 small files: in memory when there is a tmpfs (27 s on this
   * VM's disk, 1.4 s in /dev/shm). */
  const char *tmp = getenv("TMPDIR");
  if (access("/dev/shm", W_OK) == 0) tmp = "/dev/shm";
  snprintf(root, sizeof root, "%s/test_stages_tick.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  CHECK(mkdtemp(root) != NULL);
  char task[300];
  snprintf(task, sizeof task, "%s/task", root);
  CHECK(mkdir(task, 0755) == 0);

  tm_fds_init();
  tm_transport_init(&s.tx); /* no file, no display: frames are built and dropped */
  s.cfg.interval_ns = s.cfg.interval_asked_ns = 10 * MS;
  s.src_perf_switch = s.src_proc_task = true;
  tm_proc_init(&s.smp.proc, root);
  s.smp.clock = fake_clock;
  s.smp.switch_source = replay;
  /* The records began before every thread: each is born covered. */
  s.smp.started_ns = tm_now_ns();
  /* Ahead of the real clock the registry stamps with: an ended thread's
   * grace for a late name is long over. */
  fake_now = tm_now_ns() + 10000 * MS;

  for (uint32_t i = 0; i < N; i++) {
    write_task(TID0 + i, 1000000 + i, 3, 5);
    threads[i] = tm_thread_register_foreign(TID0 + i);
    CHECK(threads[i] != NULL);
    /* Blocked in a cond wait, as a pool's idle workers are. */
    tm_push_state(threads[i], TM_STATE_BLOCKED_COND, 0, 0, 0, fake_now - 5 * MS);
  }
  write_thread_count(N);

  /* Tick 1: nothing known yet: every thread met, read and described. */
  tick();
  CHECK_EQ(s.smp.counts.visited, N);
  CHECK_EQ(s.smp.counts.read, N);
  CHECK_EQ(s.smp.fr.lwp_n, N);
  CHECK_EQ(s.smp.threads.count, N);
  CHECK_EQ(s.smp.rescan.listings, 1);
  const Threadmon__LwpSample *l = sample_of(TID0 + 7);
  CHECK(l != NULL);
  CHECK_EQ(l->oncpu_ns, 1000007);
  CHECK_EQ(l->runqueue_ns, 2000);
  CHECK_EQ(l->kstate, 'S');
  CHECK_EQ(l->minflt, 11);
  CHECK_EQ(l->majflt, 1);
  CHECK_EQ(l->cpu, 1);
  CHECK_EQ(l->user_ns, 5 * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK)));

  /* Tick 2: each switched out (blocked) once: visited for its record, its
   * read deferred 150 ms (it only woke for a moment). */
  for (uint32_t i = 0; i < N; i++) add_record(TID0 + i, fake_now + 5 * MS, TM_SWITCH_OUT);
  tick();
  CHECK_EQ(s.smp.counts.visited, N);
  CHECK_EQ(s.smp.counts.read, 0);
  CHECK_EQ(s.smp.counts.file_reads, 0);

  /* Quiet ticks: nothing ran, nothing is visited or read. */
  for (int k = 3; k < 17; k++) {
    tick();
    CHECK_EQ(s.smp.counts.visited, 0);
    CHECK_EQ(s.smp.counts.file_reads, 0);
    CHECK_EQ(s.smp.fr.lwp_n, 0);
  }
  /* Tick 17: the deferred reads fall due, once each, schedstat alone
   * (it did not move: nothing more is worth reading). */
  tick();
  CHECK_EQ(s.smp.counts.visited, N);
  CHECK_EQ(s.smp.counts.read, N);
  CHECK_EQ(s.smp.counts.file_reads, N);
  /* A read thread is looked at once more (it may have run on), then left. */
  tick();
  CHECK_EQ(s.smp.counts.visited, N);
  CHECK_EQ(s.smp.counts.read, 0);
  tick();
  CHECK_EQ(s.smp.counts.visited, 0);

  /* Eight threads run 5 ms and block again: those eight are read. */
  for (uint32_t i = 100; i < 108; i++) {
    write_task(TID0 + i, 1000000 + i + 5 * MS, 4, 6);
    add_record(TID0 + i, fake_now + 1 * MS, TM_SWITCH_IN);
    add_record(TID0 + i, fake_now + 6 * MS, TM_SWITCH_OUT);
  }
  tick();
  CHECK_EQ(s.smp.counts.visited, 8);
  CHECK_EQ(s.smp.counts.read, 8);
  CHECK_EQ(s.smp.fr.lwp_n, 8);
  l = sample_of(TID0 + 103);
  CHECK(l != NULL);
  CHECK_EQ(l->oncpu_ns, 1000103 + 5 * MS);
  /* status's 5 (read on tick 1: no record yet, switched 3 times), then one
   * record on tick 2 and one now. */
  CHECK_EQ(l->vol_ctxsw, 7);
  tick();
  CHECK_EQ(s.smp.counts.read, 0);
  tick();
  CHECK_EQ(s.smp.counts.visited, 0);

  /* The task directory: one thread left without passing a wrapper, one
   * appeared that no wrapper saw. Its count moved: listed again. */
  uint32_t gone = TID0 + 5, stranger = TID0 + N + 1;
  remove_task(gone);
  write_task(stranger, 42 * MS, 10, 1);
  write_thread_count(N + 2); /* not the N known: a listing is due */
  fake_now += 1000 * MS;
  tick();
  CHECK_EQ(s.smp.rescan.listings, 2);
  CHECK_EQ(s.smp.fr.end_n, 1);
  CHECK_EQ(s.smp.fr.ends[0].tid, gone);
  CHECK_EQ(s.smp.threads.count, N - 1);
  CHECK(tm_thread_by_tid(stranger) == NULL); /* once unknown: maybe not attached yet */
  fake_now += 1000 * MS;
  tick();
  CHECK_EQ(s.smp.rescan.listings, 3);
  CHECK(tm_thread_by_tid(stranger) != NULL); /* twice: adopted, met and read */
  CHECK_EQ(s.smp.threads.count, N);
  l = sample_of(stranger);
  CHECK(l != NULL);
  CHECK_EQ(l->oncpu_ns, 42 * MS);
  /* A second later the count matches: no listing. */
  write_thread_count(N);
  fake_now += 1000 * MS;
  tick();
  CHECK_EQ(s.smp.rescan.listings, 3);

  /* The switch-rate limit: a burst pauses the records, they come back a
   * second later; a burst again soon after pauses them twice as long. */
  s.cfg.max_switch_rate = 1000; /* per second and CPU (no CPUs here: one) */
  uint32_t busy = TID0 + 200;
  for (int round = 0; round < 2; round++) {
    int ticks_to_pause = 0;
    while (!s.perf_switch_paused && ticks_to_pause < 20) {
      for (int k = 0; k < 100; k++)
        add_record(busy, fake_now + (uint64_t)k * 50000, k % 2 ? TM_SWITCH_OUT_PREEMPT : TM_SWITCH_IN);
      tick();
      ticks_to_pause++;
    }
    CHECK(s.perf_switch_paused && !s.src_perf_switch);
    /* Of 4,096 threads, those not resting in a wrapped call are visited:
     * the busy one, the stranger (read every tick now: outside wrapped
     * calls) and the eight whose deferred read is pending; the busy one
     * and the stranger read at most. */
    CHECK(s.smp.counts.visited <= 10);
    CHECK(s.smp.counts.read <= 2);
    CHECK(ticks_to_pause <= 7); /* judged over 50 ms */
    CHECK_EQ(s.smp.sw.pauses, (uint32_t)round + 1);
    uint64_t paused_at = fake_now, pause = round == 0 ? 1000 * MS : 2000 * MS;
    CHECK_EQ(s.smp.sw.resume_at, paused_at + pause);
    /* Meanwhile nothing is planned from records: a thread that ran is read
     * by its events and schedstat as without them. */
    while (fake_now + 10 * MS < paused_at + pause) {
      tick();
      CHECK(s.perf_switch_paused);
    }
    tick();
    CHECK(!s.perf_switch_paused && s.src_perf_switch);
    CHECK(s.smp.counts.visited <= 10);
    CHECK(s.smp.counts.read <= 2);
    CHECK_EQ(s.smp.sw.resumed_at, fake_now);
  }
  s.cfg.max_switch_rate = 0;

  /* Records lost: any thread may have switched unseen. One resting in a
   * wrapped call since its last visit is not visited (an event of its, or
   * its next run's record, brings it back); one whose events are drained
   * now is settled by them and not read (each read all of them: 250 ms of
   * CPU in one tick at 10,000 threads). */
  for (int k = 0; k < 3; k++) tick();
  lose = 7;
  tick();
  CHECK(s.smp.counts.visited <= 10);
  CHECK(s.smp.counts.read <= 2);
  CHECK(s.smp.counts.file_reads <= 8);
  /* A blocked thread that woke meanwhile (its events say so) is read. */
  tm_push_state(threads[300], TM_STATE_RUNNING, 0, 0, 0, fake_now + 1 * MS);
  tm_push_state(threads[300], TM_STATE_BLOCKED_COND, 0, 0, 0, fake_now + 4 * MS);
  write_task(TID0 + 300, 1000300 + 9 * MS, 9, 5);
  lose = 1;
  tick();
  CHECK(s.smp.counts.visited <= 11);
  CHECK(sample_of(TID0 + 300) != NULL);
  CHECK_EQ(sample_of(TID0 + 300)->oncpu_ns, 1000300 + 9 * MS);
  /* Then quiet again, but for the stranger: no records of it and outside
   * wrapped calls, it is read every tick. */
  tick();
  tick();
  CHECK_EQ(s.smp.counts.read, 1);
  CHECK(threads[300]->sampler->read_tick < s.smp.tick_no);

  /* A thousand threads wake for 0.2 ms: each read is deferred (a light
   * wake-up), the threads rest with a read due. Records lost now: the
   * resync need not visit them (it visited every one of them, as after a
   * pool's creation burst); the wheel brings each back when its read is
   * due, settled by its events then, and read. */
  for (int wake = 1; wake <= 2; wake++) {
    for (uint32_t i = 1000; i < 2000; i++) {
      write_task(TID0 + i, 1000000 + i + (uint64_t)wake * 200000, 4 + (uint64_t)wake, 5);
      add_record(TID0 + i, fake_now + 1 * MS, TM_SWITCH_IN);
      add_record(TID0 + i, fake_now + 1 * MS + 200000, TM_SWITCH_OUT);
    }
    tick();
    /* Not read for over a second: read at the first wake-up. */
    CHECK_EQ(s.smp.counts.read, wake == 1 ? 1000 + 1 : 1); /* and the stranger */
    tick();
    tick();
  }
  CHECK(s.smp.plan.due[threads[1500]->sampler->slot] != 0);
  lose = 3;
  tick();
  CHECK(s.smp.counts.visited <= 11);
  CHECK(s.smp.counts.read <= 2);
  int waited = 0, read_all = 0;
  while (waited++ < 40 && !read_all) {
    tick();
    read_all = s.smp.counts.read >= 1000;
    if (!read_all) CHECK(s.smp.counts.visited <= 11);
  }
  CHECK(read_all);
  CHECK(sample_of(TID0 + 1500) != NULL);
  CHECK_EQ(sample_of(TID0 + 1500)->oncpu_ns, 1000000 + 1500 + 2 * 200000);
  CHECK_EQ(threads[1500]->sampler->sw_kind, TM_SWITCH_OUT);

  /* Records closed (the creation limit): 300 threads are born and wait in
   * a wrapped call after 0.3 ms of running, 300 more after 5 ms. The first
   * are not read (their events say all; each read cost 20-40 us in a
   * creation burst), the others are; one of the first wakes for 3 ms:
   * read then. */
  s.src_perf_switch = false;
  enum { BORN = 600 };
  static tm_thread *born[BORN];
  uint32_t born0 = TID0 + N + 100;
  for (uint32_t k = 0; k < BORN; k++) {
    write_task(born0 + k, 1000000 + k, 1, 0);
    born[k] = tm_thread_register_foreign(born0 + k);
    CHECK(born[k] != NULL);
    uint64_t ran = k < BORN / 2 ? 300000 : 5 * MS;
    tm_push_state(born[k], TM_STATE_RUNNING, 0, 0, 0, fake_now + 1 * MS);
    tm_push_state(born[k], TM_STATE_BLOCKED_COND, 0, 0, 0, fake_now + 1 * MS + ran);
  }
  write_thread_count(N + 1 + BORN);
  tick();
  CHECK(s.smp.counts.visited >= BORN);
  CHECK(s.smp.counts.read >= BORN / 2 && s.smp.counts.read <= BORN / 2 + 2);
  CHECK(sample_of(born0) == NULL);
  CHECK(sample_of(born0 + BORN - 1) != NULL);
  for (int k = 0; k < 3; k++) tick();
  CHECK(born[0]->sampler != NULL && !born[0]->sampler->have_sched);
  write_task(born0, 1000000 + 3 * MS, 2, 0);
  tm_push_state(born[0], TM_STATE_RUNNING, 0, 0, 0, fake_now + 1 * MS);
  tm_push_state(born[0], TM_STATE_BLOCKED_COND, 0, 0, 0, fake_now + 4 * MS);
  tick();
  CHECK(sample_of(born0) != NULL);
  CHECK_EQ(sample_of(born0)->oncpu_ns, 1000000 + 3 * MS);
  s.src_perf_switch = true;

  /* A fork child's reset: no state, no tid, no pointer left behind. */
  tm_sampler_reset(&s.smp);
  for (uint32_t i = 0; i < N; i++) CHECK(threads[i]->sampler == NULL);
  CHECK(s.smp.threads.all == NULL && s.smp.threads.count == 0 && s.smp.sw.tids == NULL);
  CHECK(!s.smp.plan.settled);

  /* Clean up the tree. */
  for (uint32_t i = 0; i < N; i++)
    if (TID0 + i != gone) remove_task(TID0 + i);
  remove_task(stranger);
  for (uint32_t k = 0; k < BORN; k++) remove_task(born0 + k);
  char path[300];
  snprintf(path, sizeof path, "%s/status", root);
  unlink(path);
  rmdir(task);
  rmdir(root);
  return 0;
}
