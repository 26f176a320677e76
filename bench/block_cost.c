/* tm-bench-blocks: what the probe's zstd blocks cost and save, measured on
 * a real capture's frames. Reads a capture (format 1 or 2), gathers its
 * frames into batches as the probe does (64 KiB, docs/format.md), and
 * compresses every batch at each level asked for; prints the ratio and the
 * thread CPU time per MB of frames (CLOCK_THREAD_CPUTIME_ID, best of 3).
 *
 *   tm-bench-blocks CAPTURE [LEVEL...]      (default levels 1 3 6)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tmblock.h"
#include "tmwire.h"

static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs("usage: tm-bench-blocks CAPTURE [LEVEL...]\n", stderr);
    return 1;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  /* The frames, prefixed, as the probe's batches hold them. */
  size_t cap = 1 << 20, len = 0;
  uint8_t *frames = malloc(cap);
  tm_decoder d;
  tm_decoder_init(&d);
  uint8_t buf[1 << 16];
  size_t n;
  while (frames && (n = fread(buf, 1, sizeof buf, f)) > 0) {
    tm_decoder_feed(&d, buf, n);
    const uint8_t *p;
    uint32_t plen;
    while (tm_decoder_next(&d, &p, &plen) == TM_DECODE_FRAME) {
      while (len + TM_FRAME_PREFIX_BYTES + plen > cap) frames = realloc(frames, cap *= 2);
      if (!frames) break;
      tm_frame_prefix_encode(frames + len, p, plen);
      memcpy(frames + len + TM_FRAME_PREFIX_BYTES, p, plen);
      len += TM_FRAME_PREFIX_BYTES + plen;
    }
  }
  fclose(f);
  tm_decoder_free(&d);
  if (!frames || !len) {
    fprintf(stderr, "%s: no frames\n", argv[1]);
    return 1;
  }
  static const char *defaults[] = {"1", "3", "6"};
  const char **levels = argc > 2 ? (const char **)argv + 2 : defaults;
  int nlevels = argc > 2 ? argc - 2 : 3;
  printf("%zu bytes of frames in 64 KiB batches\n", len);
  printf("level  ratio  cpu_ms_per_MB\n");
  for (int i = 0; i < nlevels; i++) {
    int level = atoi(levels[i]);
    tm_block_writer w;
    tm_block_writer_init(&w, level);
    double best = 1e9;
    size_t out = 0;
    for (int round = 0; round < 3; round++) {
      out = 0;
      double t0 = thread_cpu_s();
      /* Whole frames up to 64 KiB a batch, as transport.c gathers them. */
      for (size_t at = 0; at < len;) {
        size_t end = at;
        while (end < len) {
          uint32_t plen = (uint32_t)frames[end] | (uint32_t)frames[end + 1] << 8 |
                          (uint32_t)frames[end + 2] << 16 | (uint32_t)frames[end + 3] << 24;
          size_t next = end + TM_FRAME_PREFIX_BYTES + plen;
          if (next - at > 65536 && end > at) break;
          end = next;
        }
        tm_index_entry meta;
        size_t r = tm_block_encode(&w, frames + at, end - at, 0, 0, &meta);
        out += r ? r : end - at;
        at = end;
      }
      double t = thread_cpu_s() - t0;
      if (t < best) best = t;
    }
    printf("%5d  %5.2f  %13.2f\n", level, (double)len / (double)out,
           best * 1e3 / ((double)len / 1e6));
    tm_block_writer_free(&w);
  }
  free(frames);
  return 0;
}
