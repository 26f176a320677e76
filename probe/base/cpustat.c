#include "cpustat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

/* Nanoseconds per USER_HZ tick, the unit of /proc/stat; looked up once
 * rather than on every tick's parse. */
static uint64_t tick_ns(void) {
  static uint64_t ns;
  if (!ns) {
    long hz = sysconf(_SC_CLK_TCK);
    ns = hz > 0 ? 1000000000u / (uint64_t)hz : 10000000u;
  }
  return ns;
}

unsigned tm_cpustat_parse(const char *text, tm_cpu_times *out, unsigned cap) {
  uint64_t tick = tick_ns();
  unsigned n = 0;
  for (const char *line = text; line && *line && n < cap;) {
    /* "cpu " is the total; per-CPU lines are "cpuN". */
    if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') {
      char *p;
      unsigned long id = strtoul(line + 3, &p, 10);
      unsigned long long v[8] = {0};
      for (int i = 0; i < 8; i++) v[i] = strtoull(p, &p, 10);
      tm_cpu_times *c = &out[n++];
      c->cpu = (uint32_t)id;
      c->user_ns = v[0] * tick;
      c->nice_ns = v[1] * tick;
      c->system_ns = v[2] * tick;
      c->idle_ns = v[3] * tick;
      c->iowait_ns = v[4] * tick;
      c->irq_ns = v[5] * tick;
      c->softirq_ns = v[6] * tick;
      c->steal_ns = v[7] * tick;
    } else if (n > 0) {
      break; /* per-CPU lines are contiguous */
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
  return n;
}

static int open_stat(void) {
  return tm_fd_move_high(open("/proc/stat", O_RDONLY | O_CLOEXEC), false);
}

bool tm_cpustat_open(tm_cpustat *c) {
  memset(c, 0, sizeof *c);
  c->fd = open_stat();
  if (c->fd < 0) return false;
  long n = sysconf(_SC_NPROCESSORS_CONF);
  c->cap = n > 0 ? (unsigned)n : 1;
  c->cpus = calloc(c->cap, sizeof *c->cpus);
  c->buf_size = 4096 + c->cap * 256;
  c->buf = malloc(c->buf_size);
  if (!c->cpus || !c->buf) {
    tm_cpustat_close(c);
    return false;
  }
  return true;
}

bool tm_cpustat_read(tm_cpustat *c) {
  if (!c->buf) return false;
  ssize_t r = pread(c->fd, c->buf, c->buf_size - 1, 0);
  if (r < 0 && errno == EBADF) { /* the program closed it */
    c->fd = open_stat();
    r = c->fd < 0 ? -1 : pread(c->fd, c->buf, c->buf_size - 1, 0);
  }
  if (r <= 0) return false;
  c->buf[r] = 0;
  c->count = tm_cpustat_parse(c->buf, c->cpus, c->cap);
  return c->count > 0;
}

void tm_cpustat_close(tm_cpustat *c) {
  if (c->fd >= 0) close(c->fd);
  free(c->buf);
  free(c->cpus);
  memset(c, 0, sizeof *c);
  c->fd = -1;
}
