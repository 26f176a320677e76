/* Reading one thread as its plan says (read_plan.h): schedstat, and when
 * that moved stat, status, the syscall file (hidden locks) and perf
 * counters; the LwpSample of the Tick when anything moved.
 * Sampler-thread only. */
#ifndef THREADMON_THREAD_READ_H
#define THREADMON_THREAD_READ_H

#include "thread_state.h"

struct tm_session;

/* how: READ_NONE, READ_QUEUE or READ_ALL. */
void tm_thread_read(struct tm_session *s, tm_thread *t, tm_sampler_thread *st, int how);

/* Read from outside, where no wrapper sees a rename: t is called name
 * from now on (sent with its attributes when it changed). */
void tm_thread_rename_seen(tm_thread *t, const char *name);

#endif
