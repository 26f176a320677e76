/* What the exec wrappers (session_exec.c) need from session.c. */
#ifndef THREADMON_SESSION_H
#define THREADMON_SESSION_H

/* Final tick, Goodbye(END_EXEC) and flush, before the image is replaced. */
void tm_session_end_for_exec(void);
/* The exec failed and the image stays: open a new session. */
void tm_session_exec_failed(void);

#endif
