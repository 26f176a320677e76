#include "perf_switch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"

/* Data pages per CPU ring, largest first. A record is 32 bytes: 64 pages
 * hold 8,192 switches a CPU, ~100 ms of a program switching 80,000 times a
 * second (whose sampler is late under that load, too). An unprivileged
 * user's locked-memory budget (perf_event_mlock_kb per CPU, then
 * RLIMIT_MEMLOCK) may refuse that on many CPUs: then smaller rings. */
static const unsigned ring_pages[] = {64, 16, 4};

/* sample_id_all trailer for sample_type TID|TIME|CPU. */
struct sample_id {
  uint32_t pid, tid;
  uint64_t time;
  uint32_t cpu, res;
};

static void close_rings(tm_perf_switch *p) {
  for (int c = 0; c < p->ncpu; c++) {
    if (p->ring[c]) munmap(p->ring[c], p->page + p->data_bytes);
    if (p->fd[c] >= 0) close(p->fd[c]);
    p->ring[c] = NULL;
    p->fd[c] = -1;
  }
}

static int open_event(const tm_perf_switch *p, pid_t pid, int cpu) {
  struct perf_event_attr a;
  tm_perf_switch_attr(&a);
  a.inherit = 1;
  a.inherit_thread = 1;
  a.watermark = 1;
  a.wakeup_watermark = (uint32_t)(p->data_bytes / 2); /* nobody polls; avoid wakeups */
  return tm_perf_open(&a, pid, cpu, 0, 0);
}

/* 1 = open, 0 = a ring could not be mapped (try smaller), -1 = no events. */
static int open_rings(tm_perf_switch *p, pid_t pid, unsigned pages, char *why, size_t n) {
  p->data_bytes = p->page * pages;
  for (int c = 0; c < p->ncpu; c++) {
    int fd = open_event(p, pid, c);
    if (fd < 0) {
      if (errno == ENODEV || errno == EINVAL) continue; /* CPU offline */
      snprintf(why, n, "context switches unavailable: perf_event_open on CPU %d: %s", c,
               strerror(errno));
      close_rings(p);
      return -1;
    }
    p->fd[c] = fd;
    void *m = mmap(NULL, p->page + p->data_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
      snprintf(why, n, "context switches unavailable: mmap of the perf ring: %s",
               strerror(errno));
      close_rings(p);
      return 0;
    }
    p->ring[c] = m;
  }
  return 1;
}

static bool alloc_cpus(tm_perf_switch *p, char *why, size_t n) {
  memset(p, 0, sizeof *p);
  long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  if (ncpu < 1) ncpu = 1;
  p->page = (size_t)sysconf(_SC_PAGESIZE);
  p->fd = malloc((size_t)ncpu * sizeof *p->fd);
  p->ring = calloc((size_t)ncpu, sizeof *p->ring);
  if (!p->fd || !p->ring) {
    snprintf(why, n, "context switches unavailable: out of memory");
    tm_perf_switch_close(p);
    return false;
  }
  p->ncpu = (int)ncpu;
  for (int c = 0; c < p->ncpu; c++) p->fd[c] = -1;
  return true;
}

bool tm_perf_switch_open(tm_perf_switch *p, pid_t pid, char *why, size_t n) {
  if (!alloc_cpus(p, why, n)) return false;
  for (size_t i = 0; i < sizeof ring_pages / sizeof ring_pages[0]; i++) {
    int r = open_rings(p, pid, ring_pages[i], why, n);
    if (r == 1) return true;
    if (r < 0) break;
  }
  tm_perf_switch_close(p);
  return false;
}

int tm_perf_switch_add_thread(tm_perf_switch *p, uint32_t tid) {
  int opened = 0;
  for (int c = 0; c < p->ncpu; c++) {
    if (p->fd[c] < 0) continue; /* offline */
    if (p->ntfd == p->tfd_cap) {
      size_t cap = p->tfd_cap ? p->tfd_cap * 2 : 64;
      int *grown = realloc(p->tfd, cap * sizeof *grown);
      if (!grown) return -1;
      p->tfd = grown;
      p->tfd_cap = cap;
    }
    int fd = open_event(p, (pid_t)tid, c);
    if (fd < 0) return errno == ESRCH && !opened ? 0 : -1;
    if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, p->fd[c]) < 0) {
      close(fd);
      return -1;
    }
    p->tfd[p->ntfd++] = fd;
    opened++;
  }
  return 1;
}

bool tm_perf_switch_open_threads(tm_perf_switch *p, const uint32_t *tids, size_t n, char *why,
                                 size_t wn) {
  if (!alloc_cpus(p, why, wn)) return false;
  /* The rings belong to the first thread that still exists. */
  size_t first = 0;
  int r = -1;
  for (; first < n; first++) {
    for (size_t i = 0; i < sizeof ring_pages / sizeof ring_pages[0]; i++) {
      r = open_rings(p, (pid_t)tids[first], ring_pages[i], why, wn);
      if (r != 0) break;
    }
    if (r == 1 || errno != ESRCH) break;
  }
  if (r != 1) {
    tm_perf_switch_close(p);
    return false;
  }
  for (size_t i = first + 1; i < n; i++) {
    if (tm_perf_switch_add_thread(p, tids[i]) < 0) {
      snprintf(why, wn, "context switches unavailable: perf_event_open on thread %u: %s",
               tids[i], strerror(errno));
      tm_perf_switch_close(p);
      return false;
    }
  }
  return true;
}

/* Copies len bytes at ring position pos (the data area wraps). */
static void ring_copy(void *dst, const uint8_t *data, uint64_t mask, uint64_t pos, size_t len) {
  size_t off = (size_t)(pos & mask), room = (size_t)(mask + 1 - off);
  if (len <= room) {
    memcpy(dst, data + off, len);
  } else {
    memcpy(dst, data + off, room);
    memcpy((uint8_t *)dst + room, data, len - room);
  }
}

static void drain_cpu(tm_perf_switch *p, uint8_t *ring, tm_switch_fn fn, void *arg) {
  struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *)ring;
  const uint8_t *data = ring + (meta->data_offset ? meta->data_offset : p->page);
  /* The kernel makes the data area a power of two: wrap with a mask, not a
   * division per byte (thousands of records a tick on a busy program). */
  uint64_t mask = (meta->data_size ? meta->data_size : p->data_bytes) - 1;
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  while (tail + sizeof(struct perf_event_header) <= head) {
    uint8_t rec[64];
    struct perf_event_header h;
    ring_copy(&h, data, mask, tail, sizeof h);
    if (h.size < sizeof h || tail + h.size > head) break;
    if (h.type == PERF_RECORD_SWITCH && h.size >= sizeof h + sizeof(struct sample_id)) {
      struct sample_id id;
      ring_copy(&id, data, mask, tail + sizeof h, sizeof id);
      int kind = !(h.misc & PERF_RECORD_MISC_SWITCH_OUT) ? TM_SWITCH_IN
                 : (h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) ? TM_SWITCH_OUT_PREEMPT
                                                                 : TM_SWITCH_OUT;
      fn(arg, id.tid, id.time, id.cpu, kind);
    } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
      ring_copy(rec, data, mask, tail + sizeof h, 16); /* u64 id, u64 lost */
      uint64_t lost;
      memcpy(&lost, rec + 8, sizeof lost);
      p->lost += lost;
    }
    tail += h.size;
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

void tm_perf_switch_drain(tm_perf_switch *p, tm_switch_fn fn, void *arg) {
  for (int c = 0; c < p->ncpu; c++)
    if (p->ring && p->ring[c]) drain_cpu(p, p->ring[c], fn, arg);
}

void tm_perf_switch_close(tm_perf_switch *p) {
  for (size_t i = 0; i < p->ntfd; i++) close(p->tfd[i]);
  free(p->tfd);
  for (int c = 0; c < p->ncpu; c++) {
    if (p->ring && p->ring[c]) munmap(p->ring[c], p->page + p->data_bytes);
    if (p->fd && p->fd[c] >= 0) close(p->fd[c]);
  }
  free(p->fd);
  free(p->ring);
  memset(p, 0, sizeof *p);
}

void tm_perf_switch_close_inherited(const tm_perf_switch *p) {
  for (size_t i = 0; i < p->ntfd; i++) close(p->tfd[i]);
  for (int c = 0; c < p->ncpu; c++) {
    if (p->ring && p->ring[c]) munmap(p->ring[c], p->page + p->data_bytes);
    if (p->fd && p->fd[c] >= 0) close(p->fd[c]);
  }
}

void tm_perf_switch_enable(tm_perf_switch *p, bool on) {
  for (int c = 0; c < p->ncpu; c++)
    if (p->fd && p->fd[c] >= 0)
      ioctl(p->fd[c], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
  for (size_t i = 0; i < p->ntfd; i++)
    ioctl(p->tfd[i], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

void tm_perf_switch_drop(tm_perf_switch *p) {
  int ncpu = p->ncpu;
  tm_perf_switch_close(p);
  p->ncpu = ncpu;
}
