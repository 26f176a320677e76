/* threadmon-attach: watch running processes from outside and write what
 * the probe would (docs/attach.md). One session per target: with several
 * PIDs, one child process each, their captures named FILE.PID.
 *
 *   threadmon-attach -p PID[,PID...] (-o FILE | --connect HOST:PORT|unix:PATH [--token T])
 *                    [--duration S] [--interval-ms N]
 *
 * The token is better given as THREADMON_TOKEN: a command line is visible
 * to every local user.
 *                    [--wait-exec FD] [--exit-status-fd FD]
 *
 * The last two are the launcher's, for a program it started itself and
 * holds before its exec (scripts/threadmon, docs/attach.md): FD reaches
 * EOF at the exec, and brings the program's wait status once reaped.
 *
 * Exit status: 0, 1 when a target cannot be seen or the session failed,
 * 2 for bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "xsession.h"

#define MAX_PIDS 64

static const char usage_text[] =
    "usage: threadmon-attach -p PID[,PID...] (-o FILE | --connect HOST:PORT|unix:PATH "
    "[--token T]) "
    "[--duration S] [--interval-ms N] [--wait-exec FD] [--exit-status-fd FD]";

static int usage(const char *why, const char *arg) {
  fprintf(stderr, "threadmon-attach: %s%s%s (%s)\n", why, arg ? ": " : "", arg ? arg : "",
          usage_text);
  return 2;
}

/* A descriptor this process was given open; -1 when not. */
static int parse_fd(const char *v) {
  char *end;
  long fd = strtol(v, &end, 10);
  if (*end || end == v || fd < 3 || fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0) return -1;
  fcntl((int)fd, F_SETFD, FD_CLOEXEC);
  return (int)fd;
}

static int parse_pids(char *list, pid_t *pids) {
  int n = 0;
  for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    char *end;
    errno = 0;
    long v = strtol(tok, &end, 10);
    if (errno || *end || end == tok || v <= 0 || v > INT_MAX || n == MAX_PIDS) return -1;
    pids[n++] = (pid_t)v;
  }
  return n;
}

/* Runs one session a target in a child; SIGINT/SIGTERM/SIGHUP to this
 * process end them all. The worst status wins. */
static int run_children(const pid_t *pids, int n, tm_xopts *o) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGHUP);
  sigaddset(&stop, SIGCHLD);
  sigprocmask(SIG_BLOCK, &stop, NULL);
  pid_t kids[MAX_PIDS];
  const char *root = o->output;
  for (int i = 0; i < n; i++) {
    char path[TM_PATH_BYTES], tag[16];
    snprintf(tag, sizeof tag, "%d", (int)pids[i]);
    if (root && tm_config_tag_path(root, tag, path, sizeof path) < 0) {
      fprintf(stderr, "threadmon-attach: capture path too long: %s\n", root);
      return 1;
    }
    kids[i] = fork();
    if (kids[i] == 0) {
      o->output = root ? path : NULL;
      _exit(tm_xsession_run(pids[i], o));
    }
    if (kids[i] < 0) {
      perror("threadmon-attach: fork");
      kids[i] = 0;
    }
  }
  int worst = 0, left = n;
  while (left > 0) {
    int sig;
    if (sigwait(&stop, &sig) != 0) break;
    if (sig != SIGCHLD) {
      for (int i = 0; i < n; i++)
        if (kids[i] > 0) kill(kids[i], SIGTERM);
      continue;
    }
    int st;
    pid_t k;
    while ((k = waitpid(-1, &st, WNOHANG)) > 0) {
      left--;
      int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
      if (code > worst) worst = code;
      for (int i = 0; i < n; i++)
        if (kids[i] == k) kids[i] = 0;
    }
  }
  return worst;
}

int main(int argc, char **argv) {
  pid_t pids[MAX_PIDS];
  int npids = 0;
  tm_xopts o = {.interval_ns = 10000000u, .exec_fd = -1, .status_fd = -1};
  char *connect = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      printf("%s\n", usage_text);
      return 0;
    }
    if (i + 1 >= argc) return usage("missing value after", a);
    char *v = argv[++i];
    if (!strcmp(a, "-p") || !strcmp(a, "--pid")) {
      if ((npids = parse_pids(v, pids)) <= 0) return usage("bad PID list", v);
    } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      o.output = v;
    } else if (!strcmp(a, "--connect")) {
      connect = v;
    } else if (!strcmp(a, "--token")) {
      fprintf(stderr, "threadmon-attach: warning: --token on a command line is visible to every "
              "local user (ps); use THREADMON_TOKEN\n");
      o.token = v;
    } else if (!strcmp(a, "--duration")) {
      char *end;
      double d = strtod(v, &end);
      if (*end || end == v || !(d > 0) || d > 1e6) return usage("bad duration (seconds)", v);
      o.duration_ns = (uint64_t)(d * 1e9);
    } else if (!strcmp(a, "--interval-ms")) {
      char *end;
      long ms = strtol(v, &end, 10);
      if (*end || end == v || ms < 1 || ms > 60000) return usage("bad interval (1-60000 ms)", v);
      o.interval_ns = (uint64_t)ms * 1000000u;
    } else if (!strcmp(a, "--wait-exec")) {
      if ((o.exec_fd = parse_fd(v)) < 0) return usage("not an open descriptor", v);
    } else if (!strcmp(a, "--exit-status-fd")) {
      if ((o.status_fd = parse_fd(v)) < 0) return usage("not an open descriptor", v);
    } else {
      return usage("unknown argument", a);
    }
  }
  if (!npids) return usage("no target", NULL);
  for (int i = 0; i < npids; i++)
    if (pids[i] == getpid()) return usage("cannot watch itself", NULL);
  if (!o.output && !connect) return usage("nowhere to write", NULL);
  if ((o.exec_fd >= 0 || o.status_fd >= 0) && npids > 1)
    return usage("--wait-exec and --exit-status-fd are for one target", NULL);
  char host[256];
  if (connect && !strncmp(connect, TM_UNIX_PREFIX, strlen(TM_UNIX_PREFIX))) {
    if (connect[strlen(TM_UNIX_PREFIX)] != '/' || strlen(connect) >= sizeof host ||
        strlen(connect) - strlen(TM_UNIX_PREFIX) >= TM_UNIX_PATH_BYTES)
      return usage("bad unix:/absolute/path", connect);
    o.host = connect; /* whole, as the probe's config keeps it */
    o.port = "";
  } else if (connect) {
    const char *colon = strrchr(connect, ':');
    size_t len = colon ? (size_t)(colon - connect) : 0;
    if (!colon || !len || len >= sizeof host || !colon[1]) return usage("bad HOST:PORT", connect);
    memcpy(host, connect, len);
    host[len] = 0;
    o.host = host;
    o.port = colon + 1;
  }
  if (npids == 1) return tm_xsession_run(pids[0], &o);
  return run_children(pids, npids, &o);
}
