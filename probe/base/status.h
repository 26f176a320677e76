/* One-line reports for the launcher, appended to the file THREADMON_STATUS
 * names (the launcher creates it and reads it): which captures this run
 * wrote, and why the display did not get the data. The program's stderr
 * stays the program's.
 *
 * Lines (fields separated by one space, the last one runs to the end):
 *   capture PID PATH
 *   refused PID HOST:PORT TEXT       the display refused the probe
 *   unreachable PID HOST:PORT TEXT   it was never reached, or was lost
 *   untrusted PID unix:PATH TEXT     the socket's listener is another user
 *   ended PID PATH                   the session finished this capture whole
 *   lost PID FROM_MS LOST_MS BYTES ERRNO REOPEN_ERRNO PATH
 *                                    it finished it with data lost: from FROM_MS
 *     (since the session's start) LOST_MS in all, BYTES of frames; ERRNO the
 *     first loss's cause (EBADF: the program took the descriptor), REOPEN_ERRNO
 *     why the file could not be reopened last (0: it was)
 * A capture of the launcher's list with neither line was not finished (its
 * process was killed, or could not open even the status file).
 * (a Unix socket's address is "unix:PATH" in place of HOST:PORT) */
#ifndef THREADMON_STATUS_H
#define THREADMON_STATUS_H

#include <stdint.h>

/* No-ops when status_path is "". Never blocks, never creates the file. */
void tm_status_capture(const char *status_path, const char *capture_path);
void tm_status_net(const char *status_path, const char *kind, const char *host,
                   const char *port, const char *text);
/* The capture's end: "ended" when nothing was lost (lost_ms and bytes 0 and
 * no errno), else "lost". */
void tm_status_ended(const char *status_path, const char *capture_path, uint64_t from_ms,
                     uint64_t lost_ms, uint64_t bytes, int first_errno, int reopen_errno);

#endif
