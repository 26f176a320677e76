/* The incremental frame decoder (tmwire.h): plain frames and, in format 2
 * captures, the frames of zstd blocks (tmblock.h). Apart from tmwire.c's
 * framing, so that the two layers include one way: tmwire <- tmblock <-
 * tmdecode. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "tmblock.h"
#include "tmwire.h"

void tm_decoder_init(tm_decoder *d) { memset(d, 0, sizeof *d); }

void tm_decoder_set_max_frame(tm_decoder *d, uint32_t max) {
  d->max_frame = max && max < TM_MAX_FRAME_BYTES ? max : 0;
}

void tm_decoder_free(tm_decoder *d) {
  free(d->buf);
  free(d->block);
  ZSTD_freeDCtx((ZSTD_DCtx *)d->zstd);
  memset(d, 0, sizeof *d);
}

static tm_decode_status fail(tm_decoder *d, const char *what) {
  d->failed = 1;
  snprintf(d->error, sizeof d->error, "%s at byte %llu (after %llu frames)",
           what, (unsigned long long)d->offset, (unsigned long long)d->frames);
  return TM_DECODE_ERROR;
}

/* Appends len bytes to buf. Returns 0, or -1 after fail. */
static int buffer(tm_decoder *d, const uint8_t *data, size_t len) {
  if (d->pos > 0 && (d->pos == d->len || d->pos > d->cap / 2)) {
    memmove(d->buf, d->buf + d->pos, d->len - d->pos);
    d->len -= d->pos;
    d->pos = 0;
  }
  if (d->len + len > d->cap) {
    size_t cap = d->cap ? d->cap : 65536;
    while (cap < d->len + len) cap *= 2;
    uint8_t *nb = realloc(d->buf, cap);
    if (!nb) {
      fail(d, "out of memory");
      return -1;
    }
    d->buf = nb;
    d->cap = cap;
  }
  memcpy(d->buf + d->len, data, len);
  d->len += len;
  return 0;
}

int tm_decoder_keep(tm_decoder *d) {
  size_t rest = d->lent_len - d->lent_pos;
  const uint8_t *from = rest ? d->lent + d->lent_pos : NULL; /* lent may be NULL */
  d->lent = NULL;
  d->lent_len = d->lent_pos = 0;
  return rest ? buffer(d, from, rest) : 0;
}

int tm_decoder_feed(tm_decoder *d, const void *data, size_t len) {
  if (d->failed) return -1;
  /* Nothing to copy: before the first bytes buf is NULL, and NULL + 0 is
   * undefined behaviour in C. */
  if (len == 0) return 0;
  if (tm_decoder_keep(d) != 0) return -1; /* the lent bytes come first */
  return buffer(d, data, len);
}

int tm_decoder_lend(tm_decoder *d, const void *data, size_t len) {
  if (d->failed) return -1;
  if (len == 0) return 0;
  if (tm_decoder_keep(d) != 0) return -1;
  d->lent = data;
  d->lent_len = len;
  d->lent_pos = 0;
  return 0;
}

/* The bytes to read next: the buffered ones while there are any, then the
 * lent ones in place. Their number, 0 for none. */
static size_t view(const tm_decoder *d, const uint8_t **p) {
  if (d->pos < d->len) {
    *p = d->buf + d->pos;
    return d->len - d->pos;
  }
  if (d->lent_pos < d->lent_len) {
    *p = d->lent + d->lent_pos;
    return d->lent_len - d->lent_pos;
  }
  return 0;
}

/* The n bytes at the start of view() are read. */
static void step(tm_decoder *d, size_t n) {
  if (d->pos < d->len)
    d->pos += n;
  else
    d->lent_pos += n;
}

/* view() holds fewer than want bytes of the next record: those in buf are
 * topped up from the lent ones, or the lent ones left (the record cut by
 * their end) copied into buf. Returns 1 when view() then holds more, 0 when
 * there are no more (every lent byte copied), -1 after fail. */
static int gather(tm_decoder *d, size_t want) {
  size_t rest = d->lent_len - d->lent_pos;
  if (rest == 0) return 0;
  if (d->pos < d->len) {
    size_t have = d->len - d->pos;
    size_t take = want - have < rest ? want - have : rest;
    if (buffer(d, d->lent + d->lent_pos, take) != 0) return -1;
    d->lent_pos += take;
    return 1;
  }
  return tm_decoder_keep(d) != 0 ? -1 : 0;
}

static tm_decode_status check_length(tm_decoder *d, uint32_t n) {
  uint32_t max = d->max_frame ? d->max_frame : TM_MAX_FRAME_BYTES;
  if (n <= max) return TM_DECODE_FRAME;
  char msg[80];
  if (max % (1u << 20) == 0)
    snprintf(msg, sizeof msg, "frame length %u over the %u MiB limit", n, max >> 20);
  else
    snprintf(msg, sizeof msg, "frame length %u over the %u KiB limit", n, max >> 10);
  return fail(d, msg);
}

/* The next frame of the open block (one is left): checked like a plain
 * frame, and it must end inside the block. */
static tm_decode_status next_in_block(tm_decoder *d, const uint8_t **payload, uint32_t *len) {
  const uint8_t *p = d->block + d->block_pos;
  size_t avail = d->block_len - d->block_pos;
  if (avail < TM_FRAME_PREFIX_BYTES) return fail(d, "block ends inside a frame");
  uint32_t n = tm_get_u32le(p);
  tm_decode_status st = check_length(d, n);
  if (st != TM_DECODE_FRAME) return st;
  if (avail - TM_FRAME_PREFIX_BYTES < n) return fail(d, "block ends inside a frame");
  if (tm_crc32c(p + TM_FRAME_PREFIX_BYTES, n) != tm_get_u32le(p + 4))
    return fail(d, "frame checksum mismatch in block");
  *payload = p + TM_FRAME_PREFIX_BYTES;
  *len = n;
  d->block_pos += TM_FRAME_PREFIX_BYTES + n;
  d->frames++;
  return TM_DECODE_FRAME;
}

/* A whole block record is buffered at body (n bytes after the prefix). Its
 * frames are inflated into a buffer of their own, so the stream buffer can
 * move on; an index record is only skipped. Returns 0, or -1 after fail. */
static int open_block(tm_decoder *d, const uint8_t *body, uint32_t n) {
  if (tm_crc32c(body, n) != tm_get_u32le(body - 4)) return fail(d, "block checksum mismatch"), -1;
  uint64_t end = d->offset + TM_FRAME_PREFIX_BYTES + n;
  step(d, TM_FRAME_PREFIX_BYTES + n); /* the record stays where it is until the next feed */
  if (n > 0 && body[0] == TM_BLOCK_INDEX) {
    d->offset = end;
    return 0;
  }
  tm_block_header h;
  if (tm_block_header_parse(body, n, &h) != 0) return fail(d, "malformed block header"), -1;
  /* Inflated, a block is held whole: under the frame limit too (a display
   * waiting for a stranger's Hello holds at most 64 KiB of it). */
  uint32_t max = d->max_frame ? d->max_frame : TM_MAX_FRAME_BYTES;
  if (h.raw_len > max) {
    char msg[96];
    snprintf(msg, sizeof msg, "block of %u bytes of frames over the %u KiB limit", h.raw_len,
             max >> 10);
    return fail(d, msg), -1;
  }
  /* The zstd frame states its size: a lie is refused before the buffer
   * grows to it (tm_block_decompress checks it again). */
  if (n < TM_BLOCK_HEADER_BYTES ||
      ZSTD_getFrameContentSize(body + TM_BLOCK_HEADER_BYTES, n - TM_BLOCK_HEADER_BYTES) !=
          h.raw_len)
    return fail(d, "block does not decompress"), -1;
  if (h.raw_len > d->block_cap) {
    uint8_t *b = realloc(d->block, h.raw_len);
    if (!b) return fail(d, "out of memory"), -1;
    d->block = b;
    d->block_cap = h.raw_len;
  }
  /* Without a context of its own (out of memory) each block makes one. */
  if (!d->zstd) d->zstd = ZSTD_createDCtx();
  if (tm_block_decompress_with(d->zstd, body, n, &h, d->block) != 0)
    return fail(d, "block does not decompress"), -1;
  d->in_block = 1;
  d->block_len = h.raw_len;
  d->block_pos = 0;
  d->block_end = end;
  d->blocks++;
  d->block_bytes += TM_FRAME_PREFIX_BYTES + n;
  d->block_raw += h.raw_len;
  return 0;
}

/* Reads the header once it is whole. Returns 1 when read, 0 for more
 * bytes, -1 after fail. */
static int read_header(tm_decoder *d, const uint8_t *p, size_t avail) {
  size_t n = avail < TM_MAGIC_BYTES ? avail : TM_MAGIC_BYTES;
  if (memcmp(p, TM_MAGIC, n) != 0) return fail(d, "not a threadmon stream (bad magic)"), -1;
  if (avail < TM_HEADER_BYTES) return 0;
  d->format_major = (uint16_t)(p[8] | p[9] << 8);
  d->format_minor = (uint16_t)(p[10] | p[11] << 8);
  if (d->format_major < TM_FORMAT_MAJOR || d->format_major > TM_FORMAT_MAJOR_BLOCKS) {
    char msg[96];
    snprintf(msg, sizeof msg, "unsupported format version %u.%u (this reader: %u.x to %u.x)",
             d->format_major, d->format_minor, TM_FORMAT_MAJOR, TM_FORMAT_MAJOR_BLOCKS);
    return fail(d, msg), -1;
  }
  d->header_done = 1;
  step(d, TM_HEADER_BYTES);
  d->offset += TM_HEADER_BYTES;
  return 1;
}

/* A loop, not recursion: a file of a million empty blocks or index records
 * in a row must not run the stack out. */
tm_decode_status tm_decoder_next(tm_decoder *d, const uint8_t **payload,
                                 uint32_t *len) {
  for (;;) {
    if (d->failed) return TM_DECODE_ERROR;
    if (d->in_block) {
      if (d->block_pos < d->block_len) return next_in_block(d, payload, len);
      d->in_block = 0; /* past its last frame: the block's record is done */
      d->offset = d->block_end;
    }
    const uint8_t *p = NULL;
    size_t avail = view(d, &p);
    if (avail == 0) return TM_DECODE_NEED_MORE; /* buf may still be NULL */
    size_t want = TM_HEADER_BYTES;
    if (!d->header_done) {
      int r = read_header(d, p, avail);
      if (r < 0) return TM_DECODE_ERROR;
      if (r > 0) continue;
    } else if (avail >= TM_FRAME_PREFIX_BYTES) {
      uint32_t n = tm_get_u32le(p);
      const int block = (n & TM_BLOCK_FLAG) && d->format_major >= TM_FORMAT_MAJOR_BLOCKS;
      if (block) n &= ~TM_BLOCK_FLAG;
      tm_decode_status st = check_length(d, n);
      if (st != TM_DECODE_FRAME) return st;
      want = TM_FRAME_PREFIX_BYTES + (size_t)n;
      if (avail >= want) {
        if (block) {
          if (open_block(d, p + TM_FRAME_PREFIX_BYTES, n) != 0) return TM_DECODE_ERROR;
          continue;
        }
        if (tm_crc32c(p + TM_FRAME_PREFIX_BYTES, n) != tm_get_u32le(p + 4))
          return fail(d, "frame checksum mismatch");
        *payload = p + TM_FRAME_PREFIX_BYTES;
        *len = n;
        step(d, want);
        d->offset += want;
        d->frames++;
        return TM_DECODE_FRAME;
      }
    } else {
      want = TM_FRAME_PREFIX_BYTES;
    }
    /* The header, a prefix or a record is not whole in view(). */
    int more = gather(d, want);
    if (more < 0) return TM_DECODE_ERROR;
    if (more == 0) return TM_DECODE_NEED_MORE;
  }
}

size_t tm_decoder_pending(const tm_decoder *d) {
  return d->len - d->pos + (d->lent_len - d->lent_pos);
}

const char *tm_decoder_error(const tm_decoder *d) { return d->error; }

uint64_t tm_decoder_good_offset(const tm_decoder *d) { return d->offset; }

