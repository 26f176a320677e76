/* Blocks and the index (format 2): round trips, damage, a cut-short
 * capture's scan. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_frameHeaderSize */
#include <zstd.h>

#include "check.h"
#include "threadmon.pb-c.h"
#include "tmblock.h"
#include "tmwire.h"

#define BLOCKS 6
#define TICKS_PER_BLOCK 40

/* One Tick frame (seq, time_ns = seq * 10 ms, a few LWPs) at out. */
static size_t tick_frame(uint8_t *out, uint64_t seq) {
  Threadmon__LwpSample s[3];
  Threadmon__LwpSample *ps[3];
  for (int i = 0; i < 3; i++) {
    threadmon__lwp_sample__init(&s[i]);
    s[i].tid = 1000 + (uint32_t)i;
    s[i].oncpu_ns = seq * 7000000 + (uint64_t)i;
    ps[i] = &s[i];
  }
  Threadmon__Tick tick = THREADMON__TICK__INIT;
  tick.seq = seq;
  tick.time_ns = seq * 10000000;
  tick.n_lwps = 3;
  tick.lwps = ps;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TICK;
  f.tick = &tick;
  uint32_t len = (uint32_t)threadmon__frame__get_packed_size(&f);
  threadmon__frame__pack(&f, out + TM_FRAME_PREFIX_BYTES);
  tm_frame_prefix_encode(out, out + TM_FRAME_PREFIX_BYTES, len);
  return TM_FRAME_PREFIX_BYTES + len;
}

/* A format-2 capture of BLOCKS blocks of ticks, with its index unless
 * with_index is 0; *index_at gets where the index record starts. */
static size_t build_capture(uint8_t *out, int with_index, size_t *index_at) {
  static uint8_t batch[1 << 16];
  tm_block_writer w;
  tm_block_writer_init(&w, 3);
  tm_index x = {0};
  tm_header_encode_major(out, TM_FORMAT_MAJOR_BLOCKS);
  size_t off = TM_HEADER_BYTES;
  uint64_t seq = 1;
  for (int b = 0; b < BLOCKS; b++) {
    size_t n = 0;
    uint64_t first = seq * 10000000;
    for (int k = 0; k < TICKS_PER_BLOCK; k++) n += tick_frame(batch + n, seq++);
    tm_index_entry e;
    size_t r = tm_block_encode(&w, batch, n, first, (seq - 1) * 10000000, &e);
    CHECK(r > 0 && r < n);
    e.offset = off;
    tm_index_add(&x, &e);
    memcpy(out + off, w.out, r);
    off += r;
  }
  *index_at = off;
  if (with_index) {
    uint8_t *rec = NULL;
    size_t r = tm_index_encode(&x, off, &rec);
    CHECK(r > 0);
    memcpy(out + off, rec, r);
    off += r;
    free(rec);
  }
  tm_index_free(&x);
  tm_block_writer_free(&w);
  return off;
}

/* Frames decoded (ticks in order from seq 1), or -frames-1 on an error. */
/* Whether decode lends its chunks (tm_decoder_lend, each a copy freed
 * after its frames are read) rather than feeding them. */
static int lending;

static int decode(const uint8_t *data, size_t len, size_t chunk, tm_decoder *d) {
  int frames = 0;
  tm_decode_status st = TM_DECODE_NEED_MORE;
  for (size_t off = 0; off < len && st != TM_DECODE_ERROR; off += chunk) {
    size_t n = len - off < chunk ? len - off : chunk;
    uint8_t *copy = NULL;
    if (lending) {
      copy = malloc(n);
      memcpy(copy, data + off, n);
      tm_decoder_lend(d, copy, n);
    } else {
      tm_decoder_feed(d, data + off, n);
    }
    const uint8_t *p;
    uint32_t plen;
    while ((st = tm_decoder_next(d, &p, &plen)) == TM_DECODE_FRAME) {
      Threadmon__Frame *f = threadmon__frame__unpack(NULL, plen, p);
      CHECK(f && f->body_case == THREADMON__FRAME__BODY_TICK);
      if (f) CHECK(f->tick->seq == (uint64_t)frames + 1);
      if (f) CHECK(tm_frame_tick_time(p, plen) == f->tick->time_ns);
      threadmon__frame__free_unpacked(f, NULL);
      frames++;
    }
    if (copy) {
      CHECK(tm_decoder_keep(d) == 0);
      memset(copy, 0xee, n);
      free(copy);
    }
  }
  return st == TM_DECODE_ERROR ? -frames - 1 : frames;
}

static uint8_t cap[1 << 20];

static void test_blocks_round_trip_any_chunking(void) {
  size_t idx;
  size_t len = build_capture(cap, 1, &idx);
  size_t chunks[] = {1, 5, 333, 4096, len};
  for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++) {
    tm_decoder d;
    tm_decoder_init(&d);
    CHECK(decode(cap, len, chunks[i], &d) == BLOCKS * TICKS_PER_BLOCK);
    CHECK(tm_decoder_pending(&d) == 0);
    CHECK(tm_decoder_good_offset(&d) == len);
    CHECK(d.blocks == BLOCKS);
    tm_decoder_free(&d);
  }
}

/* The type of the literals of a block body's first zstd block (RFC 8878
 * 3.1.1.3.1.1: 0 raw, 1 RLE, 2 Huffman, 3 Huffman with the last table);
 * -1 when that block is not a compressed one. */
static int first_literals_type(const uint8_t *body, size_t n) {
  const uint8_t *z = body + TM_BLOCK_HEADER_BYTES;
  size_t zn = n - TM_BLOCK_HEADER_BYTES;
  size_t at = ZSTD_frameHeaderSize(z, zn);
  if (ZSTD_isError(at) || at + 4 > zn) return -1;
  uint32_t block = (uint32_t)z[at] | (uint32_t)z[at + 1] << 8 | (uint32_t)z[at + 2] << 16;
  return (block >> 1 & 3) == 2 ? z[at + 3] & 3 : -1;
}

/* A batch of ticks as the probe writes it, at the levels a user may ask
 * for: its literals are raw (what makes a reader's zstd cheaper), and a
 * plain zstd decoder of its own (no parameter set) reads it back exactly,
 * as tm_block_decompress does. */
static void test_block_literals_raw_and_read_back(void) {
  static uint8_t batch[1 << 16], back[1 << 16];
  size_t n = 0;
  for (uint64_t seq = 1; seq <= TICKS_PER_BLOCK * 4; seq++) n += tick_frame(batch + n, seq * 7919);
  int levels[] = {-1, 1, 3, 6, 19};
  for (size_t i = 0; i < sizeof levels / sizeof *levels; i++) {
    tm_block_writer w;
    tm_block_writer_init(&w, levels[i]);
    tm_index_entry e;
    size_t r = tm_block_encode(&w, batch, n, 1, 2, &e);
    CHECK(r > TM_FRAME_PREFIX_BYTES && r < n);
    if (r <= TM_FRAME_PREFIX_BYTES) continue;
    const uint8_t *body = w.out + TM_FRAME_PREFIX_BYTES;
    size_t bn = r - TM_FRAME_PREFIX_BYTES;
    CHECK(first_literals_type(body, bn) == 0);
    memset(back, 0, sizeof back);
    size_t got = ZSTD_decompress(back, sizeof back, body + TM_BLOCK_HEADER_BYTES,
                                 bn - TM_BLOCK_HEADER_BYTES);
    CHECK(got == n && memcmp(back, batch, n) == 0);
    tm_block_header h;
    CHECK(tm_block_header_parse(body, bn, &h) == 0 && h.raw_len == n);
    memset(back, 0, sizeof back);
    CHECK(tm_block_decompress(body, bn, &h, back) == 0 && memcmp(back, batch, n) == 0);
    CHECK(e.frames == TICKS_PER_BLOCK * 4);
    tm_block_writer_free(&w);
  }
}

/* Cut inside the 4th block: the first three read, the rest is pending. */
static void test_cut_block_keeps_whole_blocks(void) {
  size_t idx;
  size_t len = build_capture(cap, 0, &idx);
  (void)len;
  tm_decoder d;
  tm_decoder_init(&d);
  size_t cut = TM_HEADER_BYTES;
  for (int b = 0; b < 3; b++) {
    uint32_t n;
    memcpy(&n, cap + cut, 4);
    cut += TM_FRAME_PREFIX_BYTES + (n & ~TM_BLOCK_FLAG);
  }
  size_t whole = cut;
  cut += 40;
  CHECK(decode(cap, cut, 4096, &d) == 3 * TICKS_PER_BLOCK);
  CHECK(tm_decoder_good_offset(&d) == whole);
  CHECK(tm_decoder_pending(&d) == cut - whole);
  tm_decoder_free(&d);
}

/* A flipped byte inside a block: its checksum fails, the blocks before it
 * were read, the error names the block's offset. */
static void test_corrupt_block_is_reported(void) {
  size_t idx;
  size_t len = build_capture(cap, 1, &idx);
  uint32_t n0;
  memcpy(&n0, cap + TM_HEADER_BYTES, 4);
  size_t second = TM_HEADER_BYTES + TM_FRAME_PREFIX_BYTES + (n0 & ~TM_BLOCK_FLAG);
  cap[second + 60] ^= 0x21;
  tm_decoder d;
  tm_decoder_init(&d);
  CHECK(decode(cap, len, 4096, &d) == -TICKS_PER_BLOCK - 1);
  char want[64];
  snprintf(want, sizeof want, "block checksum mismatch at byte %zu", second);
  CHECK(strstr(tm_decoder_error(&d), want) != NULL);
  tm_decoder_free(&d);
}

/* A block whose checksum holds but whose zstd frame lies about its size
 * (a writer bug, or a forged file) is refused, not inflated. */
static void test_lying_block_is_refused(void) {
  size_t idx;
  size_t len = build_capture(cap, 0, &idx);
  uint8_t *body = cap + TM_HEADER_BYTES + TM_FRAME_PREFIX_BYTES;
  uint32_t n;
  memcpy(&n, cap + TM_HEADER_BYTES, 4);
  n &= ~TM_BLOCK_FLAG;
  body[4] ^= 1; /* raw_len off by one */
  uint32_t crc = tm_crc32c(body, n);
  memcpy(cap + TM_HEADER_BYTES + 4, &crc, 4);
  tm_decoder d;
  tm_decoder_init(&d);
  CHECK(decode(cap, len, 4096, &d) == -1);
  CHECK(strstr(tm_decoder_error(&d), "does not decompress") != NULL);
  tm_decoder_free(&d);
}

/* A reader with a frame limit (a display before the Hello) refuses a block
 * that would inflate past it, before inflating it. */
static void test_block_over_the_limit(void) {
  size_t idx;
  size_t len = build_capture(cap, 0, &idx);
  tm_decoder d;
  tm_decoder_init(&d);
  tm_decoder_set_max_frame(&d, 1024); /* a block holds 40 ticks: more than 1 KiB */
  CHECK(decode(cap, len, 4096, &d) == -1);
  CHECK(strstr(tm_decoder_error(&d), "over the 1 KiB limit") != NULL);
  CHECK(d.block_cap == 0);
  tm_decoder_free(&d);
}

/* Blocks are not part of format 1: the flag reads as an oversized frame. */
static void test_block_in_format_1_is_refused(void) {
  size_t idx;
  size_t len = build_capture(cap, 0, &idx);
  cap[8] = 1;
  tm_decoder d;
  tm_decoder_init(&d);
  CHECK(decode(cap, len, 4096, &d) == -1);
  CHECK(strstr(tm_decoder_error(&d), "limit") != NULL);
  tm_decoder_free(&d);
}

/* Half a million index records in a row, then a frame: skipped in a loop
 * (recursing once per record ran the stack out). */
static void test_many_records_in_a_row(void) {
  tm_index empty = {0};
  uint8_t *rec = NULL;
  size_t r = tm_index_encode(&empty, 0, &rec);
  CHECK(r > 0);
  size_t count = 500000;
  size_t tick = tick_frame(cap, 1); /* at cap's start, copied to the end */
  uint8_t *s = malloc(TM_HEADER_BYTES + count * r + tick);
  tm_header_encode_major(s, TM_FORMAT_MAJOR_BLOCKS);
  for (size_t i = 0; i < count; i++) memcpy(s + TM_HEADER_BYTES + i * r, rec, r);
  memcpy(s + TM_HEADER_BYTES + count * r, cap, tick);
  tm_decoder d;
  tm_decoder_init(&d);
  CHECK(decode(s, TM_HEADER_BYTES + count * r + tick, SIZE_MAX, &d) == 1);
  tm_decoder_free(&d);
  free(s);
  free(rec);
}

static int temp_file(const uint8_t *data, size_t len) {
  char path[] = "/tmp/test-tmblock-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  unlink(path);
  CHECK(write(fd, data, len) == (ssize_t)len);
  return fd;
}

static void check_index(const tm_index *x) {
  CHECK(x->n == BLOCKS);
  for (size_t i = 0; i < x->n && i < BLOCKS; i++) {
    CHECK(x->e[i].frames == TICKS_PER_BLOCK);
    CHECK(x->e[i].kinds == 1u << THREADMON__FRAME__BODY_TICK);
    CHECK(x->e[i].first_ns == (i * TICKS_PER_BLOCK + 1) * 10000000);
    CHECK(x->e[i].last_ns == (i + 1) * TICKS_PER_BLOCK * 10000000);
    if (i) CHECK(x->e[i].offset > x->e[i - 1].offset);
  }
}

static void test_index_from_tail_and_by_scan(void) {
  size_t idx;
  size_t len = build_capture(cap, 1, &idx);
  char err[128];
  int tail = -1;
  tm_index x;
  int fd = temp_file(cap, len);
  CHECK(tm_capture_index(fd, len, &x, &tail, err, sizeof err) == 0);
  CHECK(tail == 1);
  check_index(&x);
  tm_index_free(&x);
  close(fd);

  /* Without its index (cut short): the scan finds the same blocks. */
  fd = temp_file(cap, idx);
  CHECK(tm_capture_index(fd, idx, &x, &tail, err, sizeof err) == 0);
  CHECK(tail == 0);
  check_index(&x);
  tm_index_free(&x);
  close(fd);

  /* Cut inside the index: a scan again, which stops at the torn record. */
  fd = temp_file(cap, len - 3);
  CHECK(tm_capture_index(fd, len - 3, &x, &tail, err, sizeof err) == 0);
  CHECK(tail == 0);
  check_index(&x);
  tm_index_free(&x);
  close(fd);

  fd = temp_file((const uint8_t *)"hello, world, not a capture", 27);
  CHECK(tm_capture_index(fd, 27, &x, &tail, err, sizeof err) == -1);
  CHECK(strstr(err, "not a threadmon capture") != NULL);
  close(fd);
}

/* The index of cap (len bytes, its index record at idx) replaced by x's;
 * the new length. */
static size_t reindex(uint8_t *c, size_t idx, const tm_index *x) {
  uint8_t *rec = NULL;
  size_t r = tm_index_encode(x, idx, &rec);
  CHECK(r > 0);
  memcpy(c + idx, rec, r);
  free(rec);
  return idx + r;
}

/* Builds the capture into cap (with its index or not) and puts the index
 * a scan of its blocks finds in good; returns where its index starts. */
static size_t scanned_blocks(int with_index, tm_index *good) {
  size_t idx;
  build_capture(cap, with_index, &idx);
  char err[256];
  int tail = -1;
  int fd = temp_file(cap, idx);
  CHECK(tm_capture_index(fd, idx, good, &tail, err, sizeof err) == 0 && !err[0]);
  CHECK(good->n == BLOCKS);
  close(fd);
  return idx;
}

/* A forged index with good checksums is refused and the scan's used. */
static void test_forged_index_is_refused(void) {
  tm_index x, good;
  size_t idx = scanned_blocks(1, &good);
  char err[256];
  int tail = -1;
  int fd;

  /* Empty: it read as "no records to seek to" and the report read 70 MB
   * whole. */
  tm_index empty = {0};
  size_t len = reindex(cap, idx, &empty);
  fd = temp_file(cap, len);
  CHECK(tm_capture_index(fd, len, &x, &tail, err, sizeof err) == 0);
  CHECK(tail == 0 && x.n == BLOCKS);
  CHECK(strstr(err, "lists no record from byte 16") != NULL);
  tm_index_free(&x);
  close(fd);

  /* Its first record not at the header's end: the records before lost. */
  tm_index later = {good.e + 1, good.n - 1, good.n - 1};
  len = reindex(cap, idx, &later);
  fd = temp_file(cap, len);
  CHECK(tm_capture_index(fd, len, &x, &tail, err, sizeof err) == 0);
  CHECK(tail == 0 && x.n == BLOCKS && strstr(err, "lists no record") != NULL);
  tm_index_free(&x);
  close(fd);

  /* 25 hours after the one before: tens of thousands of empty windows. */
  uint64_t kept = good.e[BLOCKS - 1].last_ns;
  good.e[BLOCKS - 1].last_ns = good.e[BLOCKS - 2].last_ns + 25ull * 3600 * 1000000000;
  len = reindex(cap, idx, &good);
  fd = temp_file(cap, len);
  CHECK(tm_capture_index(fd, len, &x, &tail, err, sizeof err) == 0);
  CHECK(tail == 0 && strstr(err, "more than 24 hours after the one before") != NULL);
  tm_index_free(&x);
  close(fd);
  good.e[BLOCKS - 1].last_ns = kept;

  /* A time centuries on: billions of windows. */
  good.e[BLOCKS - 1].last_ns = 1ull << 62;
  len = reindex(cap, idx, &good);
  fd = temp_file(cap, len);
  CHECK(tm_capture_index(fd, len, &x, &tail, err, sizeof err) == 0);
  CHECK(tail == 0 && x.n == BLOCKS && strstr(err, "78 hours") != NULL);
  CHECK(x.e[BLOCKS - 1].last_ns == BLOCKS * TICKS_PER_BLOCK * 10000000ull);
  tm_index_free(&x);
  close(fd);
  tm_index_free(&good);
}

/* Sets the times in the header of the block at off, its CRC made good. */
static void forge_block_times(uint8_t *c, size_t off, uint64_t first, uint64_t last) {
  uint32_t n = tm_get_u32le(c + off) & ~TM_BLOCK_FLAG;
  uint8_t *b = c + off + TM_FRAME_PREFIX_BYTES;
  for (int i = 0; i < 8; i++) {
    b[16 + i] = (uint8_t)(first >> (8 * i));
    b[24 + i] = (uint8_t)(last >> (8 * i));
  }
  tm_put_u32le(c + off + 4, tm_crc32c(b, n));
}

/* Without an index, a block header's forged times are its own loss: the
 * others keep theirs (one far record put every record after it in the
 * last window, or made billions of windows). */
static void test_scan_distrusts_forged_header_times(void) {
  tm_index good, x;
  size_t idx = scanned_blocks(0, &good);
  char err[256];
  int tail = -1;
  int fd;
  const struct {
    size_t block;
    uint64_t first, last;
  } forged[] = {{2, 1ull << 62, 1ull << 62},
                {0, 1ull << 60, 1ull << 60},
                {3, 1, 2},
                {4, 30000000000ull, 20000000000ull},
                /* more than a day on: after the others, or inside itself */
                {5, 100000000000000ull, 100000000000000ull},
                {5, 3000000000ull, 100000000000000ull}};
  for (size_t f = 0; f < sizeof forged / sizeof forged[0]; f++) {
    build_capture(cap, 0, &idx);
    forge_block_times(cap, good.e[forged[f].block].offset, forged[f].first, forged[f].last);
    fd = temp_file(cap, idx);
    CHECK(tm_capture_index(fd, idx, &x, &tail, err, sizeof err) == 0);
    CHECK(x.n == BLOCKS && strstr(err, "1 block headers' times") != NULL);
    for (size_t i = 0; i < x.n && i < BLOCKS; i++) {
      int lost = i == forged[f].block;
      CHECK(x.e[i].first_ns == (lost ? 0 : good.e[i].first_ns));
      CHECK(x.e[i].last_ns == (lost ? 0 : good.e[i].last_ns));
    }
    tm_index_free(&x);
    close(fd);
  }
  tm_index_free(&good);
}

/* A run of plain frames is one record of a scan (a file of empty frames
 * cost 48 bytes of index per 8 of file). */
static void test_scan_takes_plain_runs_as_one(void) {
  size_t len = TM_HEADER_BYTES, frames = 20000;
  uint8_t *c = malloc(TM_HEADER_BYTES + frames * TM_FRAME_PREFIX_BYTES + 64);
  tm_header_encode_major(c, TM_FORMAT_MAJOR_BLOCKS);
  for (size_t i = 0; i < frames; i++, len += TM_FRAME_PREFIX_BYTES)
    tm_frame_prefix_encode(c + len, c, 0);
  char err[256];
  int tail = -1;
  tm_index x;
  int fd = temp_file(c, len);
  CHECK(tm_capture_index(fd, len, &x, &tail, err, sizeof err) == 0);
  CHECK(x.n == 1 && x.e[0].frames == frames && x.e[0].offset == TM_HEADER_BYTES);
  tm_index_free(&x);
  close(fd);
  free(c);
}

/* A capture of plain frames (format 1: no index) is cut by a scan into
 * records of about TM_SCAN_PLAIN_RECORD_BYTES, each beginning at a Tick and
 * timed by its Ticks, so that it is read a window at a time. */
static void test_scan_cuts_plain_frames_at_ticks(void) {
  enum { PAIRS = 700, FILLER = 4000 };
  uint8_t *c = calloc(1, TM_HEADER_BYTES + PAIRS * (512 + TM_FRAME_PREFIX_BYTES + FILLER));
  tm_header_encode(c);
  size_t len = TM_HEADER_BYTES;
  for (uint64_t seq = 1; seq <= PAIRS; seq++) {
    len += tick_frame(c + len, seq);
    tm_frame_prefix_encode(c + len, c + len + TM_FRAME_PREFIX_BYTES, FILLER);
    len += TM_FRAME_PREFIX_BYTES + FILLER;
  }
  char err[256];
  int tail = -1;
  tm_index x;
  int fd = temp_file(c, len);
  CHECK(tm_capture_index(fd, len, &x, &tail, err, sizeof err) == 0);
  CHECK(tail == 0 && err[0] == '\0');
  CHECK(x.n == (len - TM_HEADER_BYTES) / TM_SCAN_PLAIN_RECORD_BYTES + 1);
  uint64_t frames = 0;
  for (size_t i = 0; i < x.n; i++) {
    const uint8_t *p = c + x.e[i].offset + TM_FRAME_PREFIX_BYTES;
    CHECK(x.e[i].first_ns == tm_frame_tick_time(p, 64)); /* begins at its first Tick */
    CHECK(x.e[i].first_ns && x.e[i].last_ns > x.e[i].first_ns);
    if (i) CHECK(x.e[i].first_ns == x.e[i - 1].last_ns + 10000000);
    uint64_t end = i + 1 < x.n ? x.e[i + 1].offset : len;
    if (i + 1 < x.n) CHECK(end - x.e[i].offset >= TM_SCAN_PLAIN_RECORD_BYTES);
    CHECK(end - x.e[i].offset < TM_SCAN_PLAIN_RECORD_BYTES + 2 * (FILLER + 512));
    frames += x.e[i].frames;
  }
  CHECK(frames == 2 * PAIRS);
  CHECK(x.e[x.n - 1].last_ns == PAIRS * 10000000ull);
  tm_index_free(&x);
  close(fd);
  free(c);
}

int main(void) {
  for (lending = 0; lending < 2; lending++) {
    test_blocks_round_trip_any_chunking();
    test_cut_block_keeps_whole_blocks();
    test_corrupt_block_is_reported();
    test_lying_block_is_refused();
    test_block_over_the_limit();
    test_block_in_format_1_is_refused();
  }
  test_block_literals_raw_and_read_back();
  test_index_from_tail_and_by_scan();
  test_many_records_in_a_row();
  test_forged_index_is_refused();
  test_scan_distrusts_forged_header_times();
  test_scan_takes_plain_runs_as_one();
  test_scan_cuts_plain_frames_at_ticks();
  if (failures) fprintf(stderr, "%d checks failed\n", failures);
  return failures ? 1 : 0;
}
