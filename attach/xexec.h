/* The watched process's image (threadmon-attach): its executable and
 * arguments as the Hello gives them, and the exec that replaces them while
 * it is watched. A probe ends its session at an exec and the new image
 * opens its own; from outside the session goes on, and says with an Exec
 * frame what the process became. */
#ifndef THREADMON_ATTACH_XEXEC_H
#define THREADMON_ATTACH_XEXEC_H

#include <stdbool.h>
#include <sys/types.h>

#include "session.h"

typedef struct tm_xexec {
  pid_t pid;
  /* start_stack from /proc/PID/stat: placed anew by every exec (ASLR),
   * so an exec of the same executable is seen too. 0 when not shown. */
  unsigned long long start_stack;
  int empty_argv_waits; /* ticks an exec waited for its arguments */
} tm_xexec;

/* Reads the image's executable and arguments into s (exe, cmdline) and
 * remembers it. */
void tm_xexec_read(tm_xexec *x, tm_session *s, pid_t pid);

/* Whether the process exec'd since the last read: then s describes the
 * new image and its Exec frame was sent. */
bool tm_xexec_check(tm_xexec *x, tm_session *s);

#endif
