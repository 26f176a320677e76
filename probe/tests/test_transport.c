/* The probe's TCP side, end to end: a display that reads everything, one
 * that hangs up mid-run (and one that comes back), one that never reads.
 * The program must always finish normally and in its normal time.
 * Usage: test_transport PROBE.so WORKLOAD TMPDIR */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_session_util.h"
#include "tm_check.h"
#include "tmblock.h"
#include "tmwire.h"

static const char *probe, *workload, *dir;

static int listen_on(int *port, int rcvbuf) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  CHECK(s >= 0);
  if (rcvbuf) setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  CHECK(bind(s, (struct sockaddr *)&a, sizeof a) == 0);
  CHECK(listen(s, 4) == 0);
  socklen_t len = sizeof a;
  getsockname(s, (struct sockaddr *)&a, &len);
  *port = ntohs(a.sin_port);
  return s;
}

/* THREADMON_CONNECT=connect (host:port or unix:PATH). */
static pid_t start_to(const char *connect, const char *ms, const char *out, const char *extra) {
  static char env_conn[600], env_out[600], env_extra[640];
  snprintf(env_conn, sizeof env_conn, "THREADMON_CONNECT=%s", connect);
  snprintf(env_out, sizeof env_out, "THREADMON_OUTPUT=%s", out);
  snprintf(env_extra, sizeof env_extra, "%s", extra ? extra : "THREADMON_TOKEN=t");
  char *argv[] = {(char *)workload, "contend", (char *)ms, "0", NULL};
  char *env[] = {env_conn, env_out, env_extra, NULL};
  return run_probed(probe, argv, env);
}

static pid_t start(int port, const char *ms, const char *out, const char *extra) {
  char connect[32];
  snprintf(connect, sizeof connect, "127.0.0.1:%d", port);
  return start_to(connect, ms, out, extra);
}

typedef struct sink {
  uint8_t *data;
  size_t len, cap;
} sink;

/* Accepts one connection and reads it until EOF, or until limit bytes
 * (then hangs up), or timeout. */
static void read_connection(int listener, sink *k, size_t limit, int timeout_ms) {
  struct pollfd p = {.fd = listener, .events = POLLIN};
  CHECK(poll(&p, 1, timeout_ms) == 1);
  int c = accept(listener, NULL, NULL);
  CHECK(c >= 0);
  uint64_t end = now_ms() + (uint64_t)timeout_ms;
  while (now_ms() < end && k->len < limit) {
    struct pollfd q = {.fd = c, .events = POLLIN};
    if (poll(&q, 1, 50) <= 0) continue;
    if (k->len == k->cap) k->data = realloc(k->data, k->cap = k->cap ? k->cap * 2 : 65536);
    ssize_t r = read(c, k->data + k->len, k->cap - k->len);
    if (r <= 0) break;
    k->len += (size_t)r;
  }
  close(c);
}

static void check_stream(const sink *k, bool complete) {
  capture c;
  capture_decode(k->data, k->len, &c);
  if (c.damaged) fprintf(stderr, "damaged: %s\n", c.error);
  CHECK(!c.damaged);
  CHECK(c.n > 0);
  CHECK_EQ(c.frames[0]->body_case, THREADMON__FRAME__BODY_HELLO);
  CHECK(!strcmp(c.frames[0]->hello->token, "t"));
  if (complete) {
    CHECK_EQ(c.tail_bytes, 0);
    CHECK_EQ(c.frames[c.n - 1]->body_case, THREADMON__FRAME__BODY_GOODBYE);
    CHECK(capture_count(&c, THREADMON__FRAME__BODY_TICK) >= 10);
  }
  /* Every thread a transition names was described first. */
  uint32_t known[64];
  size_t nk = 0;
  for (size_t i = 0; i < c.n; i++) {
    const Threadmon__Frame *f = c.frames[i];
    if (f->body_case == THREADMON__FRAME__BODY_THREAD_START && nk < 64)
      known[nk++] = f->thread_start->tid;
    if (f->body_case != THREADMON__FRAME__BODY_TRANSITIONS) continue;
    for (size_t j = 0; j < f->transitions->n_tid; j++) {
      bool found = false;
      for (size_t m = 0; m < nk; m++) found |= known[m] == f->transitions->tid[j];
      CHECK(found);
    }
  }
  capture_free(&c);
}

/* A 300 ms session streamed to listener l: read whole, Hello to Goodbye. */
static sink whole_session(int l, const char *connect, const char *out) {
  pid_t pid = start_to(connect, "300", out, NULL);
  sink k = {0};
  read_connection(l, &k, SIZE_MAX, 4000);
  int status = wait_for(pid, 3000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(k.len > TM_HEADER_BYTES && !memcmp(k.data, TM_MAGIC, TM_MAGIC_BYTES));
  check_stream(&k, true);
  return k;
}

static void test_reader(void) {
  int port, l = listen_on(&port, 0);
  char out[512];
  snprintf(out, sizeof out, "%s/reader.tmcap", dir);
  char connect[32];
  snprintf(connect, sizeof connect, "127.0.0.1:%d", port);
  sink k = whole_session(l, connect, out);
  /* The same session went to the file (in zstd blocks): frame for frame. */
  FILE *f = fopen(out, "rb");
  CHECK(f);
  uint8_t *file = malloc(4 * k.len + 1);
  size_t flen = fread(file, 1, 4 * k.len + 1, f);
  fclose(f);
  CHECK(flen < k.len);
  CHECK_EQ(file[8], TM_FORMAT_MAJOR_BLOCKS);
  tm_decoder from_net, from_file;
  tm_decoder_init(&from_net);
  tm_decoder_init(&from_file);
  tm_decoder_feed(&from_net, k.data, k.len);
  tm_decoder_feed(&from_file, file, flen);
  size_t frames = 0;
  for (;;) {
    const uint8_t *a, *b;
    uint32_t an, bn;
    tm_decode_status sa = tm_decoder_next(&from_net, &a, &an);
    tm_decode_status sb = tm_decoder_next(&from_file, &b, &bn);
    CHECK_EQ(sa, sb);
    if (sa != TM_DECODE_FRAME || sb != TM_DECODE_FRAME) break;
    CHECK(an == bn && !memcmp(a, b, an));
    frames++;
  }
  CHECK(from_file.blocks > 0);
  CHECK_EQ(tm_decoder_pending(&from_file), 0);
  tm_decoder_free(&from_net);
  tm_decoder_free(&from_file);
  free(file);
  free(k.data);
  close(l);
  printf("ok reader: %zu bytes, the same %zu frames as the capture file (%zu bytes)\n", k.len,
         frames, flen);
}

/* The display hangs up mid-run; it comes back and gets a fresh stream. */
static void test_hangup_and_back(void) {
  int port, l = listen_on(&port, 0);
  char out[512];
  snprintf(out, sizeof out, "%s/hangup.tmcap", dir);
  uint64_t t0 = now_ms();
  pid_t pid = start(port, "700", out, NULL);
  sink first = {0}, second = {0};
  read_connection(l, &first, 4000, 3000); /* a few frames, then hang up */
  check_stream(&first, false);
  read_connection(l, &second, SIZE_MAX, 4000);
  int status = wait_for(pid, 3000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(now_ms() - t0 < 2500);
  check_stream(&second, true);
  capture c;
  CHECK(capture_load(out, &c) == 0);
  CHECK(!c.damaged);
  CHECK_EQ(c.frames[c.n - 1]->body_case, THREADMON__FRAME__BODY_GOODBYE);
  capture_free(&c);
  free(first.data);
  free(second.data);
  close(l);
  printf("ok hang-up: program unharmed, reconnection starts with Hello\n");
}

/* The display hangs up for good: the program finishes unharmed. */
static void test_hangup(void) {
  int port, l = listen_on(&port, 0);
  char out[512];
  snprintf(out, sizeof out, "%s/gone.tmcap", dir);
  uint64_t t0 = now_ms();
  pid_t pid = start(port, "400", out, NULL);
  sink k = {0};
  read_connection(l, &k, 2000, 3000);
  close(l); /* reconnection attempts are refused from now on */
  int status = wait_for(pid, 3000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(now_ms() - t0 < 2000);
  free(k.data);
  printf("ok display gone: exited normally in %llu ms\n", (unsigned long long)(now_ms() - t0));
}

/* Nobody reads: the bounded buffer drops whole frames, the program does
 * not wait, and the capture file says how many were dropped. */
static void test_never_read(void) {
  int port, l = listen_on(&port, 4096);
  char out[512];
  snprintf(out, sizeof out, "%s/stuck.tmcap", dir);
  uint64_t t0 = now_ms();
  pid_t pid = start(port, "1500", out, "THREADMON_NET_BUFFER_KB=16");
  int status = wait_for(pid, 5000);
  uint64_t took = now_ms() - t0;
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(took < 1500 + 1000 + 1200); /* run + the bounded exit flush + slack */
  capture c;
  CHECK(capture_load(out, &c) == 0);
  CHECK(!c.damaged);
  const Threadmon__Frame *last = c.frames[c.n - 1];
  CHECK_EQ(last->body_case, THREADMON__FRAME__BODY_GOODBYE);
  /* What the kernel held for the stalled peer reaches it now that it
   * reads (the probe's socket closed with it unsent, not reset). The rest
   * of the stream was dropped, or lost with the probe's 16 KB queue at
   * exit: beyond that, drops must be counted. A stream the buffers held
   * (a loaded machine: 37 KB in 1.5 s, against 90-290 KB idle) needs none. */
  sink k = {0};
  read_connection(l, &k, SIZE_MAX, 3000);
  struct stat st;
  CHECK(stat(out, &st) == 0);
  size_t stream = (size_t)st.st_size, queue = 16u << 10;
  uint64_t dropped = last->goodbye->frames_dropped;
  if (stream > k.len + queue + TM_HEADER_BYTES) {
    if (!dropped)
      fprintf(stderr, "stream %zu bytes, the peer got %zu, none counted dropped\n", stream, k.len);
    CHECK(dropped > 0);
  } else {
    printf("never read: the %zu-byte stream fit the buffers (the peer got %zu): "
           "no drop needed, not checked\n", stream, k.len);
  }
  printf("ok never read: %llu frames dropped (stream %zu bytes, peer got %zu), exited in %llu ms\n",
         (unsigned long long)dropped, stream, k.len, (unsigned long long)took);
  free(k.data);
  capture_free(&c);
  close(l);
}

/* The display's answer, framed as docs/format.md says (no stream header). */
static void send_refusal(int c, Threadmon__RefusalReason reason, const char *text) {
  Threadmon__Refusal r = THREADMON__REFUSAL__INIT;
  r.reason = reason;
  r.text = (char *)text;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_REFUSAL;
  f.refusal = &r;
  uint8_t buf[256];
  size_t len = threadmon__frame__pack(&f, buf + TM_FRAME_PREFIX_BYTES);
  tm_frame_prefix_encode(buf, buf + TM_FRAME_PREFIX_BYTES, (uint32_t)len);
  CHECK(write(c, buf, TM_FRAME_PREFIX_BYTES + len) == (ssize_t)(TM_FRAME_PREFIX_BYTES + len));
}

/* Accepts connections for ms, answering each with a refusal after its
 * first bytes; returns how many came. */
static int refuse_all(int listener, Threadmon__RefusalReason reason, int ms) {
  int count = 0;
  uint64_t end = now_ms() + (uint64_t)ms;
  while (now_ms() < end) {
    struct pollfd p = {.fd = listener, .events = POLLIN};
    if (poll(&p, 1, 50) != 1) continue;
    int c = accept(listener, NULL, NULL);
    CHECK(c >= 0);
    count++;
    uint8_t head[64];
    struct pollfd q = {.fd = c, .events = POLLIN};
    if (poll(&q, 1, 2000) == 1 && read(c, head, sizeof head) > 0)
      send_refusal(c, reason, "wrong token");
    close(c);
  }
  return count;
}

static void read_text(const char *path, char *buf, size_t n) {
  buf[0] = 0;
  FILE *f = fopen(path, "r");
  if (!f) return;
  size_t len = fread(buf, 1, n - 1, f);
  buf[len] = 0;
  fclose(f);
}

/* A refused probe stops connecting for the rest of the run and tells the
 * launcher why (THREADMON_STATUS); the program is unharmed. */
static void test_refused(void) {
  int port, l = listen_on(&port, 0);
  char out[512], status_path[512], env_status[600];
  snprintf(out, sizeof out, "%s/refused.tmcap", dir);
  snprintf(status_path, sizeof status_path, "%s/refused.status", dir);
  fclose(fopen(status_path, "w"));
  snprintf(env_status, sizeof env_status, "THREADMON_STATUS=%s", status_path);
  uint64_t t0 = now_ms();
  pid_t pid = start(port, "1500", out, env_status);
  int connections = refuse_all(l, THREADMON__REFUSAL_REASON__REFUSED_TOKEN, 1800);
  int status = wait_for(pid, 3000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(now_ms() - t0 < 2500);
  CHECK_EQ(connections, 1);
  char text[2048], want[128];
  read_text(status_path, text, sizeof text);
  snprintf(want, sizeof want, "refused %d 127.0.0.1:%d wrong token\n", (int)pid, port);
  if (!strstr(text, want)) fprintf(stderr, "status file: %s\n", text);
  CHECK(strstr(text, want) != NULL);
  close(l);
  printf("ok refused: 1 connection in 1.5 s, status line written\n");
}

/* Busy is no verdict on the probe: it tries again, with backoff. */
static void test_busy(void) {
  int port, l = listen_on(&port, 0);
  char out[512];
  snprintf(out, sizeof out, "%s/busy.tmcap", dir);
  pid_t pid = start(port, "1200", out, NULL);
  int connections = refuse_all(l, THREADMON__REFUSAL_REASON__REFUSED_BUSY, 1300);
  int status = wait_for(pid, 3000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(connections >= 2);
  CHECK(connections <= 6); /* 100, 200, 400, 800 ms apart */
  close(l);
  printf("ok busy: %d connections in 1.2 s\n", connections);
}

static int listen_unix(const char *path) {
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  CHECK(s >= 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  unlink(path);
  CHECK(bind(s, (struct sockaddr *)&a, sizeof a) == 0);
  CHECK(listen(s, 4) == 0);
  return s;
}

/* THREADMON_CONNECT=unix:PATH: the same stream as over TCP, to a listener
 * of the probe's own user. */
static void test_unix(void) {
  char path[512], connect[600], out[512];
  snprintf(path, sizeof path, "%s/display.sock", dir);
  snprintf(connect, sizeof connect, "unix:%s", path);
  snprintf(out, sizeof out, "%s/unix.tmcap", dir);
  int l = listen_unix(path);
  sink k = whole_session(l, connect, out);
  free(k.data);
  close(l);
  unlink(path);
  printf("ok unix: %zu bytes over %s, Hello to Goodbye\n", k.len, path);
}

/* A Unix socket whose listener is another user (a squatter who bound the
 * name first) gets not one byte, and the launcher is told in one line. The
 * other user is 65534 (nobody): only root can be it, so this part runs as
 * root only. */
static void test_unix_stranger(void) {
  if (geteuid() != 0) {
    printf("skip unix stranger: needs root to listen as another user\n");
    return;
  }
  char sub[512], path[600], connect[700], out[512], status_path[512], env_status[600];
  snprintf(sub, sizeof sub, "%s/open", dir);
  mkdir(sub, 0777);
  CHECK(chmod(sub, 0777) == 0);
  snprintf(path, sizeof path, "%s/display.sock", sub);
  snprintf(connect, sizeof connect, "unix:%s", path);
  snprintf(out, sizeof out, "%s/stranger.tmcap", dir);
  snprintf(status_path, sizeof status_path, "%s/stranger.status", dir);
  fclose(fopen(status_path, "w"));
  snprintf(env_status, sizeof env_status, "THREADMON_STATUS=%s", status_path);
  unlink(path);
  int ready[2], got[2];
  CHECK(pipe(ready) == 0 && pipe(got) == 0);
  pid_t squatter = fork();
  CHECK(squatter >= 0);
  if (squatter == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
    int l = listen_unix(path);
    CHECK(write(ready[1], "r", 1) == 1);
    /* Counts every byte any connection brings in 1.5 s. */
    uint64_t total = 0, end = now_ms() + 1500;
    int conns = 0;
    while (now_ms() < end) {
      struct pollfd p = {.fd = l, .events = POLLIN};
      if (poll(&p, 1, 50) != 1) continue;
      int c = accept(l, NULL, NULL);
      if (c < 0) continue;
      conns++;
      uint8_t buf[4096];
      ssize_t r;
      struct pollfd q = {.fd = c, .events = POLLIN};
      while (poll(&q, 1, 300) == 1 && (r = read(c, buf, sizeof buf)) > 0) total += (uint64_t)r;
      close(c);
    }
    char line[64];
    int n = snprintf(line, sizeof line, "%d %llu", conns, (unsigned long long)total);
    CHECK(write(got[1], line, (size_t)n) == n);
    _exit(0);
  }
  char c;
  CHECK(read(ready[0], &c, 1) == 1);
  pid_t pid = start_to(connect, "800", out, env_status);
  int status = wait_for(pid, 3000);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  char line[64] = {0};
  CHECK(read(got[0], line, sizeof line - 1) > 0);
  CHECK(wait_for(squatter, 3000) == 0);
  int conns = -1;
  unsigned long long bytes = 1;
  CHECK(sscanf(line, "%d %llu", &conns, &bytes) == 2);
  CHECK_EQ(bytes, 0);  /* not the header, not the token */
  CHECK_EQ(conns, 1);  /* and no second try */
  char text[2048], want[800];
  read_text(status_path, text, sizeof text);
  snprintf(want, sizeof want, "untrusted %d %s its listener runs as uid 65534", (int)pid,
           connect);
  if (!strstr(text, want)) fprintf(stderr, "status file: %s\n", text);
  CHECK(strstr(text, want) != NULL);
  /* The capture file has the whole session all the same. */
  capture cap;
  CHECK(capture_load(out, &cap) == 0);
  CHECK(!cap.damaged);
  CHECK_EQ(cap.frames[cap.n - 1]->body_case, THREADMON__FRAME__BODY_GOODBYE);
  capture_free(&cap);
  for (int i = 0; i < 2; i++) close(ready[i]), close(got[i]);
  unlink(path);
  rmdir(sub);
  printf("ok unix stranger: %d connection, 0 bytes, status line written\n", conns);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s PROBE WORKLOAD TMPDIR\n", argv[0]);
    return 2;
  }
  probe = argv[1];
  workload = argv[2];
  dir = argv[3];
  mkdir(dir, 0755);
  const char *only = getenv("TEST_ONLY");
  if (!only || strstr(only, "reader")) test_reader();
  if (!only || strstr(only, "back")) test_hangup_and_back();
  if (!only || strstr(only, "gone")) test_hangup();
  if (!only || strstr(only, "never")) test_never_read();
  if (!only || strstr(only, "refused")) test_refused();
  if (!only || strstr(only, "busy")) test_busy();
  if (!only || strstr(only, "unix")) test_unix();
  if (!only || strstr(only, "stranger")) test_unix_stranger();
  return 0;
}
