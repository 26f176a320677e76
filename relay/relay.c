/* threadmon-relay: carries a probe's stream to a display over TLS, so that
 * no crypto runs inside the profiled program (docs/user-guide.md, "Remote").
 *
 *   threadmon-relay --connect HOST:PORT [--check]
 *
 * The token comes from THREADMON_TOKEN_FD (a descriptor the launcher passes,
 * read to its end) or THREADMON_TOKEN, never from argv; the relay removes
 * both from its environment. It listens on a Unix socket in a directory of
 * its own (mode 0700, under $XDG_RUNTIME_DIR or $TMPDIR) and prints
 * "listening unix:PATH" on stdout; each connection there, from a process of
 * our own user only (SO_PEERCRED), becomes one TLS 1.2 connection to the
 * display, ECDHE-PSK-CHACHA20-POLY1305 with the token's key (psk.h), and the
 * bytes are carried both ways. A handshake that fails is answered to the
 * probe with a Refusal frame, so that it stops and says why.
 *
 * --check makes one handshake first; when it fails, the relay prints
 * "refused WHY" on stdout and exits 2. The relay ends once its standard input is closed (the launcher's
 * end) and every probe connection has ended. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "psk.h"
#include "threadmon.pb-c.h"
#include "tmwire.h"

#define MAX_PAIRS 64
#define BUF_BYTES 16384
#define CONNECT_TIMEOUT_MS 5000

typedef struct {
  int u; /* the probe's Unix connection */
  int t; /* the display's TCP connection */
  SSL *ssl;
  unsigned char up[BUF_BYTES], down[BUF_BYTES];
  size_t up_len, up_off, down_len, down_off;
  bool u_eof;
  short u_events, t_events; /* what the last service waited for */
} pair;

static unsigned char psk[TM_PSK_BYTES];
static const char *target; /* HOST:PORT as given */
static char sock_dir[256], sock_path[300];
static pair *pairs[MAX_PAIRS];
static int npairs;
static char last_error[600];

static void say(const char *fmt, const char *a, const char *b) {
  char line[600];
  snprintf(line, sizeof line, fmt, a, b);
  /* The same failure for each reconnection of a probe is said once. */
  if (strcmp(line, last_error) == 0) return;
  snprintf(last_error, sizeof last_error, "%s", line);
  fprintf(stderr, "threadmon-relay: %s\n", line);
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static unsigned int psk_client_cb(SSL *ssl, const char *hint, char *identity,
                                  unsigned int max_identity, unsigned char *key,
                                  unsigned int max_key) {
  (void)ssl;
  (void)hint;
  if (max_identity < sizeof TM_PSK_IDENTITY || max_key < TM_PSK_BYTES) return 0;
  memcpy(identity, TM_PSK_IDENTITY, sizeof TM_PSK_IDENTITY);
  memcpy(key, psk, TM_PSK_BYTES);
  return TM_PSK_BYTES;
}

static SSL_CTX *make_ctx(void) {
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) return NULL;
  /* PSK key exchange with ECDHE: forward secret, and no certificates. */
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_2_VERSION);
  if (SSL_CTX_set_cipher_list(ctx, TM_PSK_CIPHER) != 1) {
    SSL_CTX_free(ctx);
    return NULL;
  }
  SSL_CTX_set_psk_client_callback(ctx, psk_client_cb);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return ctx;
}

static int wait_fd(int fd, short events, int64_t deadline) {
  for (;;) {
    int64_t left = deadline - now_ms();
    if (left <= 0) return 0;
    struct pollfd p = {.fd = fd, .events = events};
    int r = poll(&p, 1, (int)left);
    if (r > 0) return 1;
    if (r < 0 && errno != EINTR) return -1;
  }
}

/* A connected TCP socket to target, non-blocking, or -1 with *why set. */
static int dial(const char **why) {
  char host[256];
  const char *colon = strrchr(target, ':');
  size_t hl = colon ? (size_t)(colon - target) : 0;
  if (!colon || hl == 0 || hl >= sizeof host) {
    *why = "expected HOST:PORT";
    return -1;
  }
  memcpy(host, target, hl);
  host[hl] = 0;
  if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
    memmove(host, host + 1, hl - 2);
    host[hl - 2] = 0;
  }
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
  int gai = getaddrinfo(host, colon + 1, &hints, &ai);
  if (gai) {
    *why = gai_strerror(gai);
    return -1;
  }
  int s = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int err = s < 0 ? errno : 0;
  if (s >= 0 && connect(s, ai->ai_addr, ai->ai_addrlen) < 0) err = errno;
  freeaddrinfo(ai);
  if (err == EINPROGRESS) {
    socklen_t n = sizeof err;
    int w = wait_fd(s, POLLOUT, now_ms() + CONNECT_TIMEOUT_MS);
    err = w > 0 ? (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &n), err) : ETIMEDOUT;
  }
  if (err) {
    if (s >= 0) close(s);
    *why = strerror(err);
    return -1;
  }
  return s;
}

/* Notes that the display answered our ClientHello with a ServerHello: it
 * speaks TLS, and took our cipher. */
static void on_message(int write_p, int version, int content_type, const void *buf, size_t len,
                       SSL *ssl, void *arg) {
  (void)version;
  (void)ssl;
  if (!write_p && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
      ((const unsigned char *)buf)[0] == SSL3_MT_SERVER_HELLO)
    *(bool *)arg = true;
}

/* One line for a failed handshake, from OpenSSL's reason. A display that
 * answered with a ServerHello and then closed took our key for a wrong one
 * (Qt closes without an alert). */
static const char *handshake_problem(unsigned long e, bool server_hello, char *buf, size_t n) {
  int reason = ERR_GET_REASON(e);
  if (server_hello && (e == 0 || reason == SSL_R_UNEXPECTED_EOF_WHILE_READING))
    return "wrong token (the display's token differs)";
  if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG ||
      reason == SSL_R_RECORD_LENGTH_MISMATCH || reason == SSL_R_UNEXPECTED_EOF_WHILE_READING ||
      e == 0)
    return "it does not speak TLS (a display without a token? start it with the same "
           "--token-file)";
  if (reason == SSL_R_SSLV3_ALERT_BAD_RECORD_MAC || reason == SSL_R_TLSV1_ALERT_DECRYPT_ERROR ||
      reason == SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC ||
      reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE ||
      reason == SSL_R_TLSV1_ALERT_UNKNOWN_PSK_IDENTITY)
    return "wrong token (the display's token differs)";
  snprintf(buf, n, "TLS handshake failed: %s", ERR_reason_error_string(e));
  return buf;
}

/* A TLS connection to the display, or NULL with *why set. */
static SSL *connect_tls(SSL_CTX *ctx, int *fd_out, const char **why, char *buf, size_t n) {
  int s = dial(why);
  if (s < 0) return NULL;
  SSL *ssl = SSL_new(ctx);
  SSL_set_fd(ssl, s);
  bool server_hello = false;
  SSL_set_msg_callback(ssl, on_message);
  SSL_set_msg_callback_arg(ssl, &server_hello);
  ERR_clear_error();
  int64_t deadline = now_ms() + CONNECT_TIMEOUT_MS;
  for (;;) {
    int r = SSL_connect(ssl);
    if (r == 1) {
      SSL_set_msg_callback(ssl, NULL);
      *fd_out = s;
      return ssl;
    }
    int e = SSL_get_error(ssl, r);
    short ev = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (ev && wait_fd(s, ev, deadline) > 0) continue;
    *why = ev ? "no TLS answer within 5 s (is it a threadmon display?)"
              : handshake_problem(ERR_peek_last_error(), server_hello, buf, n);
    SSL_free(ssl);
    close(s);
    return NULL;
  }
}

/* The display's answer that the probe understands: a Refusal frame. */
static void refuse_probe(int u, const char *text) {
  Threadmon__Refusal refusal = THREADMON__REFUSAL__INIT;
  refusal.reason = THREADMON__REFUSAL_REASON__REFUSED_TOKEN;
  refusal.text = (char *)text;
  Threadmon__Frame frame = THREADMON__FRAME__INIT;
  frame.body_case = THREADMON__FRAME__BODY_REFUSAL;
  frame.refusal = &refusal;
  uint8_t out[TM_FRAME_PREFIX_BYTES + 600];
  size_t len = threadmon__frame__get_packed_size(&frame);
  if (len > sizeof out - TM_FRAME_PREFIX_BYTES) return;
  threadmon__frame__pack(&frame, out + TM_FRAME_PREFIX_BYTES);
  tm_frame_prefix_encode(out, out + TM_FRAME_PREFIX_BYTES, (uint32_t)len);
  (void)!send(u, out, TM_FRAME_PREFIX_BYTES + len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void close_pair(int i, bool orderly) {
  pair *p = pairs[i];
  if (orderly) SSL_shutdown(p->ssl); /* our close_notify; the display's is not awaited */
  SSL_free(p->ssl);
  close(p->t);
  close(p->u);
  free(p);
  pairs[i] = pairs[--npairs];
}

static void accept_probe(int listener, SSL_CTX *ctx) {
  int u = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (u < 0) return;
  /* The directory is ours alone; the check still proves it. */
  struct ucred cred;
  socklen_t cl = sizeof cred;
  if (getsockopt(u, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 || cred.uid != getuid()) {
    say("refused a connection from another user%s%s", "", "");
    close(u);
    return;
  }
  if (npairs == MAX_PAIRS) {
    say("refused a probe: %s%s", "too many connections", "");
    close(u);
    return;
  }
  const char *why = NULL;
  char buf[300];
  int t = -1;
  SSL *ssl = connect_tls(ctx, &t, &why, buf, sizeof buf);
  if (!ssl) {
    /* Refused: the probe stops and its launcher says why. Unreachable:
     * the probe tries again later, and we say it once. */
    if (strstr(why, "TLS") || strstr(why, "token"))
      refuse_probe(u, why);
    else
      say("%s: %s", target, why);
    close(u);
    return;
  }
  pair *p = calloc(1, sizeof *p);
  if (!p) {
    SSL_free(ssl);
    close(t);
    close(u);
    return;
  }
  p->u = u;
  p->t = t;
  p->ssl = ssl;
  pairs[npairs++] = p;
  last_error[0] = 0;
}

static short ssl_wait(SSL *ssl, int r) {
  int e = SSL_get_error(ssl, r);
  return e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
}

/* Moves what it can both ways; false when the pair is done. */
static bool service(pair *p, bool *orderly) {
  *orderly = false;
  for (bool progress = true; progress;) {
    progress = false;
    p->u_events = p->t_events = 0;
    if (!p->up_len && !p->u_eof) {
      ssize_t r = recv(p->u, p->up, sizeof p->up, MSG_DONTWAIT);
      if (r > 0) {
        p->up_len = (size_t)r;
        p->up_off = 0;
        progress = true;
      } else if (r == 0) {
        p->u_eof = progress = true;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        p->u_events |= POLLIN;
      } else if (errno != EINTR) {
        return false;
      }
    }
    if (p->up_len) {
      int r = SSL_write(p->ssl, p->up + p->up_off, (int)(p->up_len - p->up_off));
      if (r > 0) {
        p->up_off += (size_t)r;
        if (p->up_off == p->up_len) p->up_len = 0;
        progress = true;
      } else {
        short ev = ssl_wait(p->ssl, r);
        if (!ev) return false;
        p->t_events |= ev;
      }
    }
    if (p->u_eof && !p->up_len) {
      *orderly = true;
      return false;
    }
    if (!p->down_len) {
      int r = SSL_read(p->ssl, p->down, sizeof p->down);
      if (r > 0) {
        p->down_len = (size_t)r;
        p->down_off = 0;
        progress = true;
      } else {
        short ev = ssl_wait(p->ssl, r);
        if (!ev) return false; /* the display closed or failed */
        p->t_events |= ev;
      }
    }
    if (p->down_len) {
      ssize_t r = send(p->u, p->down + p->down_off, p->down_len - p->down_off,
                       MSG_DONTWAIT | MSG_NOSIGNAL);
      if (r > 0) {
        p->down_off += (size_t)r;
        if (p->down_off == p->down_len) p->down_len = 0;
        progress = true;
      } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        p->u_events |= POLLOUT;
      } else if (r < 0 && errno != EINTR) {
        return false;
      }
    }
  }
  return true;
}

static int listen_unix(void) {
  const char *base = getenv("XDG_RUNTIME_DIR");
  struct stat st;
  if (!base || !*base || stat(base, &st) != 0 || st.st_uid != getuid()) base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  snprintf(sock_dir, sizeof sock_dir, "%s/threadmon-relay-XXXXXX", base);
  if (!mkdtemp(sock_dir)) return -1; /* mkdtemp makes it 0700, exclusively */
  snprintf(sock_path, sizeof sock_path, "%s/probe.sock", sock_dir);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  if (strlen(sock_path) >= sizeof a.sun_path) return -1;
  memcpy(a.sun_path, sock_path, strlen(sock_path) + 1);
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 16) != 0) {
    if (s >= 0) close(s);
    return -1;
  }
  return s;
}

static void remove_socket(void) {
  if (sock_path[0]) unlink(sock_path);
  if (sock_dir[0]) rmdir(sock_dir);
}

static void on_term(int sig) {
  (void)sig;
  remove_socket();
  _exit(0);
}

/* The token, from the launcher's descriptor or the environment. */
static int read_token(char *buf, size_t n, size_t *len) {
  const char *fd_text = getenv("THREADMON_TOKEN_FD");
  *len = 0;
  if (fd_text && *fd_text) {
    int fd = atoi(fd_text);
    ssize_t r;
    while (*len < n && (r = read(fd, buf + *len, n - *len)) != 0) {
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return -1;
      *len += (size_t)r;
    }
    close(fd);
  } else if (getenv("THREADMON_TOKEN")) {
    snprintf(buf, n, "%s", getenv("THREADMON_TOKEN"));
    *len = strlen(buf);
  }
  unsetenv("THREADMON_TOKEN");
  unsetenv("THREADMON_TOKEN_FD");
  while (*len > 0 && (buf[*len - 1] == '\n' || buf[*len - 1] == '\r')) --*len;
  return *len > 0 && *len < n ? 0 : -1;
}

int main(int argc, char **argv) {
  bool check = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--connect") == 0 && i + 1 < argc)
      target = argv[++i];
    else if (strcmp(argv[i], "--check") == 0)
      check = true;
    else {
      fprintf(stderr, "usage: threadmon-relay --connect HOST:PORT [--check] "
                      "(token in THREADMON_TOKEN_FD or THREADMON_TOKEN)\n");
      return 2;
    }
  }
  char token[4096];
  size_t token_len = 0;
  if (!target || read_token(token, sizeof token, &token_len) != 0) {
    fprintf(stderr, "threadmon-relay: %s\n",
            target ? "no token (THREADMON_TOKEN_FD or THREADMON_TOKEN), or one over 4 KiB"
                   : "usage: threadmon-relay --connect HOST:PORT [--check]");
    return 2;
  }
  int derived = tm_psk_derive(token, token_len, psk);
  memset(token, 0, sizeof token);
  SSL_CTX *ctx = derived == 0 ? make_ctx() : NULL;
  if (!ctx) {
    fprintf(stderr, "threadmon-relay: this OpenSSL has no %s\n", TM_PSK_CIPHER);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, SIG_IGN); /* the program's Ctrl-C; its end ends us */
  if (check) {
    const char *why = NULL;
    char buf[300];
    int t = -1;
    SSL *ssl = connect_tls(ctx, &t, &why, buf, sizeof buf);
    if (!ssl) {
      printf("refused %s\n", why); /* the launcher says it, in one line */
      return 2;
    }
    SSL_shutdown(ssl);
    SSL_free(ssl);
    close(t);
  }
  int listener = listen_unix();
  if (listener < 0) {
    fprintf(stderr, "threadmon-relay: cannot listen on a Unix socket in %s: %s\n", sock_dir,
            strerror(errno));
    remove_socket();
    return 2;
  }
  signal(SIGTERM, on_term);
  signal(SIGHUP, on_term);
  printf("listening unix:%s\n", sock_path);
  fflush(stdout);

  bool stdin_open = true;
  while (stdin_open || npairs > 0) {
    struct pollfd fds[2 + 2 * MAX_PAIRS];
    int n = 0;
    fds[n++] = (struct pollfd){.fd = listener, .events = POLLIN};
    fds[n++] = (struct pollfd){.fd = stdin_open ? 0 : -1, .events = POLLIN};
    for (int i = 0; i < npairs; i++) {
      fds[n++] = (struct pollfd){.fd = pairs[i]->u, .events = pairs[i]->u_events};
      fds[n++] = (struct pollfd){.fd = pairs[i]->t, .events = pairs[i]->t_events};
    }
    if (poll(fds, (nfds_t)n, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents) {
      char b[64];
      if (read(0, b, sizeof b) <= 0) stdin_open = false;
    }
    if (fds[0].revents & POLLIN) accept_probe(listener, ctx);
    for (int i = npairs - 1; i >= 0; i--) {
      bool orderly;
      if (!service(pairs[i], &orderly)) close_pair(i, orderly);
    }
  }
  close(listener);
  remove_socket();
  SSL_CTX_free(ctx);
  return 0;
}
