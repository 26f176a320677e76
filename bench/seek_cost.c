/* tm-bench-seek: seeking in a long capture with its index, against reading
 * it from the start. Makes OUT, a capture of MINUTES minutes, by repeating
 * CAPTURE's records (a format-2 capture: blocks) with their index times
 * moved on by its span each time (the frames inside repeat unchanged: this
 * measures finding and reading a block, not a model's state), then times:
 * the index from the file's tail; the index by a scan (as for a capture
 * cut short); a seek to 3/4 of the run (find the block, read it, decode its
 * frames); and decoding every frame up to that point from the start.
 *
 *   tm-bench-seek CAPTURE MINUTES OUT
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tmblock.h"
#include "tmwire.h"

static double now_s(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int make(const char *in, int minutes, const char *out) {
  int fd = open(in, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return -1;
  uint8_t *data = malloc((size_t)st.st_size);
  if (!data || read(fd, data, (size_t)st.st_size) != st.st_size) return -1;
  tm_index x;
  int tail;
  char err[128];
  if (tm_capture_index(fd, (uint64_t)st.st_size, &x, &tail, err, sizeof err) != 0 || x.n < 2)
    return -1;
  close(fd);
  uint64_t t0 = x.e[0].first_ns, span = x.e[x.n - 1].last_ns - t0;
  FILE *f = fopen(out, "wb");
  if (!f) return -1;
  fwrite(data, 1, TM_HEADER_BYTES, f);
  uint64_t at = TM_HEADER_BYTES;
  tm_index made = {0};
  int copies = (int)((uint64_t)minutes * 60000000000ull / (span ? span : 1)) + 1;
  for (int k = 0; k < copies; k++) {
    for (size_t i = 0; i < x.n; i++) {
      uint64_t from = x.e[i].offset;
      uint64_t to =
          i + 1 < x.n ? x.e[i + 1].offset : from + 8 + (get_u32(data + from) & ~TM_BLOCK_FLAG);
      uint8_t *rec = data + from;
      size_t len = (size_t)(to - from);
      tm_index_entry e = x.e[i];
      e.first_ns += (uint64_t)k * span;
      e.last_ns += (uint64_t)k * span;
      e.offset = at;
      if (get_u32(rec) & TM_BLOCK_FLAG) { /* the block's own times too, and its CRC */
        uint8_t *copy = malloc(len);
        if (!copy) return -1;
        memcpy(copy, rec, len);
        put_u64(copy + TM_FRAME_PREFIX_BYTES + 16, e.first_ns);
        put_u64(copy + TM_FRAME_PREFIX_BYTES + 24, e.last_ns);
        uint32_t crc = tm_crc32c(copy + TM_FRAME_PREFIX_BYTES, len - TM_FRAME_PREFIX_BYTES);
        for (int b = 0; b < 4; b++) copy[4 + b] = (uint8_t)(crc >> (8 * b));
        fwrite(copy, 1, len, f);
        free(copy);
      } else {
        fwrite(rec, 1, len, f);
      }
      tm_index_add(&made, &e);
      at += len;
    }
  }
  uint8_t *idx;
  size_t n = tm_index_encode(&made, at, &idx);
  fwrite(idx, 1, n, f);
  free(idx);
  fclose(f);
  tm_index_free(&made);
  tm_index_free(&x);
  free(data);
  printf("made %s: %d copies of %.1f s, %llu bytes of records\n", out, copies, (double)span / 1e9,
         (unsigned long long)at);
  return 0;
}

/* Decodes the frames of records [from, to) of fd; returns their count. */
static uint64_t decode(int fd, uint64_t from, uint64_t to) {
  tm_decoder d;
  tm_decoder_init(&d);
  uint8_t header[TM_HEADER_BYTES];
  if (pread(fd, header, sizeof header, 0) != (ssize_t)sizeof header) return 0;
  tm_decoder_feed(&d, header, sizeof header);
  static uint8_t buf[1 << 20];
  uint64_t frames = 0;
  for (uint64_t at = from; at < to;) {
    size_t want = to - at < sizeof buf ? (size_t)(to - at) : sizeof buf;
    ssize_t r = pread(fd, buf, want, (off_t)at);
    if (r <= 0) break;
    tm_decoder_feed(&d, buf, (size_t)r);
    at += (uint64_t)r;
    const uint8_t *p;
    uint32_t n;
    while (tm_decoder_next(&d, &p, &n) == TM_DECODE_FRAME) frames++;
  }
  tm_decoder_free(&d);
  return frames;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fputs("usage: tm-bench-seek CAPTURE MINUTES OUT\n", stderr);
    return 1;
  }
  if (make(argv[1], atoi(argv[2]), argv[3]) != 0) {
    fprintf(stderr, "tm-bench-seek: cannot make %s from %s (a format-2 capture?)\n", argv[3],
            argv[1]);
    return 1;
  }
  int fd = open(argv[3], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return 1;
  tm_index x;
  int tail;
  char err[128];
  double w = now_s(CLOCK_MONOTONIC), c = now_s(CLOCK_PROCESS_CPUTIME_ID);
  tm_capture_index(fd, (uint64_t)st.st_size, &x, &tail, err, sizeof err);
  printf("index from the tail: %zu records, %.2f ms (cpu %.2f ms)\n", x.n,
         (now_s(CLOCK_MONOTONIC) - w) * 1e3, (now_s(CLOCK_PROCESS_CPUTIME_ID) - c) * 1e3);
  uint8_t prefix[4] = {0};
  if (pread(fd, prefix, 4, (off_t)x.e[x.n - 1].offset) != 4) return 1;
  uint64_t records_end =
      x.e[x.n - 1].offset + TM_FRAME_PREFIX_BYTES + (get_u32(prefix) & ~TM_BLOCK_FLAG);
  tm_index s;
  w = now_s(CLOCK_MONOTONIC), c = now_s(CLOCK_PROCESS_CPUTIME_ID);
  tm_capture_index(fd, records_end, &s, &tail, err, sizeof err); /* as if cut before the index */
  printf("index by scan (no index): %zu records, %.2f ms (cpu %.2f ms)\n", s.n,
         (now_s(CLOCK_MONOTONIC) - w) * 1e3, (now_s(CLOCK_PROCESS_CPUTIME_ID) - c) * 1e3);
  uint64_t target = x.e[0].first_ns + (x.e[x.n - 1].last_ns - x.e[0].first_ns) / 4 * 3;
  w = now_s(CLOCK_MONOTONIC), c = now_s(CLOCK_PROCESS_CPUTIME_ID);
  size_t lo = 0, hi = x.n; /* the first record whose span reaches the target */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (x.e[mid].last_ns < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  uint64_t to = lo + 1 < x.n ? x.e[lo + 1].offset : records_end;
  uint64_t frames = decode(fd, x.e[lo].offset, to);
  printf("seek to 3/4 (%.1f s): record %zu, %llu frames decoded, %.2f ms (cpu %.2f ms)\n",
         (double)(target - x.e[0].first_ns) / 1e9, lo, (unsigned long long)frames,
         (now_s(CLOCK_MONOTONIC) - w) * 1e3, (now_s(CLOCK_PROCESS_CPUTIME_ID) - c) * 1e3);
  w = now_s(CLOCK_MONOTONIC), c = now_s(CLOCK_PROCESS_CPUTIME_ID);
  frames = decode(fd, TM_HEADER_BYTES, to);
  printf("the same from the start: %llu frames decoded, %.0f ms (cpu %.0f ms)\n",
         (unsigned long long)frames, (now_s(CLOCK_MONOTONIC) - w) * 1e3,
         (now_s(CLOCK_PROCESS_CPUTIME_ID) - c) * 1e3);
  tm_index_free(&x);
  tm_index_free(&s);
  close(fd);
  return 0;
}
