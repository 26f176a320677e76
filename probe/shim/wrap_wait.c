/* The wait family: a child of a process tree killed by a signal writes no
 * line of its own (base/lives.h), so its parent says how it ended when it
 * reaps it: the status and the CPU the kernel kept for it. Return values,
 * errno, the status and the usage are the real call's. wait, waitpid and
 * wait3 are wait4 with fewer arguments in glibc (one system call, the same
 * cancellation point): each forwards to the real wait4, with a usage of its
 * own when the caller passed none, so that the line has the child's CPU. */
#include <errno.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "real.h"
#include "session.h"
#include "wrap.h"

static pid_t reap(pid_t pid, int *status, int options, struct rusage *usage) {
  tm_real_ensure();
  int own_status;
  struct rusage own_usage;
  int *st = status ? status : &own_status;
  struct rusage *ru = usage ? usage : &own_usage;
  pid_t r = tm_real.wait4(pid, st, options, ru);
  if (r > 0 && WIFSIGNALED(*st)) {
    int err = errno;
    tm_session_child_killed(r, WTERMSIG(*st), ru);
    errno = err;
  }
  return r;
}

TM_EXPORT pid_t wait(int *status) {
  return reap(-1, status, 0, NULL);
}

TM_EXPORT pid_t waitpid(pid_t pid, int *status, int options) {
  return reap(pid, status, options, NULL);
}

TM_EXPORT pid_t wait3(int *status, int options, struct rusage *usage) {
  return reap(-1, status, options, usage);
}

TM_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *usage) {
  return reap(pid, status, options, usage);
}

TM_EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options) {
  tm_real_ensure();
  siginfo_t own;
  siginfo_t *in = info ? info : &own;
  if (!info) in->si_pid = 0; /* WNOHANG with nothing to reap leaves it */
  int r = tm_real.waitid(type, id, in, options);
  if (r == 0 && in->si_pid > 0 && (in->si_code == CLD_KILLED || in->si_code == CLD_DUMPED)) {
    int err = errno;
    tm_session_child_killed(in->si_pid, in->si_status, NULL);
    errno = err;
  }
  return r;
}
