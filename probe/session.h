/* What the exec wrappers (session_exec.c) need from session.c. */
#ifndef THREADMON_SESSION_H
#define THREADMON_SESSION_H

/* Final tick, Goodbye(END_EXEC) and flush, before the image is replaced. */
void tm_session_end_for_exec(void);
/* From _exit: the probe's thread ends the session (final tick, Goodbye,
 * flush) while the caller waits, bounded; async-signal-safe for the caller. */
void tm_session_end_for__exit(int status);
/* The exec failed and the image stays: open a new session. */
void tm_session_exec_failed(void);

#endif
