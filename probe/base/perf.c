#include "perf.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "procfs.h"
#include "rawsyscall.h"

int tm_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int flags, int counted) {
  attr->size = sizeof *attr;
  int fd = (int)tm_syscall(SYS_perf_event_open, attr, pid, cpu, -1, flags | PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return -1;
  return tm_fd_move_high(fd, counted != 0);
}
