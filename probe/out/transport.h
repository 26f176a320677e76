/* Where frames go: a capture file (whole frames per write: one frame, or
 * a tick's worth gathered between batch_begin and batch_end) and/or a TCP
 * or Unix socket peer (non-blocking, bounded buffer, reconnects until the
 * display refuses the session or a dozen attempts in a row fail; a Unix
 * socket whose listener is another user gets nothing at all).
 *
 * Used by one thread at a time: the sampler while it runs, then the thread
 * that stops it (exit, exec). Program threads never wait on it. */
#ifndef THREADMON_TRANSPORT_H
#define THREADMON_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tmblock.h"

enum { TM_TO_FILE = 1, TM_TO_NET = 2, TM_TO_ALL = 3 };

enum tm_net_state {
  TM_NET_OFF,        /* no peer configured */
  TM_NET_WAITING,    /* next connect attempt at retry_at_ns */
  TM_NET_CONNECTING, /* non-blocking connect in progress */
  TM_NET_CONNECTED,
  TM_NET_GAVE_UP,    /* attempts failed too often */
  TM_NET_REFUSED,    /* the display refused this session (refusal says why) */
};

/* The display's answer is one small frame; a larger one is skipped. */
#define TM_REPLY_BYTES 1024

typedef struct tm_transport {
  /* capture file */
  int file_fd;
  dev_t file_dev;
  ino_t file_ino;
  char *path;
  uint64_t bytes_written;
  uint8_t *batch;      /* frames gathered for one write while batching */
  size_t batch_len, batch_cap;
  uint64_t batch_since_ns; /* when the oldest gathered frame was sent */
  bool batching;
  uint64_t file_good_size;  /* bytes of whole frames in the file */
  bool file_resync;         /* a gap is open: write nothing until resynced */
  bool file_resync_queued;  /* this batch starts with the resync */
  uint64_t file_retry_ns, file_gap_start_ns, file_gap_bytes;
  uint64_t file_ok_ns;      /* when the last write succeeded whole */
  int file_gap_errno;
  unsigned file_gaps, file_replaced; /* closed gaps; descriptor taken over */
  bool file_lost;                    /* descriptor taken; reopen at the next resync */
  unsigned file_replaced_noted;      /* file_replaced the session has said so for */
  /* What the file lost, for the launcher's line (tm_transport_file_loss):
   * the closed gaps' time, every gap's frames' bytes, the first gap's start
   * and cause, why the file could not be reopened last. */
  uint64_t file_lost_ns, file_lost_bytes, file_first_gap_ns;
  int file_first_gap_errno, file_reopen_errno;
  int compress_level;  /* zstd level of the file's blocks; 0: plain frames (format 1) */
  tm_block_writer blocks;
  tm_index index;      /* every whole record in the file, written at its end */
  bool index_lost;     /* out of memory for it: the file ends without one */
  /* TCP */
  enum tm_net_state net;
  char *host, *port;
  int sock;
  uint8_t *out;
  size_t out_len, out_sent, out_cap, out_limit;
  bool ever_connected;
  bool needs_preamble; /* a reconnection: the session must resend Hello etc. */
  unsigned attempts;
  int last_errno;      /* why the latest attempt failed */
  bool welcomed;       /* the display accepted this connection's Hello */
  char refusal[160];   /* TM_NET_REFUSED: the display's text, or why the peer is untrusted */
  bool untrusted;      /* refused by us: a Unix socket's listener is another user */
  uint8_t reply[TM_REPLY_BYTES]; /* the display's answer, as it arrives */
  size_t reply_len;
  uint32_t reply_skip; /* bytes left of a frame too large to be an answer */
  uint64_t connect_started_ns, retry_at_ns, backoff_ns;
  uint64_t bytes_sent;
  uint64_t frames_dropped;
} tm_transport;

void tm_transport_init(tm_transport *t);

/* Everything the capture file lost (closed gaps and one still open at
 * now_ns): their time, their frames' bytes, the first one's start and
 * cause. False when nothing was lost. */
typedef struct tm_file_loss {
  uint64_t lost_ns, bytes, first_ns;
  int first_errno, reopen_errno;
} tm_file_loss;
bool tm_transport_file_loss(const tm_transport *t, uint64_t now_ns, tm_file_loss *out);
/* Creates (truncates) the capture file and writes the stream header: format
 * 2 (batches as zstd blocks, an index at the end) when compress_level is set
 * first, else format 1.
 * Returns -1 with errno set on failure. */
int tm_transport_open_file(tm_transport *t, const char *path);
/* Whether the capture's descriptor still names its file; reopens it (and
 * opens a gap) if the program took it. Every write checks too; the tick
 * checks first so that the gap's resync goes out in the same tick (a
 * program that takes the descriptor and exits at once keeps its end). */
void tm_transport_check_file(tm_transport *t);
/* Configures the peer; the first connect happens in tm_transport_pump. The
 * stream header is queued at once so frames sent before the connection
 * completes reach the peer in order. */
int tm_transport_set_peer(tm_transport *t, const char *host, const char *port,
                          size_t limit);

/* Sends one whole frame (prefix + payload). */
void tm_transport_send(tm_transport *t, const uint8_t *frame, size_t len, int to);

/* Frames sent between batch_begin and batch_end are gathered for the
 * capture file, and written in one call about every 50 ms (or at once with
 * force): each write to a file also updates its times, and a tick has
 * several frames. A frame sent outside a batch writes what was gathered
 * first, so order holds. */
void tm_transport_batch_begin(tm_transport *t, uint64_t now_ns);
void tm_transport_batch_end(tm_transport *t, uint64_t now_ns, bool force);

/* A capture-file gap is open and may close now (last: the session's final
 * batch, whenever): the caller queues the resync (to TM_TO_FILE, first in
 * this batch), then calls _queued. */
bool tm_transport_file_wants_resync(const tm_transport *t, uint64_t now_ns, bool last);
void tm_transport_file_resync_queued(tm_transport *t);

/* Makes progress on the network side without blocking. Returns true when
 * a new connection was just made after a lost one; needs_preamble then
 * stays set until the caller has sent the session preamble (Hello,
 * descriptions) with TM_TO_NET, before any other frame. */
bool tm_transport_pump(tm_transport *t, uint64_t now_ns);

/* Waits, at most timeout_ms, until the queue to the peer can take len more
 * bytes (the peer reads again): for the session's last frame, which must not
 * be dropped silently while a peer that is still reading would take it.
 * Only at the program's end (it waits). True when there is room, or no
 * peer to queue for. */
bool tm_transport_make_room(tm_transport *t, size_t len, int timeout_ms);
/* Waits at most timeout_ms for queued network bytes to leave, and then
 * (at most 300 ms more) for the display's answer, so that a short session
 * still learns it was refused. */
void tm_transport_flush(tm_transport *t, int timeout_ms);

void tm_transport_close(tm_transport *t);
/* In a fork child: drops the inherited descriptors and buffers unsent. */
void tm_transport_abandon(tm_transport *t);
/* In a fork child that never sends (THREADMON_FOLLOW=0): closes the
 * inherited descriptors and writes nothing else (each page the parent
 * wrote would be copied at the child's first write; t is left unusable).
 * The socket must close in the child too, or the display would not see
 * the parent's session end while the child lives. */
void tm_transport_close_inherited(const tm_transport *t);

#endif
