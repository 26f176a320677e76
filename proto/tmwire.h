/* tmwire: the framing of threadmon streams and capture files.
 *
 * Layout (docs/format.md):
 *   header  16 bytes: magic "TMCAP\r\n\x1a", u16 LE format major, u16 LE
 *           format minor, u32 LE flags (0)
 *   frame   u32 LE payload length, u32 LE CRC-32C of the payload, payload
 *           (one threadmon.Frame protobuf message)
 *   block   (format major 2 only) zstd-compressed frames, tmblock.h; the
 *           decoder returns their frames one by one like plain ones
 *
 * The decoder is incremental: feed it bytes as they arrive (socket or file)
 * and pull whole, checked frames out. It never allocates more than
 * TM_MAX_FRAME_BYTES plus what was fed and not yet consumed.
 */
#ifndef TMWIRE_H
#define TMWIRE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TM_MAGIC "TMCAP\r\n\x1a"
#define TM_MAGIC_BYTES 8
#define TM_HEADER_BYTES 16
#define TM_FRAME_PREFIX_BYTES 8
#define TM_FORMAT_MAJOR 1
#define TM_FORMAT_MINOR 0
#define TM_PROTOCOL_VERSION 1
#define TM_MAX_FRAME_BYTES (16u * 1024u * 1024u)
/* A display reads at most this much of a first frame (the Hello) before the
 * token is checked: a stranger must not make it hold 16 MiB. Probes keep
 * their Hello well under it. */
#define TM_MAX_HELLO_BYTES (64u * 1024u)

uint32_t tm_crc32c(const void *data, size_t len);

/* The format's integers are little-endian (tmwire.c, tmdecode.c, tmblock.c). */
static inline void tm_put_u32le(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t tm_get_u32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Writes the 16-byte stream/capture header (format major 1). */
void tm_header_encode(uint8_t out[TM_HEADER_BYTES]);
/* The same for another format major (2: captures with blocks, tmblock.h). */
void tm_header_encode_major(uint8_t out[TM_HEADER_BYTES], uint16_t major);

/* Writes the 8-byte prefix (length, CRC) for a payload. */
void tm_frame_prefix_encode(uint8_t out[TM_FRAME_PREFIX_BYTES],
                            const uint8_t *payload, uint32_t len);

typedef enum tm_decode_status {
  TM_DECODE_NEED_MORE = 0, /* no whole frame buffered yet */
  TM_DECODE_FRAME = 1,     /* payload and len point at a checked frame */
  TM_DECODE_ERROR = -1,    /* stream is damaged; see tm_decoder_error() */
} tm_decode_status;

typedef struct tm_decoder {
  uint8_t *buf;
  size_t len;       /* bytes buffered */
  size_t pos;       /* start of the next unread byte in buf */
  size_t cap;
  uint64_t offset;  /* stream offset of buf[pos] */
  uint64_t frames;  /* frames returned so far */
  int header_done;
  int failed;
  uint16_t format_major, format_minor;
  uint32_t max_frame; /* 0: TM_MAX_FRAME_BYTES */
  /* Format major 2: the frames of the block being read (tmblock.h). */
  int in_block;
  uint8_t *block;
  size_t block_len, block_pos, block_cap;
  uint64_t block_end;    /* stream offset just past the block's record */
  uint64_t blocks;       /* blocks read */
  uint64_t block_bytes;  /* their bytes in the stream, prefixes included */
  uint64_t block_raw;    /* the frames' bytes they held */
  void *zstd;            /* a ZSTD_DCtx made at the first block, reused for each */
  /* Bytes lent by tm_decoder_lend, read in place once buf is drained. */
  const uint8_t *lent;
  size_t lent_len, lent_pos;
  char error[160];
} tm_decoder;

void tm_decoder_init(tm_decoder *d);
void tm_decoder_free(tm_decoder *d);

/* A frame announcing more than max bytes is an error as soon as its prefix
 * arrives (0: TM_MAX_FRAME_BYTES, the most there is). */
void tm_decoder_set_max_frame(tm_decoder *d, uint32_t max);

/* Appends bytes. Returns 0, or -1 when out of memory (the decoder then fails). */
int tm_decoder_feed(tm_decoder *d, const void *data, size_t len);

/* Like tm_decoder_feed, without copying: the records wholly inside data
 * are read where they are, and only the bytes of a record cut by data's
 * end (or start) are copied. data must stay valid and unchanged until
 * tm_decoder_next returns TM_DECODE_NEED_MORE (every byte of it is read
 * or copied by then) or tm_decoder_keep is called. */
int tm_decoder_lend(tm_decoder *d, const void *data, size_t len);

/* Copies what is left of the lent bytes, which the caller may then free.
 * Returns 0, or -1 when out of memory (the decoder then fails). */
int tm_decoder_keep(tm_decoder *d);

/* Pulls the next frame. The pointer stays valid until the next feed/next
 * call (and while lent bytes are). */
tm_decode_status tm_decoder_next(tm_decoder *d, const uint8_t **payload,
                                 uint32_t *len);

/* One line saying what is wrong and at which byte offset; "" if nothing. */
const char *tm_decoder_error(const tm_decoder *d);

/* Offset just past the last whole frame returned (where good data ends);
 * inside a block, the block's start until its last frame is returned. */
uint64_t tm_decoder_good_offset(const tm_decoder *d);

/* Bytes fed but not yet part of a returned frame (a truncated tail when the
 * input has ended). */
size_t tm_decoder_pending(const tm_decoder *d);

#ifdef __cplusplus
}
#endif

#endif
