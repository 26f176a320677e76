#include "transport.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "netreply.h"
#include "procfs.h"
#include "probe.h"
#include "tmcreate.h"
#include "tmwire.h"

#define CONNECT_TIMEOUT_NS (2000000000ull)
#define FIRST_BACKOFF_NS (100000000ull)
#define MAX_BACKOFF_NS (3200000000ull)
#define MAX_ATTEMPTS 12 /* about 25 s of trying, then give up */
#define ANSWER_WAIT_NS (300000000ull) /* at the end, for the display's answer */

void tm_transport_init(tm_transport *t) {
  memset(t, 0, sizeof *t);
  t->file_fd = -1;
  t->sock = -1;
  t->net = TM_NET_OFF;
}

/* ---- capture file ---- */

/* fresh: a new file, made under a random name and renamed onto the path
 * (tmcreate.h): never one another user planted there, nor a symlink's
 * target. Else the file made before, reopened to append: only if the path
 * still names that very file, and never through a symlink. */
static int open_capture(tm_transport *t, bool fresh) {
  int fd = fresh ? tm_create_replacing(t->path)
                 : open(t->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (fresh && fcntl(fd, F_SETFL, O_APPEND) != 0) {
    close(fd);
    return -1;
  }
  fd = tm_fd_move_high(fd, false);
  /* A program replacing every descriptor (dup2 of /dev/null up to the
   * limit) may take this number too, even between the open and the fstat:
   * it is ours only if it is the file the path names. If not, the number is
   * the program's now: left alone, and the open tried again later. */
  struct stat st, named;
  if (fd < 0 || fstat(fd, &st) != 0 || lstat(t->path, &named) != 0 || !S_ISREG(st.st_mode) ||
      st.st_dev != named.st_dev || st.st_ino != named.st_ino)
    return -1;
  if (!fresh && (st.st_dev != t->file_dev || st.st_ino != t->file_ino)) return -1;
  t->file_dev = st.st_dev;
  t->file_ino = st.st_ino;
  t->file_fd = fd;
  return 0;
}

/* A write that fails (disk full, file size limit, I/O error) or a
 * descriptor the program took over opens a gap: the torn tail is cut back to
 * the last whole frame, and nothing more is written until the session has
 * queued its resync (a Notice, the descriptions, unknown states) at the head
 * of a batch: every 200 ms, and at the end. */
#define FILE_RETRY_NS 200000000ull

/* Bytes of frames lost: this gap's (the session's Notice says them, then
 * resets them) and the whole session's (the launcher's line). */
static void gap_bytes(tm_transport *t, uint64_t n) {
  t->file_gap_bytes += n;
  t->file_lost_bytes += n;
}

static void file_gap(tm_transport *t, size_t len, int err) {
  if (!t->file_resync) {
    /* Frames sent since the last whole write may be lost with this one. */
    t->file_gap_start_ns = t->file_ok_ns;
    t->file_gap_errno = err;
    if (!t->file_first_gap_ns) {
      t->file_first_gap_ns = t->file_gap_start_ns;
      t->file_first_gap_errno = err;
    }
  }
  t->file_resync = true;
  t->file_retry_ns = tm_now_ns() + FILE_RETRY_NS;
  /* Frames gathered and not yet written fall in the gap too: dropped now,
   * so that the resync can go out at once (the session's last tick must
   * not find a batch in its way). */
  gap_bytes(t, len + t->batch_len);
  t->batch_len = 0;
}

static void file_write(tm_transport *t, const uint8_t *p, size_t len) {
  if (t->file_fd < 0) {
    if (t->file_lost) {
      gap_bytes(t, len);
      t->file_resync_queued = false; /* the resync went nowhere: again later */
    }
    return;
  }
  if (t->file_resync && !t->file_resync_queued) {
    gap_bytes(t, len);
    return;
  }
  size_t done = 0;
  int err = 0;
  while (done < len) {
    ssize_t w = write(t->file_fd, p + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = w < 0 ? errno : ENOSPC;
      break;
    }
    done += (size_t)w;
  }
  if (done == len) {
    t->bytes_written += len;
    t->file_good_size += len;
    t->file_ok_ns = tm_now_ns();
    if (t->file_resync_queued) {
      t->file_resync = t->file_resync_queued = false;
      t->file_gaps++;
      t->file_lost_ns += t->file_ok_ns - t->file_gap_start_ns;
    }
    return;
  }
  /* Never leave half a frame: a reader stops at the first bad frame. */
  if (done > 0 && ftruncate(t->file_fd, (off_t)t->file_good_size) != 0) {
    /* Cannot cut it: stop writing rather than append after garbage. */
    t->file_fd = -1;
  }
  t->file_resync_queued = false;
  if (p == t->batch) t->batch_len = 0; /* counted once, as len */
  file_gap(t, len, err);
}

/* Writes one record (a block, a batch of plain frames or one frame) and
 * notes it in the index once it is whole in the file. */
static void file_record(tm_transport *t, const uint8_t *p, size_t len, tm_index_entry meta) {
  uint64_t at = t->file_good_size;
  file_write(t, p, len);
  if (!t->compress_level || t->file_good_size != at + len) return;
  meta.offset = at;
  if (!t->index_lost && tm_index_add(&t->index, &meta) != 0) t->index_lost = true;
}

static void plain_record(tm_transport *t, const uint8_t *p, size_t len, uint64_t first_ns) {
  if (!t->compress_level) { /* format 1: no index to note it in */
    file_write(t, p, len);
    return;
  }
  tm_index_entry meta = {.first_ns = first_ns, .last_ns = tm_now_ns()};
  meta.kinds = tm_frames_describe(p, len, &meta.frames);
  file_record(t, p, len, meta);
}

bool tm_transport_file_wants_resync(const tm_transport *t, uint64_t now_ns, bool last) {
  return (t->file_fd >= 0 || t->file_lost) && t->file_resync && !t->file_resync_queued &&
         (last || now_ns >= t->file_retry_ns) && t->batching && t->batch_len == 0;
}

void tm_transport_file_resync_queued(tm_transport *t) { t->file_resync_queued = true; }

bool tm_transport_file_loss(const tm_transport *t, uint64_t now_ns, tm_file_loss *out) {
  bool open = t->path && (t->file_resync || t->file_lost || t->file_fd < 0);
  *out = (tm_file_loss){.lost_ns = t->file_lost_ns,
                        .bytes = t->file_lost_bytes,
                        .first_ns = t->file_first_gap_ns,
                        .first_errno = t->file_first_gap_errno,
                        .reopen_errno = t->file_reopen_errno};
  if (open && t->file_first_gap_ns && now_ns > t->file_gap_start_ns)
    out->lost_ns += now_ns - t->file_gap_start_ns;
  return t->file_first_gap_ns != 0;
}

#define BATCH_LIMIT (1u << 20) /* a larger frame (or batch) is written at once */
/* Gathered ticks reach the file within this (a killed program loses at
 * most that much), or once this many bytes wait. */
#define BATCH_WRITE_NS 50000000ull
#define BATCH_WRITE_BYTES 65536u

static bool batch_append(tm_transport *t, const uint8_t *p, size_t len) {
  if (t->batch_len + len > BATCH_LIMIT) return false;
  if (t->batch_len + len > t->batch_cap) {
    size_t cap = t->batch_cap ? t->batch_cap : 65536;
    while (cap < t->batch_len + len) cap *= 2;
    uint8_t *b = realloc(t->batch, cap);
    if (!b) return false;
    t->batch = b;
    t->batch_cap = cap;
  }
  memcpy(t->batch + t->batch_len, p, len);
  t->batch_len += len;
  return true;
}

static void file_check(tm_transport *t);

/* A batch goes out as one zstd block when that pays (format 2), else as
 * its plain frames. Either way it is one write: whole or a gap. */
static void batch_write(tm_transport *t) {
  file_check(t);
  if (!t->batch_len) return;
  tm_index_entry meta = {0};
  size_t raw = t->batch_len;
  size_t n = t->compress_level && t->file_fd >= 0
                 ? tm_block_encode(&t->blocks, t->batch, raw, t->batch_since_ns, tm_now_ns(), &meta)
                 : 0;
  if (n) {
    uint64_t gap_before = t->file_gap_bytes;
    t->batch_len = 0;
    file_record(t, t->blocks.out, n, meta);
    /* A gap counts the frames' bytes, not their compressed form. */
    if (t->file_gap_bytes > gap_before) gap_bytes(t, raw - n);
  } else {
    plain_record(t, t->batch, raw, t->batch_since_ns);
  }
  t->batch_len = 0;
}

void tm_transport_batch_begin(tm_transport *t, uint64_t now_ns) {
  if (!t->batch_len) t->batch_since_ns = now_ns;
  t->batching = true;
}

void tm_transport_batch_end(tm_transport *t, uint64_t now_ns, bool force) {
  if (force || t->batch_len >= BATCH_WRITE_BYTES || now_ns - t->batch_since_ns >= BATCH_WRITE_NS)
    batch_write(t);
  t->batching = false;
}

int tm_transport_open_file(tm_transport *t, const char *path) {
  free(t->path);
  t->path = strdup(path);
  if (!t->path) return -1;
  if (open_capture(t, true) < 0) return -1;
  t->file_good_size = 0;
  uint8_t header[TM_HEADER_BYTES];
  tm_header_encode_major(header, t->compress_level ? TM_FORMAT_MAJOR_BLOCKS : TM_FORMAT_MAJOR);
  if (t->compress_level) tm_block_writer_init(&t->blocks, t->compress_level);
  file_write(t, header, sizeof header);
  return 0;
}

/* Our descriptor number may have been closed and reused by the program (a
 * daemon's dup2 of /dev/null over every descriptor): check it still names
 * our file before writing more, and reopen the file if not. */
static void file_check(tm_transport *t) {
  if (!t->path) return;
  struct stat st;
  if (t->file_fd >= 0) {
    if (fstat(t->file_fd, &st) == 0 && st.st_dev == t->file_dev && st.st_ino == t->file_ino)
      return;
    t->file_fd = -1; /* not ours any more: never close it */
    t->file_lost = true;
    t->file_replaced++;
  }
  if (!t->file_lost) return;
  if (open_capture(t, false) < 0) {
    t->file_reopen_errno = errno;
    /* Not yet: what is sent meanwhile is lost, a gap; tried again with the
     * next resync. */
    if (!t->file_resync) file_gap(t, 0, EBADF);
    return;
  }
  t->file_lost = false;
  uint64_t size = fstat(t->file_fd, &st) == 0 ? (uint64_t)st.st_size : 0;
  /* Every write checks first, so the file normally holds all we wrote and
   * writing just goes on. Shorter: a write went to the program's
   * descriptor between a check and the write, a gap. */
  if (size != t->file_good_size && !t->file_resync) file_gap(t, 0, EBADF);
  t->file_good_size = size; /* appending: whole frames up to what we wrote */
  if (t->file_resync) t->file_retry_ns = 0; /* the new descriptor works: resync at once */
}

void tm_transport_check_file(tm_transport *t) { file_check(t); }

/* ---- TCP ---- */

static void out_reset(tm_transport *t) {
  t->out_len = t->out_sent = 0;
}

static bool out_append(tm_transport *t, const uint8_t *p, size_t len) {
  size_t pending = t->out_len - t->out_sent;
  if (pending + len > t->out_limit) return false;
  if (t->out_sent && t->out_len + len > t->out_cap) {
    memmove(t->out, t->out + t->out_sent, pending);
    t->out_len = pending;
    t->out_sent = 0;
  }
  if (t->out_len + len > t->out_cap) {
    size_t cap = t->out_cap ? t->out_cap : 65536;
    while (cap < t->out_len + len) cap *= 2;
    if (cap > t->out_limit) cap = t->out_limit;
    uint8_t *b = realloc(t->out, cap);
    if (!b) return false;
    t->out = b;
    t->out_cap = cap;
  }
  memcpy(t->out + t->out_len, p, len);
  t->out_len += len;
  return true;
}

static void queue_header(tm_transport *t) {
  uint8_t header[TM_HEADER_BYTES];
  tm_header_encode(header);
  out_append(t, header, sizeof header);
}

int tm_transport_set_peer(tm_transport *t, const char *host, const char *port,
                          size_t limit) {
  t->host = strdup(host);
  t->port = strdup(port);
  if (!t->host || !t->port) return -1;
  t->out_limit = limit;
  t->net = TM_NET_WAITING;
  t->retry_at_ns = 0;
  t->backoff_ns = FIRST_BACKOFF_NS;
  queue_header(t);
  return 0;
}

static void sock_close(tm_transport *t) {
  if (t->sock >= 0) close(t->sock);
  t->sock = -1;
}

/* No more attempts: the buffer goes, frames are no longer queued. */
static void net_stop(tm_transport *t, enum tm_net_state why) {
  sock_close(t);
  t->net = why;
  free(t->out);
  t->out = NULL;
  t->out_cap = 0;
  out_reset(t);
}

static void attempt_failed(tm_transport *t, uint64_t now, int err) {
  sock_close(t);
  t->last_errno = err;
  t->welcomed = false;
  t->reply_len = t->reply_skip = 0;
  if (++t->attempts >= MAX_ATTEMPTS) {
    net_stop(t, TM_NET_GAVE_UP);
    return;
  }
  t->net = TM_NET_WAITING;
  t->retry_at_ns = now + t->backoff_ns;
  if (t->backoff_ns < MAX_BACKOFF_NS) t->backoff_ns *= 2;
}

/* The peer went away after a connection: what it had not received is lost
 * with it; a new connection starts a new stream. Only a connection the
 * display had welcomed starts the attempts afresh: one closed before that
 * (a display too old to answer, anything else on that port) counts as a
 * failed attempt, so the probe does not reconnect at full speed all run. */
static void connection_lost(tm_transport *t, uint64_t now, int err) {
  out_reset(t);
  if (t->welcomed) {
    t->attempts = 0;
    t->backoff_ns = FIRST_BACKOFF_NS;
  }
  attempt_failed(t, now, err);
}

static bool peer_is_unix(const tm_transport *t) {
  return !strncmp(t->host, TM_UNIX_PREFIX, strlen(TM_UNIX_PREFIX));
}

/* The address to connect to: the Unix socket's path, or the host's first
 * address (getaddrinfo's, freed by the caller). */
static int peer_address(tm_transport *t, struct sockaddr_un *un, struct addrinfo **ai,
                        const struct sockaddr **addr, socklen_t *len) {
  if (peer_is_unix(t)) {
    const char *path = t->host + strlen(TM_UNIX_PREFIX);
    memset(un, 0, sizeof *un);
    un->sun_family = AF_UNIX;
    snprintf(un->sun_path, sizeof un->sun_path, "%s", path); /* fits: config checked */
    *addr = (const struct sockaddr *)un;
    *len = (socklen_t)sizeof *un;
    return AF_UNIX;
  }
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG};
  if (getaddrinfo(t->host, t->port, &hints, ai) != 0 || !*ai) return -1;
  *addr = (*ai)->ai_addr;
  *len = (*ai)->ai_addrlen;
  return (*ai)->ai_family;
}

static void start_connect(tm_transport *t, uint64_t now) {
  struct sockaddr_un un;
  struct addrinfo *ai = NULL;
  const struct sockaddr *addr = NULL;
  socklen_t addr_len = 0;
  int family = peer_address(t, &un, &ai, &addr, &addr_len);
  if (family < 0) {
    attempt_failed(t, now, EHOSTUNREACH);
    return;
  }
  int s = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s >= 0) s = tm_fd_move_high(s, false);
  if (s < 0) {
    if (ai) freeaddrinfo(ai);
    attempt_failed(t, now, errno);
    return;
  }
  int one = 1;
  if (family != AF_UNIX) setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  /* Keep the kernel's share of the backlog a fraction of ours, so that a
   * stalled peer shows up as counted drops, not as hidden buffering. */
  size_t sndbuf = t->out_limit / 4;
  if (sndbuf < 8192) sndbuf = 8192;
  if (sndbuf > (1u << 20)) sndbuf = 1u << 20;
  int sb = (int)sndbuf;
  setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sb, sizeof sb);
  t->sock = s;
  /* A Unix socket whose listener's backlog is full answers EAGAIN: an
   * attempt that failed, tried again later like any other. */
  int r = connect(s, addr, addr_len);
  if (ai) freeaddrinfo(ai);
  if (r < 0 && errno != EINPROGRESS) {
    attempt_failed(t, now, errno);
    return;
  }
  t->net = TM_NET_CONNECTING;
  t->connect_started_ns = now;
}

/* A Unix socket proves who listens on it: nothing is sent unless its
 * listener runs as this process's real or effective user. Anyone who
 * could create a socket at that path (a directory not private, a name
 * squatted before the display started) is refused before the stream
 * header, the token or a name leaves. Returns false after stopping. */
static bool peer_trusted(tm_transport *t) {
  if (!peer_is_unix(t)) return true;
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt(t->sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
    snprintf(t->refusal, sizeof t->refusal, "cannot tell who listens (SO_PEERCRED: %s); "
             "nothing sent", strerror(errno));
  } else if (cred.uid == getuid() || cred.uid == geteuid()) {
    return true;
  } else {
    snprintf(t->refusal, sizeof t->refusal, "its listener runs as uid %u (pid %d), not as this "
             "program's user (uid %u); nothing sent", (unsigned)cred.uid, (int)cred.pid,
             (unsigned)geteuid());
  }
  t->untrusted = true;
  net_stop(t, TM_NET_REFUSED);
  return false;
}

/* Returns true when the connection just completed. */
static bool check_connect(tm_transport *t, uint64_t now) {
  struct pollfd p = {.fd = t->sock, .events = POLLOUT};
  if (poll(&p, 1, 0) <= 0) {
    if (now - t->connect_started_ns > CONNECT_TIMEOUT_NS) attempt_failed(t, now, ETIMEDOUT);
    return false;
  }
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(t->sock, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err) {
    attempt_failed(t, now, err ? err : errno);
    return false;
  }
  if (!peer_trusted(t)) return false;
  t->net = TM_NET_CONNECTED;
  return true;
}

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One whole frame from the display: its answer to our Hello. */
static void answer(tm_transport *t, uint64_t now) {
  const uint8_t *payload = t->reply + TM_FRAME_PREFIX_BYTES;
  size_t len = t->reply_len - TM_FRAME_PREFIX_BYTES;
  if (tm_crc32c(payload, len) != get_u32(t->reply + 4)) return;
  switch (tm_reply_parse(payload, len, t->refusal, sizeof t->refusal)) {
    case TM_REPLY_WELCOME:
      t->welcomed = true;
      t->attempts = 0;
      t->backoff_ns = FIRST_BACKOFF_NS;
      break;
    case TM_REPLY_REFUSED:
      net_stop(t, TM_NET_REFUSED);
      break;
    case TM_REPLY_RETRY:
      connection_lost(t, now, ECONNREFUSED);
      break;
    case TM_REPLY_OTHER:
      break;
  }
}

/* Gathers the display's frames (no stream header) out of what it sent. */
static void take_replies(tm_transport *t, const uint8_t *p, size_t n, uint64_t now) {
  while (n > 0 && t->net == TM_NET_CONNECTED) {
    if (t->reply_skip) {
      size_t k = n < t->reply_skip ? n : t->reply_skip;
      t->reply_skip -= (uint32_t)k;
      p += k;
      n -= k;
      continue;
    }
    size_t want = TM_FRAME_PREFIX_BYTES;
    if (t->reply_len >= TM_FRAME_PREFIX_BYTES) want += get_u32(t->reply);
    size_t k = want - t->reply_len < n ? want - t->reply_len : n;
    memcpy(t->reply + t->reply_len, p, k);
    t->reply_len += k;
    p += k;
    n -= k;
    if (t->reply_len < TM_FRAME_PREFIX_BYTES) continue;
    uint32_t len = get_u32(t->reply);
    if (len > TM_REPLY_BYTES - TM_FRAME_PREFIX_BYTES) {
      t->reply_skip = len - (uint32_t)(t->reply_len - TM_FRAME_PREFIX_BYTES);
      t->reply_len = 0;
    } else if (t->reply_len == TM_FRAME_PREFIX_BYTES + len) {
      answer(t, now);
      t->reply_len = 0;
    }
  }
}

static void send_some(tm_transport *t, uint64_t now) {
  /* The display's answer first: a refusal ends the sending. An orderly
   * close is noticed at once. */
  uint8_t in[512];
  ssize_t r = -1;
  while (t->net == TM_NET_CONNECTED && (r = recv(t->sock, in, sizeof in, MSG_DONTWAIT)) != 0) {
    if (r > 0) {
      take_replies(t, in, (size_t)r, now);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    connection_lost(t, now, errno);
    return;
  }
  if (t->net != TM_NET_CONNECTED) return;
  if (r == 0) {
    connection_lost(t, now, ECONNRESET);
    return;
  }
  while (t->out_sent < t->out_len) {
    ssize_t w = send(t->sock, t->out + t->out_sent, t->out_len - t->out_sent,
                     MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      t->out_sent += (size_t)w;
      t->bytes_sent += (uint64_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    connection_lost(t, now, w < 0 ? errno : EPIPE); /* EPIPE, ECONNRESET, ... */
    return;
  }
  out_reset(t);
}

bool tm_transport_pump(tm_transport *t, uint64_t now) {
  bool fresh = false;
  if (t->net == TM_NET_WAITING && now >= t->retry_at_ns) start_connect(t, now);
  if (t->net == TM_NET_CONNECTING && check_connect(t, now)) {
    if (t->ever_connected) {
      /* Anything queued while disconnected belongs to the old stream. */
      out_reset(t);
      queue_header(t);
      t->needs_preamble = true; /* until the session sends it, whichever pump saw this */
      fresh = true;
    }
    t->ever_connected = true;
  }
  if (t->net == TM_NET_CONNECTED) send_some(t, now);
  return fresh;
}

void tm_transport_send(tm_transport *t, const uint8_t *frame, size_t len, int to) {
  bool to_file = (to & TM_TO_FILE) && (t->file_fd >= 0 || t->file_lost);
  if (to_file && t->file_resync && !t->file_resync_queued)
    gap_bytes(t, len); /* in a gap: gathered for nothing */
  else if (to_file) {
    /* Frames stay in order: what was gathered goes first. */
    if (!t->batching || !batch_append(t, frame, len)) {
      batch_write(t);
      plain_record(t, frame, len, tm_now_ns());
      /* What the tick gathers next follows this record: the index's times
       * stay in order (a reader refuses an index whose records go back). */
      t->batch_since_ns = tm_now_ns();
    }
  }
  if (!(to & TM_TO_NET)) return;
  /* Queue while connected, and before the first connection (the header is
   * already queued); between a loss and a reconnection there is no stream. */
  bool queue = t->net == TM_NET_CONNECTED ||
               ((t->net == TM_NET_WAITING || t->net == TM_NET_CONNECTING) &&
                !t->ever_connected);
  if (queue && !out_append(t, frame, len)) t->frames_dropped++;
}

bool tm_transport_make_room(tm_transport *t, size_t len, int timeout_ms) {
  uint64_t deadline = tm_now_ns() + (uint64_t)timeout_ms * 1000000u;
  for (;;) {
    uint64_t now = tm_now_ns();
    tm_transport_pump(t, now);
    bool queues = t->net == TM_NET_CONNECTED || (t->net == TM_NET_CONNECTING && !t->ever_connected);
    if (!queues || t->out_len - t->out_sent + len <= t->out_limit) return true;
    if (now >= deadline) return false;
    struct pollfd p = {.fd = t->sock, .events = POLLOUT};
    int wait_ms = (int)((deadline - now) / 1000000u) + 1;
    poll(&p, 1, wait_ms > 20 ? 20 : wait_ms);
  }
}

void tm_transport_flush(tm_transport *t, int timeout_ms) {
  uint64_t deadline = tm_now_ns() + (uint64_t)timeout_ms * 1000000u;
  uint64_t answer_by = 0;
  for (;;) {
    uint64_t now = tm_now_ns();
    tm_transport_pump(t, now);
    if (t->net != TM_NET_CONNECTING && t->net != TM_NET_CONNECTED) return;
    bool sent = t->net == TM_NET_CONNECTED && t->out_sent >= t->out_len;
    if (sent && !answer_by) {
      answer_by = now + ANSWER_WAIT_NS;
      if (deadline < answer_by) answer_by = deadline;
    }
    if (sent && (t->welcomed || now >= answer_by)) return;
    if (now >= deadline) return;
    struct pollfd p = {.fd = t->sock, .events = sent ? POLLIN : POLLOUT};
    int wait_ms = (int)((deadline - now) / 1000000u) + 1;
    if (wait_ms > 20) wait_ms = 20;
    if (t->sock >= 0) poll(&p, 1, wait_ms);
    else
      tm_sleep_ns((long)wait_ms * 1000000L);
  }
}

static void free_all(tm_transport *t) {
  tm_block_writer_free(&t->blocks);
  tm_index_free(&t->index);
  free(t->batch);
  free(t->out);
  free(t->path);
  free(t->host);
  free(t->port);
  tm_transport_init(t);
}

/* The index ends a file that is whole: not one with a gap still open (its
 * tail would be missing), nor one whose index ran out of memory; a reader
 * scans those. */
static void write_index(tm_transport *t) {
  if (!t->compress_level || t->index_lost || t->file_fd < 0 || t->file_resync) return;
  uint8_t *r = NULL;
  size_t n = tm_index_encode(&t->index, t->file_good_size, &r);
  if (n) file_write(t, r, n);
  free(r);
}

void tm_transport_close(tm_transport *t) {
  batch_write(t);
  write_index(t);
  if (t->file_fd >= 0) close(t->file_fd);
  sock_close(t);
  free_all(t);
}

void tm_transport_close_inherited(const tm_transport *t) {
  if (t->file_fd >= 0) close(t->file_fd);
  if (t->sock >= 0) close(t->sock);
}

void tm_transport_abandon(tm_transport *t) {
  t->batch_len = 0;      /* the parent's to write */
  t->compress_level = 0; /* and its index */
  tm_transport_close(t);
}
