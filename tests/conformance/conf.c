#include "conf.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  fflush(stdout);
}

const char *err_name(int e) {
  static __thread char buf[16];
  if (e == 0) return "0";
  const char *name = strerrorname_np(e);
  if (name) return name;
  snprintf(buf, sizeof buf, "%d", e);
  return buf;
}

void conf_show(const char *call, long rc, int err) {
  char errno_text[32];
  snprintf(errno_text, sizeof errno_text, "%s",
           err == CONF_ERRNO_MARK ? "kept" : err_name(err));
  if (rc > 0 && rc < 134)
    say("%s -> %ld %s, errno %s", call, rc, err_name((int)rc), errno_text);
  else
    say("%s -> %ld, errno %s", call, rc, errno_text);
}

pid_t conf_gettid(void) { return (pid_t)syscall(SYS_gettid); }

static char task_state_in(pid_t pid, pid_t tid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
  FILE *f = fopen(path, "r");
  if (!f) return '?';
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *paren = strrchr(buf, ')');
  return paren && paren[1] && paren[2] ? paren[2] : '?';
}

static char task_state(pid_t tid) { return task_state_in(getpid(), tid); }

void conf_wait_blocked_in(pid_t pid, pid_t tid) {
  for (int i = 0; i < 5000; i++) {
    char s = task_state_in(pid, tid);
    if (s == 'S' || s == 'D') {
      /* A few more ms: the state may come from a short wait on the way. */
      conf_sleep_ms(20);
      s = task_state_in(pid, tid);
      if (s == 'S' || s == 'D') return;
    }
    conf_sleep_ms(1);
  }
  say("thread never blocked");
}

void conf_wait_blocked(pid_t tid) { conf_wait_blocked_in(getpid(), tid); }

void conf_wait_exited(pid_t tid) {
  for (int i = 0; i < 5000; i++) {
    char s = task_state(tid);
    if (s == 'Z' || s == 'X' || s == '?') return;
    conf_sleep_ms(1);
  }
  say("thread never ended");
}

void conf_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

struct timespec conf_deadline(clockid_t clk, long ms) {
  struct timespec ts;
  clock_gettime(clk, &ts);
  long long ns = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec + ms * 1000000LL;
  ts.tv_sec = (time_t)(ns / 1000000000LL);
  ts.tv_nsec = (long)(ns % 1000000000LL);
  return ts;
}

pthread_t conf_spawn(void *(*fn)(void *), void *arg) {
  pthread_t th;
  int rc = pthread_create(&th, NULL, fn, arg);
  if (rc != 0) {
    say("pthread_create failed: %s", err_name(rc));
    exit(99);
  }
  return th;
}

void conf_print_mask(const char *label) {
  sigset_t set;
  pthread_sigmask(SIG_BLOCK, NULL, &set);
  char line[1024];
  size_t used = (size_t)snprintf(line, sizeof line, "%s:", label);
  for (int sig = 1; sig < NSIG && used < sizeof line - 32; sig++) {
    if (!sigismember(&set, sig)) continue;
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev)
      used += (size_t)snprintf(line + used, sizeof line - used, " SIG%s", abbrev);
    else
      used += (size_t)snprintf(line + used, sizeof line - used, " SIG%d", sig);
  }
  say("%s", line);
}

int conf_main(int argc, char **argv, const conf_case *cases, size_t n) {
  if (argc == 2 && !strcmp(argv[1], "--list")) {
    for (size_t i = 0; i < n; i++)
      printf("%s %d %u\n", cases[i].name, cases[i].repeat, cases[i].flags);
    return 0;
  }
  for (size_t i = 0; argc == 2 && i < n; i++) {
    if (strcmp(argv[1], cases[i].name)) continue;
    cases[i].run();
    return 0;
  }
  fprintf(stderr, "usage: %s --list | CASE\n", argv[0]);
  return 2;
}
