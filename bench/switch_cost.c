/* tm-bench-switchcost: what each way of learning a thread's context
 * switches costs the kernel at every switch (issue 26, deliverable 3).
 *
 *   tm-bench-switchcost CONFIG OPS
 *
 * Two threads pinned to CPU 0 yield to each other OPS times each, as
 * tm-bench-sync yield-pingpong does, with the perf events of CONFIG opened
 * by this program itself (no probe):
 *   none       no events
 *   records    the probe's way: a PERF_RECORD_SWITCH dummy event per CPU,
 *              inherited, opened before the second thread (base/perf_switch.c)
 *   disabled   the same events, disabled by ioctl (a paused probe)
 *   counters   records plus the sampler's per-thread task-clock and
 *              page-fault counters on both threads (sample/thread_read.c)
 *   sampled    a software context-switch event per CPU, inherited, sampling
 *              every switch-out (one record a switch instead of two; needs
 *              perf_event_paranoid <= 1, as it counts in the kernel)
 *   counted    the same event counting only: no record at all
 *   toggled    per-thread switch records, enabled by ioctl only around each
 *              sched_yield (records only inside a wrapped wait: two system
 *              calls a wait)
 * A thread on CPU 1 drains the rings every millisecond, as the sampler does.
 * Prints one JSON line: ns per switch by the wall clock and by the two
 * threads' CPU time (which other programs on CPU 0 do not inflate). */
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench_common.h"
#include "perf_switch.h"

#define MAX_RINGS 64
#define RING_PAGES 64

static struct perf_event_mmap_page *rings[MAX_RINGS];
static int nrings;
static int group_fds[MAX_RINGS];
static int ngroup;
static atomic_int stop_drain;
static long ops;
static const char *config;

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu) {
  a->size = sizeof *a;
  return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The probe's own attributes (base/perf_switch.h), ring as in open_event. */
static void switch_attr(struct perf_event_attr *a) {
  tm_perf_switch_attr(a);
  a->watermark = 1;
  a->wakeup_watermark = RING_PAGES * 4096 / 2;
}

static int map_ring(int fd) {
  if (nrings == MAX_RINGS) return -1;
  void *m = mmap(NULL, (RING_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
                 MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return -1;
  rings[nrings++] = m;
  return 0;
}

static void die(const char *what) {
  perror(what);
  exit(2);
}

/* One event per CPU, inherited by threads created later. */
static void open_per_cpu(struct perf_event_attr *a, int enabled) {
  long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  a->inherit = 1;
  a->disabled = !enabled;
  for (int c = 0; c < ncpu && c < MAX_RINGS; c++) {
    int fd = perf_open(a, 0, c);
    if (fd < 0) die("perf_event_open");
    if (a->sample_period || a->context_switch) {
      if (map_ring(fd) < 0) die("mmap");
    }
    group_fds[ngroup++] = fd;
  }
}

/* The sampler's per-thread counters (task-clock and faults, one group). */
static void open_counters(void) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof a);
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  a.read_format = PERF_FORMAT_GROUP;
  int leader = perf_open(&a, 0, -1);
  a.config = PERF_COUNT_SW_PAGE_FAULTS;
  a.read_format = 0;
  a.size = sizeof a;
  if (leader < 0 || syscall(SYS_perf_event_open, &a, 0, -1, leader, PERF_FLAG_FD_CLOEXEC) < 0)
    die("perf_event_open (counters)");
}

/* toggled: this thread's own records, off until a wait begins. */
static int open_toggled(void) {
  struct perf_event_attr a;
  switch_attr(&a);
  a.disabled = 1;
  int fd = perf_open(&a, 0, -1);
  if (fd < 0 || map_ring(fd) < 0) die("perf_event_open (toggled)");
  return fd;
}

static void *drain(void *arg) {
  (void)arg;
  bench_pin_to_cpu(1);
  struct timespec ms = {0, 1000000};
  while (!atomic_load(&stop_drain)) {
    for (int i = 0; i < nrings; i++) {
      uint64_t head = __atomic_load_n(&rings[i]->data_head, __ATOMIC_ACQUIRE);
      __atomic_store_n(&rings[i]->data_tail, head, __ATOMIC_RELEASE);
    }
    nanosleep(&ms, NULL);
  }
  return NULL;
}

static uint64_t yield_loop(void) {
  int toggled = strcmp(config, "toggled") == 0;
  int fd = toggled ? open_toggled() : -1;
  if (strcmp(config, "counters") == 0) open_counters();
  for (long i = 0; i < ops; i++) {
    if (toggled) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    sched_yield();
    if (toggled) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  }
  return bench_thread_cpu_ns();
}

static pthread_barrier_t start;
static uint64_t partner_cpu;

static void *partner(void *arg) {
  (void)arg;
  bench_pin_to_cpu(0);
  pthread_barrier_wait(&start);
  uint64_t c0 = bench_thread_cpu_ns();
  partner_cpu = yield_loop() - c0;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr,
            "usage: tm-bench-switchcost none|records|disabled|counters|sampled|counted|"
            "toggled OPS\n");
    return 2;
  }
  config = argv[1];
  ops = bench_parse_count(argv[2], "OPS");
  struct perf_event_attr a;
  if (!strcmp(config, "records") || !strcmp(config, "counters") || !strcmp(config, "disabled")) {
    switch_attr(&a);
    open_per_cpu(&a, strcmp(config, "disabled") != 0);
  } else if (!strcmp(config, "sampled") || !strcmp(config, "counted")) {
    switch_attr(&a);
    a.context_switch = 0;
    a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
    a.sample_period = !strcmp(config, "sampled");
    /* Counted in the scheduler, with kernel registers: excluding the
     * kernel would drop every one, and including it needs
     * perf_event_paranoid <= 1 (the probe's users usually have 2). */
    a.exclude_kernel = 0;
    if (!a.sample_period) a.sample_type = 0, a.sample_id_all = 0;
    open_per_cpu(&a, 1);
  } else if (strcmp(config, "none") && strcmp(config, "toggled")) {
    fprintf(stderr, "unknown config %s\n", config);
    return 2;
  }
  pthread_t d, p;
  pthread_create(&d, NULL, drain, NULL);
  pthread_barrier_init(&start, NULL, 2);
  bench_pin_to_cpu(0);
  pthread_create(&p, NULL, partner, NULL);
  pthread_barrier_wait(&start);
  uint64_t t0 = bench_now_ns(), c0 = bench_thread_cpu_ns();
  uint64_t mine = yield_loop() - c0;
  pthread_join(p, NULL);
  uint64_t wall = bench_now_ns() - t0;
  atomic_store(&stop_drain, 1);
  pthread_join(d, NULL);
  double sw = 2.0 * (double)ops;
  printf(
      "{\"bench\":\"switchcost\",\"config\":\"%s\",\"ops\":%ld,\"ns_per_switch\":%.1f,"
      "\"cpu_ns_per_switch\":%.1f}\n",
      config, ops, (double)wall / sw, (double)(mine + partner_cpu) / sw);
  return 0;
}
