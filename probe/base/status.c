#include "status.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

/* One write with O_APPEND: lines of several processes (forked children,
 * exec'd images) never interleave. A file the launcher removed (it ended
 * before a daemon we follow) is not created again, and a link planted at
 * its name is not followed. */
#define LINE_BYTES (TM_PATH_BYTES + 512)

/* line holds len characters (snprintf's count, maybe cut) in LINE_BYTES. */
static void append_line(const char *status_path, char *line, int len) {
  if (len <= 0) return;
  if (len > LINE_BYTES - 2) len = LINE_BYTES - 2;
  for (int i = 0; i < len; i++)
    if (line[i] == '\n') line[i] = '?'; /* one event, one line */
  line[len++] = '\n';
  int fd = open(status_path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t w = write(fd, line, (size_t)len);
  (void)w; /* nobody to tell */
  close(fd);
}

void tm_status_capture(const char *status_path, const char *capture_path) {
  if (!status_path[0]) return;
  char line[LINE_BYTES];
  int len = snprintf(line, sizeof line, "capture %d %s", (int)getpid(), capture_path);
  append_line(status_path, line, len);
}

void tm_status_net(const char *status_path, const char *kind, const char *host,
                   const char *port, const char *text) {
  if (!status_path[0]) return;
  char line[LINE_BYTES];
  int len;
  if (!port[0]) { /* a Unix socket: "unix:/path" */
    len = snprintf(line, sizeof line, "%s %d %s %s", kind, (int)getpid(), host, text);
  } else {
    const char *v6 = strchr(host, ':') ? "[" : "";
    len = snprintf(line, sizeof line, "%s %d %s%s%s:%s %s", kind, (int)getpid(), v6, host,
                   v6[0] ? "]" : "", port, text);
  }
  append_line(status_path, line, len);
}

void tm_status_ended(const char *status_path, const char *capture_path, uint64_t from_ms,
                     uint64_t lost_ms, uint64_t bytes, int first_errno, int reopen_errno) {
  if (!status_path[0]) return;
  char line[LINE_BYTES];
  int len = lost_ms || bytes || first_errno
                ? snprintf(line, sizeof line, "lost %d %llu %llu %llu %d %d %s", (int)getpid(),
                           (unsigned long long)from_ms, (unsigned long long)lost_ms,
                           (unsigned long long)bytes, first_errno, reopen_errno, capture_path)
                : snprintf(line, sizeof line, "ended %d %s", (int)getpid(), capture_path);
  append_line(status_path, line, len);
}
