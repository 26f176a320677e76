#include "perf_counters.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf.h"
#include "procfs.h"
#include "rawsyscall.h"

static const struct {
  uint32_t type;
  uint64_t config;
} events[TM_PC_COUNT] = {
    [TM_PC_TASK_CLOCK] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    [TM_PC_FAULTS] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    [TM_PC_CYCLES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    [TM_PC_INSTRUCTIONS] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
};

static void attr_of(int which, struct perf_event_attr *a) {
  memset(a, 0, sizeof *a);
  a->size = sizeof *a;
  a->type = events[which].type;
  a->config = events[which].config;
  a->exclude_kernel = 1;
  a->exclude_hv = 1;
}

static int open_one(int which, uint32_t tid, bool counted) {
  struct perf_event_attr a;
  attr_of(which, &a);
  return tm_perf_open(&a, (pid_t)tid, -1, 0, counted);
}

/* A member of the group led by leader (tm_perf_open has no group_fd). */
static int open_member(int which, uint32_t tid, int leader) {
  struct perf_event_attr a;
  attr_of(which, &a);
  int fd = (int)tm_syscall(SYS_perf_event_open, &a, (pid_t)tid, -1, leader, PERF_FLAG_FD_CLOEXEC);
  return fd < 0 ? -1 : tm_fd_move_high(fd, true);
}

/* The leader reads as {nr, value[nr]} in the order the members joined. */
static int open_leader(int which, uint32_t tid) {
  struct perf_event_attr a;
  attr_of(which, &a);
  a.read_format = PERF_FORMAT_GROUP;
  return tm_perf_open(&a, (pid_t)tid, -1, 0, true);
}

void tm_perf_counters_probe(bool *software, bool *hardware, char *why, size_t n) {
  uint32_t self = (uint32_t)gettid();
  int fd = open_one(TM_PC_TASK_CLOCK, self, false);
  *software = fd >= 0;
  if (fd >= 0) close(fd);
  else snprintf(why, n, "software perf counters unavailable: %s", strerror(errno));
  fd = open_one(TM_PC_CYCLES, self, false);
  *hardware = fd >= 0;
  if (fd >= 0) {
    close(fd);
  } else if (*software) {
    snprintf(why, n, "hardware perf counters unavailable: %s",
             errno == ENOENT || errno == EOPNOTSUPP ? "no PMU on this machine" : strerror(errno));
  }
}

void tm_perf_counters_open(tm_perf_counters *c, uint32_t tid, bool software, bool hardware) {
  for (int i = 0; i < TM_PC_COUNT; i += 2) {
    bool hw = events[i].type == PERF_TYPE_HARDWARE;
    c->fd[i] = c->fd[i + 1] = -1;
    c->grouped[i] = c->grouped[i + 1] = false;
    if (!(hw ? hardware : software)) continue;
    int leader = open_leader(i, tid);
    int member = leader >= 0 ? open_member(i + 1, tid, leader) : -1;
    if (leader >= 0 && member >= 0) {
      c->grouped[i] = true;
    } else if (leader >= 0) {
      /* Alone after all: reopen without the group format. */
      tm_fd_close(leader, true);
      leader = open_one(i, tid, true);
    }
    if (leader < 0) member = open_one(i + 1, tid, true);
    c->fd[i] = leader;
    c->fd[i + 1] = member;
  }
}

void tm_perf_counters_read(tm_perf_counters *c, tm_perf_values *out) {
  for (int i = 0; i < TM_PC_COUNT; i++) out->v[i] = 0;
  for (int i = 0; i < TM_PC_COUNT; i++) {
    if (c->fd[i] < 0) continue;
    if (c->grouped[i]) {
      uint64_t g[3]; /* nr, leader, member */
      if (read(c->fd[i], g, sizeof g) == (ssize_t)sizeof g && g[0] == 2) {
        out->v[i] = g[1];
        out->v[i + 1] = g[2];
      }
      i++; /* the member came with it */
      continue;
    }
    uint64_t v;
    if (read(c->fd[i], &v, sizeof v) == (ssize_t)sizeof v) out->v[i] = v;
  }
}

void tm_perf_counters_close(tm_perf_counters *c) {
  for (int i = 0; i < TM_PC_COUNT; i++) {
    tm_fd_close(c->fd[i], true);
    c->fd[i] = -1;
    c->grouped[i] = false;
  }
}
