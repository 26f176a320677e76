/* threadmon-flight: the flight recorder behind `threadmon record --last`.
 * It listens for the probe's stream on a Unix socket in the launcher's
 * private directory (--listen-unix PATH; the launcher points the probe at
 * it with THREADMON_CONNECT=unix:PATH) or on loopback TCP with a token,
 * keeps the last window of
 * detail in its own memory (ring.h), and writes a capture when the stream
 * ends, on SIGUSR1 and when a trigger fires (triggers.h). The ring lives
 * here, not in the probe: the program's memory and its probe stay as they
 * are in any live session, and a program that dies abruptly loses nothing
 * the recorder had received.
 *
 * A Unix socket's peer must run as the recorder's own user (SO_PEERCRED),
 * else it is closed unread; the probe checks the recorder the same way.
 *
 * A trigger's capture is written --post-ms after it fired (default 1000), so
 * that it holds what the trigger saw and what followed (a deadlock lasts
 * long enough to be one, a wait is seen ending or still open); the ring
 * keeps --last-ms plus that, and holds the window before the trigger's
 * moment until the capture is written, so that it is whole however late
 * the stream arrives.
 * At most --trigger-limit of them are written (default 10, 0: no limit);
 * reaching it is said in one line. With --status-stdin, the program's end
 * as the launcher saw it ("exit N" or "signal N" on a line of stdin) goes
 * into the last capture when the probe could not send its Goodbye (a
 * program killed outright).
 *
 * stdout: "listening PORT" (or "listening unix:PATH") once, then "wrote
 * PATH" per capture written.
 * Exit status: 0, 1 on a usage or socket error, 2 when a capture could not
 * be written. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ring.h"
#include "threadmon.pb-c.h"
#include "tmwire.h"
#include "triggers.h"

static int sig_pipe[2] = {-1, -1};

static void on_signal(int sig) {
  int saved = errno;
  char c = (char)sig;
  if (write(sig_pipe[1], &c, 1) < 0) { /* full: a signal is pending already */
  }
  errno = saved;
}

typedef struct flight {
  const char *output;
  const char *token;
  fr_ring ring;
  fr_triggers triggers;
  uint64_t window_ns;
  uint64_t quiet_until_ns; /* a trigger fired: the next may fire from here */
  unsigned snapshots;
  int status;
  bool hello_seen;
  /* a trigger fired: its capture is written at due_ns (CLOCK_MONOTONIC) */
  uint64_t post_ns;
  bool pending;
  uint64_t due_ns;
  char pending_why[256];
  unsigned trigger_limit, triggers_written;
  bool limit_told;
  bool status_stdin;
} flight;

#define DEFAULT_POST_MS 1000u
#define DEFAULT_TRIGGER_LIMIT 10u
#define STATUS_WAIT_MS 10000

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* "dir/f.tmcap" + "trigger1" -> "dir/f.trigger1.tmcap". */
static void tag_path(const char *path, const char *tag, char *out, size_t n) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(path, '.');
  if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
    snprintf(out, n, "%s.%s", path, tag);
  else
    snprintf(out, n, "%.*s.%s%s", (int)(dot - path), path, tag, dot);
}

static void write_capture(flight *fl, const char *path, const char *why) {
  if (fr_ring_write(&fl->ring, path, why) != 0) {
    fprintf(stderr, "threadmon: flight recorder: cannot write %s: %s\n", path, strerror(errno));
    fl->status = 2;
    return;
  }
  printf("wrote %s\n", path);
  fflush(stdout);
}

/* After a line on stderr saying data was lost: the launcher, which reads
 * stdout, then calls the captures incomplete. */
static void tell_incomplete(void) {
  printf("incomplete\n");
  fflush(stdout);
}

static void snapshot(flight *fl, const char *kind, const char *why) {
  char tag[32], path[4200];
  snprintf(tag, sizeof tag, "%s%u", kind, ++fl->snapshots);
  tag_path(fl->output, tag, path, sizeof path);
  fprintf(stderr, "threadmon: flight recorder: %s: writing %s\n", why, path);
  write_capture(fl, path, why);
}

static void reply(int fd, Threadmon__Frame *f) {
  uint8_t buf[512];
  size_t n = threadmon__frame__get_packed_size(f);
  if (n + TM_FRAME_PREFIX_BYTES > sizeof buf) return;
  threadmon__frame__pack(f, buf + TM_FRAME_PREFIX_BYTES);
  tm_frame_prefix_encode(buf, buf + TM_FRAME_PREFIX_BYTES, (uint32_t)n);
  if (send(fd, buf, n + TM_FRAME_PREFIX_BYTES, MSG_NOSIGNAL) < 0) { /* the stream's end shows it */
  }
}

/* The first frame must be a Hello with our token; the probe is told. */
static bool greet(flight *fl, int fd, const Threadmon__Frame *f) {
  Threadmon__Frame answer = THREADMON__FRAME__INIT;
  /* No token (a Unix socket, whose peer was checked): any Hello. */
  bool ok = f->body_case == THREADMON__FRAME__BODY_HELLO &&
            (!fl->token[0] || strcmp(f->hello->token ? f->hello->token : "", fl->token) == 0);
  Threadmon__Welcome welcome = THREADMON__WELCOME__INIT;
  Threadmon__Refusal refusal = THREADMON__REFUSAL__INIT;
  if (ok) {
    answer.body_case = THREADMON__FRAME__BODY_WELCOME;
    answer.welcome = &welcome;
  } else {
    refusal.reason = THREADMON__REFUSAL_REASON__REFUSED_TOKEN;
    refusal.text = "not the flight recorder's session";
    answer.body_case = THREADMON__FRAME__BODY_REFUSAL;
    answer.refusal = &refusal;
  }
  reply(fd, &answer);
  return ok;
}

/* A trigger that fired (its condition holding from at_ns): its capture is
 * due post_ns later, with the window before at_ns whole, unless the limit
 * of trigger captures is reached (said once). */
static void trigger_fired(flight *fl, const char *why, uint64_t at_ns) {
  if (fl->ring.now_ns < fl->quiet_until_ns || fl->pending) return;
  fl->quiet_until_ns = fl->ring.now_ns + fl->window_ns;
  if (fl->trigger_limit && fl->triggers_written >= fl->trigger_limit) {
    if (!fl->limit_told)
      fprintf(stderr,
              "threadmon: flight recorder: %s: not written, the limit of %u trigger "
              "captures is reached (--trigger-limit); later triggers write none\n",
              why, fl->trigger_limit);
    fl->limit_told = true;
    return;
  }
  fl->pending = true;
  fl->due_ns = mono_ns() + fl->post_ns;
  fr_ring_hold(&fl->ring, at_ns > fl->window_ns ? at_ns - fl->window_ns : 0);
  snprintf(fl->pending_why, sizeof fl->pending_why, "%s", why);
}

/* The pending trigger's capture, when due (or now, when the stream ends). */
static void trigger_write(flight *fl, bool now) {
  if (!fl->pending || (!now && mono_ns() < fl->due_ns)) return;
  fl->pending = false;
  fl->triggers_written++;
  snapshot(fl, "trigger", fl->pending_why);
  fr_ring_release(&fl->ring);
}

/* Milliseconds poll may sleep: until the pending trigger is due. */
static int poll_timeout(const flight *fl) {
  if (!fl->pending) return -1;
  uint64_t now = mono_ns();
  return now >= fl->due_ns ? 0 : (int)((fl->due_ns - now) / 1000000ull) + 1;
}

static void take(flight *fl, const uint8_t *payload, uint32_t len, const Threadmon__Frame *f) {
  fr_ring_take(&fl->ring, payload, len, f);
  if (f->body_case == THREADMON__FRAME__BODY_GOODBYE && f->goodbye->frames_dropped) {
    fprintf(stderr,
            "threadmon: flight recorder: the probe dropped %llu frames it could not send "
            "in time (its queue to the recorder was full): the captures lack them\n",
            (unsigned long long)f->goodbye->frames_dropped);
    tell_incomplete();
  }
  char why[256];
  uint64_t at_ns = 0;
  if (fr_triggers_take(&fl->triggers, f, fl->ring.start_ns, why, sizeof why, &at_ns))
    trigger_fired(fl, why, at_ns);
  trigger_write(fl, false);
}

/* The program's end as the launcher saw it, one line on stdin ("exit N",
 * "signal N"), read when the stream is over; waits for it a while. */
static void read_status(flight *fl) {
  char line[64];
  size_t n = 0;
  uint64_t until = mono_ns() + STATUS_WAIT_MS * 1000000ull;
  while (n < sizeof line - 1) {
    uint64_t now = mono_ns();
    struct pollfd p = {.fd = 0, .events = POLLIN};
    if (now >= until || poll(&p, 1, (int)((until - now) / 1000000ull) + 1) <= 0) break;
    ssize_t r = read(0, line + n, sizeof line - 1 - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    n += (size_t)r;
    if (memchr(line, '\n', n)) break;
  }
  line[n] = 0;
  int value;
  if (sscanf(line, "exit %d", &value) == 1) {
    if (!fl->ring.goodbye.len) /* it exited: the probe's Goodbye should have come */
      fprintf(stderr,
              "threadmon: flight recorder: the program exited (status %d) but its "
              "stream ended before its Goodbye: what the probe had not sent is lost\n",
              value);
    if (!fl->ring.goodbye.len) tell_incomplete();
    fr_ring_set_end(&fl->ring, THREADMON__END_REASON__END_EXIT, value);
  } else if (sscanf(line, "signal %d", &value) == 1)
    fr_ring_set_end(&fl->ring, THREADMON__END_REASON__END_SIGNAL, value);
}

/* Returns false when the connection is over. */
static bool receive(flight *fl, int fd, tm_decoder *dec) {
  uint8_t buf[65536];
  ssize_t n = recv(fd, buf, sizeof buf, 0);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) return false;
  tm_decoder_feed(dec, buf, (size_t)n);
  const uint8_t *payload;
  uint32_t len;
  tm_decode_status st;
  while ((st = tm_decoder_next(dec, &payload, &len)) == TM_DECODE_FRAME) {
    Threadmon__Frame *f = threadmon__frame__unpack(NULL, len, payload);
    if (!f) {
      fprintf(stderr, "threadmon: flight recorder: malformed frame at byte %llu; stream ended\n",
              (unsigned long long)tm_decoder_good_offset(dec));
      tell_incomplete();
      return false;
    }
    bool first = !fl->hello_seen;
    if (first && !greet(fl, fd, f)) {
      threadmon__frame__free_unpacked(f, NULL);
      return false;
    }
    if (first) tm_decoder_set_max_frame(dec, 0); /* the Hello passed: any frame now */
    fl->hello_seen = true;
    take(fl, payload, len, f);
    threadmon__frame__free_unpacked(f, NULL);
  }
  if (st == TM_DECODE_ERROR) {
    fprintf(stderr, "threadmon: flight recorder: %s; stream ended\n", tm_decoder_error(dec));
    tell_incomplete();
    return false;
  }
  return true;
}

static int listen_loopback(void) {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 4) != 0 ||
      getsockname(s, (struct sockaddr *)&a, &len) != 0)
    return -1;
  printf("listening %u\n", ntohs(a.sin_port));
  fflush(stdout);
  return s;
}

/* A socket at path, which must not exist yet (the launcher's private
 * directory is fresh): a name already there is another's, never removed. */
static int listen_unix(const char *path) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof a.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(a.sun_path, path);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  mode_t old = umask(077);
  int r = s < 0 ? -1 : bind(s, (struct sockaddr *)&a, sizeof a);
  umask(old);
  if (r != 0 || listen(s, 4) != 0) {
    int e = errno;
    if (s >= 0) close(s);
    errno = e;
    return -1;
  }
  printf("listening unix:%s\n", path);
  fflush(stdout);
  return s;
}

/* A Unix socket's peer of another user is closed unread. */
static bool peer_allowed(int fd, bool is_unix) {
  if (!is_unix) return true;
  struct ucred cred = {.pid = 0, .uid = (uid_t)-1};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
      (cred.uid == getuid() || cred.uid == geteuid()))
    return true;
  fprintf(stderr, "threadmon: flight recorder: refused a connection from pid %d, uid %u: not "
          "this user's (uid %u)\n", (int)cred.pid, (unsigned)cred.uid, (unsigned)geteuid());
  return false;
}

static int usage(void) {
  fputs(
      "usage: threadmon-flight -o FILE --last-ms N [--listen-unix PATH | --token T] "
      "[--trigger deadlock|wait>D]... [--post-ms N] [--trigger-limit N] [--status-stdin]\n",
      stderr);
  return 1;
}

int main(int argc, char **argv) {
  flight fl = {
      .token = "", .post_ns = DEFAULT_POST_MS * 1000000ull, .trigger_limit = DEFAULT_TRIGGER_LIMIT};
  uint64_t last_ms = 0;
  const char *unix_path = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--status-stdin") == 0) {
      fl.status_stdin = true;
      continue;
    }
    if (!v) return usage();
    if (strcmp(a, "-o") == 0)
      fl.output = v;
    else if (strcmp(a, "--token") == 0)
      fl.token = v;
    else if (strcmp(a, "--listen-unix") == 0)
      unix_path = v;
    else if (strcmp(a, "--last-ms") == 0)
      last_ms = strtoull(v, NULL, 10);
    else if (strcmp(a, "--post-ms") == 0)
      fl.post_ns = strtoull(v, NULL, 10) * 1000000ull;
    else if (strcmp(a, "--trigger-limit") == 0)
      fl.trigger_limit = (unsigned)strtoul(v, NULL, 10);
    else if (strcmp(a, "--trigger") == 0) {
      if (!fr_trigger_parse(&fl.triggers, v)) {
        fprintf(stderr, "threadmon-flight: unknown trigger '%s' (deadlock, wait>200ms)\n", v);
        return 1;
      }
    } else {
      return usage();
    }
    i++;
  }
  if (!fl.output || !last_ms) return usage();
  fl.window_ns = last_ms * 1000000ull;
  /* With triggers, the ring keeps the window before a trigger and what
   * follows until its capture is written. */
  bool triggers = fl.triggers.deadlock || fl.triggers.wait_ns;
  fr_ring_init(&fl.ring, fl.window_ns + (triggers ? fl.post_ns : 0));
  if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return 1;
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGINT, SIG_IGN); /* Ctrl-C is the program's: its end ends the stream */
  signal(SIGPIPE, SIG_IGN);
  int ls = unix_path ? listen_unix(unix_path) : listen_loopback();
  if (ls < 0) {
    fprintf(stderr, "threadmon-flight: cannot listen on %s: %s\n",
            unix_path ? unix_path : "loopback", strerror(errno));
    return 1;
  }
  int conn = -1;
  bool over = false, stop = false;
  tm_decoder dec;
  tm_decoder_init(&dec);
  tm_decoder_set_max_frame(&dec, TM_MAX_HELLO_BYTES);
  while (!over && !stop) {
    /* Until a Hello with the token arrives, a newer connection replaces
     * the one waiting: a stranger on the port cannot keep the probe out. */
    struct pollfd p[3] = {{.fd = sig_pipe[0], .events = POLLIN},
                          {.fd = conn, .events = POLLIN},
                          {.fd = fl.hello_seen ? -1 : ls, .events = POLLIN}};
    if (poll(p, 3, poll_timeout(&fl)) < 0 && errno != EINTR) break;
    trigger_write(&fl, false);
    char sig;
    while (read(sig_pipe[0], &sig, 1) == 1) {
      if (sig == SIGTERM)
        stop = true;
      else if (fl.hello_seen)
        snapshot(&fl, "snap", "SIGUSR1");
    }
    if (p[2].revents & POLLIN) {
      int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
      if (c >= 0 && !peer_allowed(c, unix_path != NULL)) {
        close(c);
      } else if (c >= 0) {
        if (conn >= 0) close(conn);
        conn = c;
        tm_decoder_free(&dec);
        tm_decoder_init(&dec);
        tm_decoder_set_max_frame(&dec, TM_MAX_HELLO_BYTES);
      }
    }
    if (conn < 0 || !(p[1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    bool greeted = fl.hello_seen;
    bool open = receive(&fl, conn, &dec);
    if (!greeted && fl.hello_seen) {
      close(ls); /* one session: the program's own (THREADMON_FOLLOW=0) */
      ls = -1;
    }
    if (!open && !fl.hello_seen) { /* a stranger, or refused: wait for the probe */
      close(conn);
      conn = -1;
      continue;
    }
    over = !open;
  }
  if (fl.hello_seen) trigger_write(&fl, true);
  if (fl.hello_seen && fl.status_stdin) read_status(&fl);
  if (fl.hello_seen)
    write_capture(&fl, fl.output, stop ? "recorder stopped" : "the program ended");
  else
    fl.status = fl.status ? fl.status : 2;
  if (conn >= 0) close(conn);
  if (ls >= 0) close(ls);
  if (unix_path) unlink(unix_path);
  tm_decoder_free(&dec);
  fr_ring_free(&fl.ring);
  fr_triggers_free(&fl.triggers);
  return fl.status;
}
