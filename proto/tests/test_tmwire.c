/* Round trips and damage handling of the frame codec. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "threadmon.pb-c.h"
#include "tmwire.h"

#include "check.h"

/* A stream of n Hello frames whose pid is the frame index. */
static size_t build_stream(uint8_t *out, int n) {
  size_t off = 0;
  tm_header_encode(out);
  off += TM_HEADER_BYTES;
  for (int i = 0; i < n; i++) {
    Threadmon__Hello hello = THREADMON__HELLO__INIT;
    hello.pid = (uint32_t)i + 100;
    hello.exe = "/bin/workload";
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_HELLO;
    f.hello = &hello;
    uint32_t len = (uint32_t)threadmon__frame__get_packed_size(&f);
    threadmon__frame__pack(&f, out + off + TM_FRAME_PREFIX_BYTES);
    tm_frame_prefix_encode(out + off, out + off + TM_FRAME_PREFIX_BYTES, len);
    off += TM_FRAME_PREFIX_BYTES + len;
  }
  return off;
}

/* Whether decode_all lends its chunks (tm_decoder_lend) rather than
 * feeding copies: each test runs both ways. */
static int lending;

/* A lent chunk: a copy of its own, scribbled over and freed once its
 * frames are read, as a reader's buffer goes. */
static uint8_t *lend_copy(tm_decoder *d, const uint8_t *data, size_t n) {
  uint8_t *copy = malloc(n ? n : 1);
  memcpy(copy, data, n);
  tm_decoder_lend(d, copy, n);
  return copy;
}

static void give_back(tm_decoder *d, uint8_t *copy, size_t n) {
  CHECK(tm_decoder_keep(d) == 0);
  memset(copy, 0xee, n);
  free(copy);
}

static int decode_all(const uint8_t *data, size_t len, size_t chunk, tm_decoder *d) {
  int frames = 0;
  for (size_t off = 0; off < len; off += chunk) {
    size_t n = len - off < chunk ? len - off : chunk;
    uint8_t *copy = NULL;
    if (lending)
      copy = lend_copy(d, data + off, n);
    else
      tm_decoder_feed(d, data + off, n);
    const uint8_t *p;
    uint32_t plen;
    tm_decode_status st;
    while ((st = tm_decoder_next(d, &p, &plen)) == TM_DECODE_FRAME) {
      Threadmon__Frame *f = threadmon__frame__unpack(NULL, plen, p);
      CHECK(f != NULL);
      if (f) {
        CHECK(f->body_case == THREADMON__FRAME__BODY_HELLO);
        CHECK(f->hello->pid == (uint32_t)frames + 100);
        threadmon__frame__free_unpacked(f, NULL);
      }
      frames++;
    }
    if (copy) give_back(d, copy, n);
    if (st == TM_DECODE_ERROR) return -frames - 1;
  }
  return frames;
}

/* CRC-32C bit by bit: what the table and the SSE4.2 instruction must give. */
static uint32_t crc_bitwise(const uint8_t *p, size_t len) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < len; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
  }
  return c ^ 0xFFFFFFFFu;
}

static void test_crc_known_value(void) {
  /* The CRC-32C check value from RFC 3720. */
  CHECK(tm_crc32c("123456789", 9) == 0xE3069283u);
  /* Every length and alignment around the 8-byte steps. */
  static uint8_t buf[4200];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
  for (size_t off = 0; off < 8; off++)
    for (size_t len = 0; len < 70; len++) CHECK(tm_crc32c(buf + off, len) == crc_bitwise(buf + off, len));
  CHECK(tm_crc32c(buf + 3, 4100) == crc_bitwise(buf + 3, 4100));
}

static void test_round_trip_any_chunking(void) {
  static uint8_t buf[1 << 16];
  size_t len = build_stream(buf, 50);
  size_t chunks[] = {1, 3, 7, 64, 4096, len};
  for (size_t i = 0; i < sizeof chunks / sizeof *chunks; i++) {
    tm_decoder d;
    tm_decoder_init(&d);
    CHECK(decode_all(buf, len, chunks[i], &d) == 50);
    CHECK(tm_decoder_pending(&d) == 0);
    CHECK(tm_decoder_good_offset(&d) == len);
    tm_decoder_free(&d);
  }
}

static void test_truncated_tail_keeps_whole_frames(void) {
  static uint8_t buf[1 << 16];
  size_t len = build_stream(buf, 10);
  tm_decoder d;
  tm_decoder_init(&d);
  CHECK(decode_all(buf, len - 5, 4096, &d) == 9);
  CHECK(tm_decoder_pending(&d) > 0);
  CHECK(tm_decoder_good_offset(&d) < len - 5);
  tm_decoder_free(&d);
}

static void test_corrupt_byte_is_reported_with_offset(void) {
  static uint8_t buf[1 << 16];
  size_t len = build_stream(buf, 10);
  buf[len - 3] ^= 0x40;
  tm_decoder d;
  tm_decoder_init(&d);
  CHECK(decode_all(buf, len, 4096, &d) == -10);
  CHECK(strstr(tm_decoder_error(&d), "checksum") != NULL);
  CHECK(strstr(tm_decoder_error(&d), "after 9 frames") != NULL);
  tm_decoder_free(&d);
}

static void test_bad_magic_and_version(void) {
  tm_decoder d;
  tm_decoder_init(&d);
  CHECK(decode_all((const uint8_t *)"GET / HTTP/1.1\r\n", 16, 16, &d) == -1);
  CHECK(strstr(tm_decoder_error(&d), "magic") != NULL);
  tm_decoder_free(&d);

  uint8_t hdr[TM_HEADER_BYTES];
  tm_header_encode(hdr);
  hdr[8] = 99;
  tm_decoder_init(&d);
  CHECK(decode_all(hdr, sizeof hdr, 16, &d) == -1);
  CHECK(strstr(tm_decoder_error(&d), "version 99") != NULL);
  tm_decoder_free(&d);
}

static void test_oversized_frame_is_refused_before_buffering(void) {
  uint8_t buf[TM_HEADER_BYTES + 8];
  tm_header_encode(buf);
  uint32_t huge = TM_MAX_FRAME_BYTES + 1;
  memcpy(buf + TM_HEADER_BYTES, &huge, 4); /* little-endian host */
  memset(buf + TM_HEADER_BYTES + 4, 0, 4);
  tm_decoder d;
  tm_decoder_init(&d);
  CHECK(decode_all(buf, sizeof buf, sizeof buf, &d) == -1);
  CHECK(strstr(tm_decoder_error(&d), "limit") != NULL);
  tm_decoder_free(&d);
}

/* Empty reads (a socket's, a fuzzer's) before any byte came. */
static void test_empty_feed_before_any_bytes(void) {
  tm_decoder d;
  tm_decoder_init(&d);
  const uint8_t *payload = NULL;
  uint32_t len = 0;
  CHECK(tm_decoder_next(&d, &payload, &len) == TM_DECODE_NEED_MORE);
  CHECK(tm_decoder_feed(&d, NULL, 0) == 0);
  CHECK(tm_decoder_next(&d, &payload, &len) == TM_DECODE_NEED_MORE);
  CHECK(tm_decoder_pending(&d) == 0);
  tm_decoder_free(&d);
}

/* A reader that stops taking frames in the middle of a lent chunk keeps
 * the rest, and goes on with the next chunk as if it had read them all. */
static void test_lent_chunk_left_midway(void) {
  static uint8_t buf[1 << 16];
  size_t len = build_stream(buf, 20);
  size_t half = len / 2;
  tm_decoder d;
  tm_decoder_init(&d);
  uint8_t *copy = lend_copy(&d, buf, half);
  const uint8_t *p;
  uint32_t plen;
  for (int i = 0; i < 3; i++) CHECK(tm_decoder_next(&d, &p, &plen) == TM_DECODE_FRAME);
  size_t pending = tm_decoder_pending(&d);
  give_back(&d, copy, half);
  CHECK(tm_decoder_pending(&d) == pending);
  int frames = 3;
  copy = lend_copy(&d, buf + half, len - half);
  tm_decode_status st;
  while ((st = tm_decoder_next(&d, &p, &plen)) == TM_DECODE_FRAME) {
    Threadmon__Frame *f = threadmon__frame__unpack(NULL, plen, p);
    CHECK(f && f->hello->pid == (uint32_t)frames + 100);
    threadmon__frame__free_unpacked(f, NULL);
    frames++;
  }
  CHECK(st == TM_DECODE_NEED_MORE);
  CHECK(tm_decoder_pending(&d) == 0); /* NEED_MORE: every lent byte read or copied */
  give_back(&d, copy, len - half);
  CHECK(frames == 20);
  CHECK(tm_decoder_good_offset(&d) == len);
  tm_decoder_free(&d);
}

int main(void) {
  test_crc_known_value();
  for (lending = 0; lending < 2; lending++) {
    test_round_trip_any_chunking();
    test_truncated_tail_keeps_whole_frames();
    test_corrupt_byte_is_reported_with_offset();
    test_bad_magic_and_version();
    test_oversized_frame_is_refused_before_buffering();
  }
  test_empty_feed_before_any_bytes();
  test_lent_chunk_left_midway();
  if (failures) fprintf(stderr, "%d checks failed\n", failures);
  return failures ? 1 : 0;
}
