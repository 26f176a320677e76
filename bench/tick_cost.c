/* tm-bench-tick: what the sampler's tick costs per thread that woke, without
 * a target, so that the figure does not depend on how loaded the machine
 * is (the probe's own thread is starved on a busy 2-CPU machine, and then
 * every tick meets every thread).
 *
 *   tm-bench-tick [THREADS [TICKS]]
 *
 * The tick's stages (probe_core) run on this thread over THREADS registry
 * records of made-up threads whose /proc files sit in /dev/shm, without
 * switch records (as at 10,000 light threads, where the rate limit stops
 * them): before each tick a tenth of them wake, each pushing a RUNNING and
 * a SLEEPING event (a light thread that wakes every 100 ms at 10 ms ticks),
 * and their schedstat moves. Frames go to a zstd capture in /dev/shm as
 * the probe's do. It prints one JSON line: CPU time per tick (this
 * thread's clock) and per visit, and the visits, reads and file reads per
 * tick, over TICKS ticks after 300 of warm-up (every light thread's first
 * reads and deferrals). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

#define MS 1000000ull
#define TID0 3000000u /* above any pid_max likely here */

static char root[256];
static uint64_t fake_now;

static uint64_t fake_clock(void) { return fake_now; }

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "tm-bench-tick: %s: %s\n", path, strerror(errno));
    exit(1);
  }
  fputs(text, f);
  fclose(f);
}

static void write_schedstat(uint32_t tid, uint64_t oncpu_ns, uint64_t slices) {
  char path[352], text[96];
  snprintf(path, sizeof path, "%s/task/%u/schedstat", root, tid);
  snprintf(text, sizeof text, "%llu 2000 %llu\n", (unsigned long long)oncpu_ns,
           (unsigned long long)slices);
  write_file(path, text);
}

static void write_task(uint32_t tid) {
  char path[352], text[512];
  snprintf(path, sizeof path, "%s/task/%u", root, tid);
  if (mkdir(path, 0755) != 0 && errno != EEXIST) exit(1);
  write_schedstat(tid, 1000000, 1);
  int len = snprintf(text, sizeof text, "%u (w) S", tid);
  for (int field = 4; field <= 52; field++)
    len += snprintf(text + len, sizeof text - (size_t)len, " %d", field == 39 ? 1 : 0);
  snprintf(text + len, sizeof text - (size_t)len, "\n");
  snprintf(path, sizeof path, "%s/task/%u/stat", root, tid);
  write_file(path, text);
  snprintf(path, sizeof path, "%s/task/%u/status", root, tid);
  write_file(path, "Name:\tw\nState:\tS (sleeping)\nvoluntary_ctxt_switches:\t5\n"
                   "nonvoluntary_ctxt_switches:\t1\n");
}

static void remove_tree(uint32_t n) {
  static const char *const files[] = {"schedstat", "stat", "status"};
  char path[352];
  for (uint32_t i = 0; i < n; i++) {
    for (int k = 0; k < 3; k++) {
      snprintf(path, sizeof path, "%s/task/%u/%s", root, TID0 + i, files[k]);
      unlink(path);
    }
    snprintf(path, sizeof path, "%s/task/%u", root, TID0 + i);
    rmdir(path);
  }
  snprintf(path, sizeof path, "%s/status", root);
  unlink(path);
  snprintf(path, sizeof path, "%s/task", root);
  rmdir(path);
  rmdir(root);
}

int main(int argc, char **argv) {
  uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 10000;
  uint32_t ticks = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 500;
  if (n == 0 || n > TM_MAX_THREADS - 1 || ticks == 0) {
    fprintf(stderr, "usage: tm-bench-tick [THREADS (1..%u) [TICKS]]\n", TM_MAX_THREADS - 1);
    return 2;
  }
  snprintf(root, sizeof root, "/dev/shm/tm-bench-tick.XXXXXX");
  if (!mkdtemp(root)) return 1;
  char path[300];
  snprintf(path, sizeof path, "%s/task", root);
  if (mkdir(path, 0755) != 0) return 1;

  static tm_session s;
  tm_fds_init();
  tm_transport_init(&s.tx);
  s.tx.compress_level = 3; /* the probe's default */
  snprintf(path, sizeof path, "%s/capture.tmcap", root);
  if (tm_transport_open_file(&s.tx, path) < 0) return 1;
  s.cfg.interval_ns = s.cfg.interval_asked_ns = 10 * MS;
  s.src_proc_task = true;
  tm_proc_init(&s.smp.proc, root);
  s.smp.clock = fake_clock;
  fake_now = tm_now_ns() + 10000 * MS;

  tm_thread **threads = calloc(n, sizeof *threads);
  uint64_t *oncpu = calloc(n, sizeof *oncpu);
  if (!threads || !oncpu) return 1;
  for (uint32_t i = 0; i < n; i++) {
    write_task(TID0 + i);
    threads[i] = tm_thread_register_foreign(TID0 + i);
    if (!threads[i]) return 1;
    tm_push_state(threads[i], TM_STATE_SLEEPING, 0, 0, 0, fake_now - 5 * MS);
    oncpu[i] = 1000000;
  }
  snprintf(path, sizeof path, "%s/status", root);
  char text[64];
  snprintf(text, sizeof text, "Name:\tw\nThreads:\t%u\n", n);
  write_file(path, text);

  uint64_t cpu = 0, visits = 0, reads = 0, files = 0;
  const uint32_t warmup = 300;
  for (uint32_t k = 0; k < warmup + ticks; k++) {
    /* A tenth wake: each ran 20 us; every tenth of those its schedstat
     * moves on disk too (what the deferred reads find). */
    for (uint32_t i = k % 10; i < n; i += 10) {
      tm_push_state(threads[i], TM_STATE_RUNNING, 0, 0, 0, fake_now + 1 * MS);
      tm_push_state(threads[i], TM_STATE_SLEEPING, 0, 0, 0, fake_now + 1 * MS + 20000);
      oncpu[i] += 20000;
      if (k % 100 == i % 100) write_schedstat(TID0 + i, oncpu[i], k);
    }
    fake_now += 10 * MS;
    uint64_t c0 = cpu_ns();
    tm_tick_run(&s, true);
    uint64_t c1 = cpu_ns();
    if (k < warmup) continue;
    cpu += c1 - c0;
    visits += s.smp.counts.visited;
    reads += s.smp.counts.read;
    files += s.smp.counts.file_reads;
  }
  printf("{\"threads\":%u,\"ticks\":%u,\"us_per_tick\":%.1f,\"us_per_visit\":%.3f,"
         "\"visits_per_tick\":%.1f,\"reads_per_tick\":%.1f,\"file_reads_per_tick\":%.1f,"
         "\"share_of_core_pct\":%.2f}\n",
         n, ticks, (double)cpu / ticks / 1000, visits ? (double)cpu / (double)visits / 1000 : 0,
         (double)visits / ticks, (double)reads / ticks, (double)files / ticks,
         (double)cpu / ticks / (10.0 * MS) * 100);
  tm_sampler_reset(&s.smp);
  snprintf(path, sizeof path, "%s/capture.tmcap", root);
  unlink(path);
  remove_tree(n);
  return 0;
}
