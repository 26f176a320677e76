#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(const char *prog, const char *about, const wl_flag *flags, int nflags) {
  printf("usage: %s [flags]\n%s\n\nflags:\n", prog, about);
  for (int i = 0; i < nflags; i++) {
    const wl_flag *f = &flags[i];
    switch (f->type) {
      case WL_INT:
        printf("  --%-18s %s (default %d)\n", f->name, f->help, *(int *)f->value);
        break;
      case WL_DOUBLE:
        printf("  --%-18s %s (default %g)\n", f->name, f->help, *(double *)f->value);
        break;
      case WL_STRING:
        printf("  --%-18s %s (default %s)\n", f->name, f->help, *(const char **)f->value);
        break;
      case WL_BOOL:
        printf("  --%-18s %s\n", f->name, f->help);
        break;
    }
  }
}

static void bad_flag(const char *prog, const char *msg, const char *arg) {
  fprintf(stderr, "%s: %s: %s (see --help)\n", prog, msg, arg);
  exit(2);
}

static void set_value(const char *prog, const wl_flag *f, const char *text) {
  char *end = NULL;
  errno = 0;
  switch (f->type) {
    case WL_INT: {
      long v = strtol(text, &end, 10);
      if (errno || *end || end == text || v < 0 || v > 100000000) bad_flag(prog, "bad number", text);
      *(int *)f->value = (int)v;
      break;
    }
    case WL_DOUBLE: {
      double v = strtod(text, &end);
      if (errno || *end || end == text || v < 0) bad_flag(prog, "bad number", text);
      *(double *)f->value = v;
      break;
    }
    case WL_STRING:
      *(const char **)f->value = text;
      break;
    case WL_BOOL:
      *(int *)f->value = 1;
      break;
  }
}

void wl_parse_flags(int argc, char **argv, const char *about, const wl_flag *flags, int nflags) {
  const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(prog, about, flags, nflags);
      exit(0);
    }
    if (strncmp(arg, "--", 2) != 0) bad_flag(prog, "unexpected argument", arg);
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
    const wl_flag *f = NULL;
    for (int j = 0; j < nflags; j++) {
      if (strlen(flags[j].name) == name_len && strncmp(flags[j].name, name, name_len) == 0) {
        f = &flags[j];
      }
    }
    if (!f) bad_flag(prog, "unknown flag", arg);
    if (f->type == WL_BOOL) {
      if (eq) bad_flag(prog, "flag takes no value", arg);
      set_value(prog, f, "");
    } else if (eq) {
      set_value(prog, f, eq + 1);
    } else {
      if (i + 1 >= argc) bad_flag(prog, "flag needs a value", arg);
      set_value(prog, f, argv[++i]);
    }
  }
}

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double wl_now_s(void) { return clock_s(CLOCK_MONOTONIC); }

double wl_thread_cpu_s(void) { return clock_s(CLOCK_THREAD_CPUTIME_ID); }

double wl_run_delay_s(void) {
  char buf[128];
  int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  char *p, *end;
  strtoull(buf, &p, 10); /* field 1: time on a CPU */
  unsigned long long ns = strtoull(p, &end, 10);
  return end != p ? (double)ns * 1e-9 : -1;
}

/* Reading the CPU clock is a system call, and the CPU it spends after its
 * sample and before the next one's falls between them: about one read's
 * worth, the least of back-to-back reads. */
static double cpu_read_cost(void) {
  static _Atomic double cost = -1;
  double c = cost;
  if (c >= 0) return c;
  c = 1;
  for (int i = 0; i < 50; i++) {
    double a = wl_thread_cpu_s(), b = wl_thread_cpu_s();
    if (b - a < c) c = b - a;
  }
  cost = c;
  return c;
}

double wl_cpu_inside_s(double c0) {
  double d = wl_thread_cpu_s() - c0 - cpu_read_cost();
  return d > 0 ? d : 0;
}

void wl_spin_cpu_ms(double ms) {
  double until = wl_thread_cpu_s() + ms * 1e-3;
  while (wl_thread_cpu_s() < until) wl_busy_loop(2000);
}

double wl_sleep_ms(double ms) {
  double start = wl_now_s();
  struct timespec left = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (double)(time_t)(ms / 1000)) * 1e6)};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
  return wl_now_s() - start;
}

void wl_busy_loop(uint64_t n) {
  for (volatile uint64_t i = 0; i < n; i = i + 1) {
  }
}

void wl_matrix_row(double *c, const double *a, const double *b, int size, int i) {
  double *ci = &c[(size_t)i * (size_t)size];
  for (int j = 0; j < size; j++) ci[j] = 0;
  for (int k = 0; k < size; k++) {
    double aik = a[(size_t)i * (size_t)size + (size_t)k];
    const double *bk = &b[(size_t)k * (size_t)size];
    for (int j = 0; j < size; j++) ci[j] += aik * bk[j];
  }
}

void wl_name_self(const char *prefix, int index) {
  char name[16];
  snprintf(name, sizeof name, "%s-%d", prefix, index);
  pthread_setname_np(pthread_self(), name);
}

void wl_check(int err, const char *what) {
  if (err != 0) {
    fprintf(stderr, "workload: %s failed: %s\n", what, strerror(err));
    exit(1);
  }
}
