/* /proc/TID/syscall parsing and the classification of what a thread asleep
 * in a syscall waits for, against the syscall numbers of this machine. */
#include <sys/syscall.h>

#include "procfs.h"
#include "tm_check.h"

static uint32_t nr_of(const char *line) { return tm_parse_syscall_nr(line); }

int main(void) {
  /* The file's shapes: a syscall with its arguments, outside any, running. */
  char line[128];
  snprintf(line, sizeof line, "%d 0xffffffff 0x7ffc 0x0 0x0 0x0 0x0 0x7ffc 0x7f00\n", SYS_wait4);
  CHECK_EQ(nr_of(line), (uint32_t)SYS_wait4 + 1);
  CHECK_EQ(nr_of("-1 0x7ffc 0x7f00\n"), 0);
  CHECK_EQ(nr_of("running\n"), 0);
  CHECK_EQ(nr_of("0 0x3 0x7ffc 0x1000 0x0 0x0 0x0 0x7ffc 0x7f00\n"), 1); /* read is 0 on x86-64 */

  CHECK_EQ(tm_syscall_asleep_kind(tm_parse_syscall_nr(line)), TM_ASLEEP_CHILD);
  CHECK_EQ(tm_syscall_asleep_kind(SYS_waitid + 1), TM_ASLEEP_CHILD);
  CHECK_EQ(tm_syscall_asleep_kind(SYS_epoll_pwait + 1), TM_ASLEEP_IO_EVENTS);
  CHECK_EQ(tm_syscall_asleep_kind(SYS_ppoll + 1), TM_ASLEEP_IO_EVENTS);
#ifdef SYS_io_uring_enter
  CHECK_EQ(tm_syscall_asleep_kind(SYS_io_uring_enter + 1), TM_ASLEEP_IO_EVENTS);
#endif
#ifdef SYS_epoll_pwait2
  CHECK_EQ(tm_syscall_asleep_kind(SYS_epoll_pwait2 + 1), TM_ASLEEP_IO_EVENTS);
#endif
  CHECK_EQ(tm_syscall_asleep_kind(SYS_read + 1), TM_ASLEEP_READ);
  CHECK_EQ(tm_syscall_asleep_kind(SYS_accept4 + 1), TM_ASLEEP_READ);
  CHECK_EQ(tm_syscall_asleep_kind(SYS_rt_sigtimedwait + 1), TM_ASLEEP_SIGNAL);
  CHECK_EQ(tm_syscall_asleep_kind(SYS_clock_nanosleep + 1), TM_ASLEEP_SLEEP);
  /* Not asleep, and syscalls that say nothing of what they wait for. */
  CHECK_EQ(tm_syscall_asleep_kind(0), TM_ASLEEP_OTHER);
  CHECK_EQ(tm_syscall_asleep_kind(SYS_futex + 1), TM_ASLEEP_OTHER);
  CHECK_EQ(tm_syscall_asleep_kind(SYS_write + 1), TM_ASLEEP_OTHER);
  return 0;
}
