/* tm-bench-recode: a capture's blocks written again with other zstd
 * settings, the same frames in the same records (the index rebuilt), so
 * that what a setting costs a reader and saves on disk is measured on the
 * same content (docs/benchmarks.md, "Raw literals"). With no setting
 * (level 3, literals as libzstd chooses) it rewrites a capture of the
 * writer before raw literals byte for byte; lit=raw is today's writer.
 *
 *   tm-bench-recode IN OUT [level=N] [lit=raw|huf] [mm=N] [tcb=N] [merge=N]
 *   tm-bench-recode IN - [reps=N]
 *
 * mm: ZSTD_c_minMatch; tcb: ZSTD_c_targetCBlockSize; merge: N blocks in a
 * row as one. Prints the blocks, bytes of frames, the new file's size and
 * the compression's thread CPU time. With OUT "-" it only decompresses
 * every block, reps times, and prints the thread CPU time of one pass
 * after the first (under cachegrind, reps=1 counts one pass).
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_literalCompressionMode, ZSTD_c_targetCBlockSize */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "tmblock.h"
#include "tmwire.h"

static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

typedef struct {
  ZSTD_CCtx *cctx;
  FILE *out;
  uint64_t at;     /* the output's length so far */
  tm_index index;  /* the output's records */
  uint8_t *raw;    /* frames of the blocks being merged */
  size_t len, cap; /* in raw */
  uint8_t *z;
  tm_index_entry meta; /* of the blocks being merged */
  int blocks;          /* being merged */
  double cpu_s;
} recoder;

static int set(ZSTD_CCtx *c, ZSTD_cParameter p, int v, const char *name) {
  size_t r = ZSTD_CCtx_setParameter(c, p, v);
  if (!ZSTD_isError(r)) return 0;
  fprintf(stderr, "%s=%d: %s\n", name, v, ZSTD_getErrorName(r));
  return -1;
}

static int write_out(recoder *r, const uint8_t *p, size_t n, const tm_index_entry *meta) {
  tm_index_entry e = *meta;
  e.offset = r->at;
  r->at += n;
  return fwrite(p, 1, n, r->out) == n && tm_index_add(&r->index, &e) == 0 ? 0 : -1;
}

/* The blocks gathered so far as one block of the settings asked for. */
static int flush(recoder *r) {
  if (!r->blocks) return 0;
  size_t bound = ZSTD_compressBound(r->len);
  uint8_t *z = realloc(r->z, TM_FRAME_PREFIX_BYTES + TM_BLOCK_HEADER_BYTES + bound);
  if (!z) return -1;
  r->z = z;
  uint8_t *body = z + TM_FRAME_PREFIX_BYTES;
  double t0 = thread_cpu_s();
  size_t n = ZSTD_compress2(r->cctx, body + TM_BLOCK_HEADER_BYTES, bound, r->raw, r->len);
  r->cpu_s += thread_cpu_s() - t0;
  if (ZSTD_isError(n)) return -1;
  n += TM_BLOCK_HEADER_BYTES;
  memset(body, 0, TM_BLOCK_HEADER_BYTES);
  body[0] = TM_BLOCK_FRAMES;
  tm_put_u32le(body + 4, (uint32_t)r->len);
  tm_put_u32le(body + 8, r->meta.frames);
  tm_put_u32le(body + 12, r->meta.kinds);
  put_u64(body + 16, r->meta.first_ns);
  put_u64(body + 24, r->meta.last_ns);
  tm_put_u32le(z, TM_BLOCK_FLAG | (uint32_t)n);
  tm_put_u32le(z + 4, tm_crc32c(body, n));
  r->blocks = 0;
  r->len = 0;
  return write_out(r, z, TM_FRAME_PREFIX_BYTES + n, &r->meta);
}

static void add_block(recoder *r, const tm_index_entry *e, uint32_t raw_len) {
  if (!r->blocks) {
    r->meta = *e;
  } else {
    r->meta.last_ns = e->last_ns;
    r->meta.kinds |= e->kinds;
    r->meta.frames += e->frames;
  }
  r->blocks++;
  r->len += raw_len;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fputs(
        "usage: tm-bench-recode IN OUT [level=N] [lit=raw|huf] [mm=N] [tcb=N] [merge=N]\n"
        "       tm-bench-recode IN - [reps=N]\n",
        stderr);
    return 2;
  }
  int fd = open(argv[1], O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    perror(argv[1]);
    return 1;
  }
  size_t size = (size_t)st.st_size;
  uint8_t *file = malloc(size ? size : 1);
  tm_index x;
  int from_tail;
  char err[300];
  if (!file || pread(fd, file, size, 0) != (ssize_t)size ||
      tm_capture_index(fd, size, &x, &from_tail, err, sizeof err) != 0) {
    fprintf(stderr, "%s: not read %s\n", argv[1], err);
    return 1;
  }
  close(fd);
  int decode_only = !strcmp(argv[2], "-");
  int merge = 1, reps = 1;
  recoder r = {.cctx = ZSTD_createCCtx(), .at = TM_HEADER_BYTES};
  int bad = !r.cctx || set(r.cctx, ZSTD_c_compressionLevel, 3, "level");
  for (int i = 3; i < argc && !bad; i++) {
    const char *a = argv[i], *v = strchr(a, '=');
    int n = v ? atoi(v + 1) : 0;
    if (!strncmp(a, "level=", 6))
      bad = set(r.cctx, ZSTD_c_compressionLevel, n, "level");
    else if (!strcmp(a, "lit=raw") || !strcmp(a, "lit=huf"))
      bad = set(r.cctx, ZSTD_c_literalCompressionMode,
                a[4] == 'r' ? ZSTD_ps_disable : ZSTD_ps_enable, "lit");
    else if (!strncmp(a, "mm=", 3))
      bad = set(r.cctx, ZSTD_c_minMatch, n, "mm");
    else if (!strncmp(a, "tcb=", 4))
      bad = set(r.cctx, ZSTD_c_targetCBlockSize, n, "tcb");
    else if (!strncmp(a, "merge=", 6))
      merge = n > 0 ? n : 1;
    else if (!strncmp(a, "reps=", 5))
      reps = n > 0 ? n : 1;
    else
      bad = fprintf(stderr, "unknown setting %s\n", a) > 0;
  }
  if (bad) return 2;
  ZSTD_DCtx *d = ZSTD_createDCtx();
  r.cap = 64u << 20;
  r.raw = malloc(r.cap);
  if (!decode_only) {
    /* Made new, never through a link planted at the name. */
    int out = open(argv[2], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (out < 0 || !(r.out = fdopen(out, "wb"))) {
      perror(argv[2]);
      return 1;
    }
  }
  if (r.out) fwrite(file, 1, TM_HEADER_BYTES, r.out);
  uint64_t frames_bytes = 0, blocks = 0;
  double decode_s = 0;
  for (int rep = 0; rep < (decode_only ? reps : 1); rep++) {
    double t0 = thread_cpu_s();
    for (size_t i = 0; i < x.n; i++) {
      const uint8_t *rec = file + x.e[i].offset;
      uint32_t word = tm_get_u32le(rec), n = word & ~TM_BLOCK_FLAG;
      if (!(word & TM_BLOCK_FLAG)) { /* a plain frame (a writer's index has one a record) */
        if (!decode_only && (flush(&r) || write_out(&r, rec, TM_FRAME_PREFIX_BYTES + n, &x.e[i])))
          return 1;
        continue;
      }
      tm_block_header h;
      if (r.len + TM_MAX_FRAME_BYTES > r.cap ||
          tm_block_header_parse(rec + TM_FRAME_PREFIX_BYTES, n, &h) != 0 ||
          tm_block_decompress_with(d, rec + TM_FRAME_PREFIX_BYTES, n, &h, r.raw + r.len) != 0) {
        fprintf(stderr, "%s: record %zu does not decompress\n", argv[1], i);
        return 1;
      }
      if (rep == 0) {
        blocks++;
        frames_bytes += h.raw_len;
      }
      if (decode_only) continue;
      add_block(&r, &x.e[i], h.raw_len);
      if (r.blocks >= merge && flush(&r)) return 1;
    }
    if (rep > 0) decode_s += thread_cpu_s() - t0;
  }
  printf("blocks %llu, frames %llu bytes", (unsigned long long)blocks,
         (unsigned long long)frames_bytes);
  if (decode_only) {
    if (reps > 1) printf(", decompressed in %.2f ms a pass", decode_s * 1e3 / (reps - 1));
    printf("\n");
    return 0;
  }
  uint8_t *ix = NULL;
  size_t ixn = flush(&r) == 0 ? tm_index_encode(&r.index, r.at, &ix) : 0;
  if (!ixn || fwrite(ix, 1, ixn, r.out) != ixn || fclose(r.out) != 0) {
    perror(argv[2]);
    return 1;
  }
  printf(", written %llu bytes, compressed in %.2f ms\n", (unsigned long long)(r.at + ixn),
         r.cpu_s * 1e3);
  free(ix);
  free(r.raw);
  free(r.z);
  free(file);
  tm_index_free(&x);
  tm_index_free(&r.index);
  ZSTD_freeCCtx(r.cctx);
  ZSTD_freeDCtx(d);
  return 0;
}
