#include "test_session_util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tmwire.h"

int capture_decode(const uint8_t *data, size_t len, capture *c) {
  memset(c, 0, sizeof *c);
  tm_decoder d;
  tm_decoder_init(&d);
  tm_decoder_feed(&d, data, len);
  size_t cap = 0;
  for (;;) {
    const uint8_t *payload;
    uint32_t plen;
    tm_decode_status st = tm_decoder_next(&d, &payload, &plen);
    if (st == TM_DECODE_NEED_MORE) break;
    if (st == TM_DECODE_ERROR) {
      c->damaged = 1;
      snprintf(c->error, sizeof c->error, "%s", tm_decoder_error(&d));
      break;
    }
    Threadmon__Frame *f = threadmon__frame__unpack(NULL, plen, payload);
    if (!f) {
      c->damaged = 1;
      snprintf(c->error, sizeof c->error, "frame %zu does not unpack", c->n);
      break;
    }
    if (c->n == cap) {
      cap = cap ? cap * 2 : 256;
      c->frames = realloc(c->frames, cap * sizeof *c->frames);
    }
    c->frames[c->n++] = f;
  }
  c->tail_bytes = tm_decoder_pending(&d);
  tm_decoder_free(&d);
  return 0;
}

int capture_load(const char *path, capture *c) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  size_t cap = 1 << 16, len = 0, r;
  uint8_t *buf = malloc(cap);
  while ((r = fread(buf + len, 1, cap - len, f)) > 0) {
    len += r;
    if (len == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  capture_decode(buf, len, c);
  free(buf);
  return 0;
}

void capture_free(capture *c) {
  for (size_t i = 0; i < c->n; i++) threadmon__frame__free_unpacked(c->frames[i], NULL);
  free(c->frames);
  memset(c, 0, sizeof *c);
}

size_t capture_count(const capture *c, Threadmon__Frame__BodyCase kind) {
  size_t n = 0;
  for (size_t i = 0; i < c->n; i++) n += c->frames[i]->body_case == kind;
  return n;
}

const Threadmon__Frame *capture_first(const capture *c, Threadmon__Frame__BodyCase kind) {
  for (size_t i = 0; i < c->n; i++)
    if (c->frames[i]->body_case == kind) return c->frames[i];
  return NULL;
}

const Threadmon__Frame *capture_last(const capture *c, Threadmon__Frame__BodyCase kind) {
  for (size_t i = c->n; i-- > 0;)
    if (c->frames[i]->body_case == kind) return c->frames[i];
  return NULL;
}

pid_t run_probed(const char *probe, char *const argv[], char *const extra_env[]) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  setenv("LD_PRELOAD", probe, 1);
  unsetenv("THREADMON_SESSION");
  for (size_t i = 0; extra_env && extra_env[i]; i++) putenv(extra_env[i]);
  execv(argv[0], argv);
  fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
  _exit(127);
}

uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int wait_for(pid_t pid, int timeout_ms) {
  uint64_t end = now_ms() + (uint64_t)timeout_ms;
  for (;;) {
    int status;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 || now_ms() >= end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    usleep(5000);
  }
}
