/* One target watched from outside (threadmon-attach): the probe's session
 * and sampler stages pointed at /proc/PID, perf switch records opened on
 * its threads, its futex waits as sync objects (xwaits.h), from the Hello
 * (the target's pid, executable and arguments) to the Goodbye. Nothing is
 * written into the target, nothing stops or signals it. */
#ifndef THREADMON_ATTACH_XSESSION_H
#define THREADMON_ATTACH_XSESSION_H

#include <stdint.h>
#include <sys/types.h>

typedef struct tm_xopts {
  const char *output;  /* capture file, NULL = none */
  const char *host, *port, *token; /* display, host NULL = none */
  uint64_t duration_ns; /* 0 = until a signal or the target's end */
  uint64_t interval_ns;
  /* The launcher's own child, held before its exec (-1: a process found
   * running). exec_fd reaches EOF once it has exec'd: the events are open
   * before, the Hello describes the image after. status_fd brings its
   * wait status, written by the launcher once it has reaped it. */
  int exec_fd, status_fd;
} tm_xopts;

/* Watches pid until the duration is over, SIGINT/SIGTERM/SIGHUP arrive or
 * the target ends; the capture is finalized. Returns the exit status: 0,
 * or 1 after one line on stderr (the target cannot be seen, the capture
 * cannot be written). */
int tm_xsession_run(pid_t pid, const tm_xopts *o);

#endif
