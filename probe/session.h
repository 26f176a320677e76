/* What the exec wrappers (session_exec.c) need from session.c. */
#ifndef THREADMON_SESSION_H
#define THREADMON_SESSION_H

#include <sys/types.h>

/* Final tick, Goodbye(END_EXEC) and flush, before the image is replaced. */
void tm_session_end_for_exec(void);
/* From _exit: the probe's thread ends the session (final tick, Goodbye,
 * flush) while the caller waits, bounded; async-signal-safe for the caller. */
void tm_session_end_for__exit(int status);
/* fork(2) as glibc does it for this program: in a program that never made
 * a thread, without the locks glibc takes only in threaded processes. */
pid_t tm_session_fork(pid_t (*real_fork)(void));
/* The exec failed and the image stays: open a new session. */
void tm_session_exec_failed(void);

#endif
