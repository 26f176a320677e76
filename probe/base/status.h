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
 * (a Unix socket's address is "unix:PATH" in place of HOST:PORT) */
#ifndef THREADMON_STATUS_H
#define THREADMON_STATUS_H

/* No-ops when status_path is "". Never blocks, never creates the file. */
void tm_status_capture(const char *status_path, const char *capture_path);
void tm_status_net(const char *status_path, const char *kind, const char *host,
                   const char *port, const char *text);

#endif
