#include "tmblock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_literalCompressionMode */
#include <zstd.h>

#include "tmwire.h"

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p) {
  return (uint64_t)tm_get_u32le(p) | (uint64_t)tm_get_u32le(p + 4) << 32;
}

/* A Frame's first byte is its body's tag: field number << 3 | 2 (for fields
 * 16..31 the tag's second varint byte is 1, and its first byte's
 * continuation bit reads as the field's bit 4). */
uint32_t tm_frame_kind_bit(const uint8_t *payload, size_t len) {
  if (len == 0) return 0;
  unsigned field = payload[0] >> 3;
  return field > 0 && field < 32 ? 1u << field : 0;
}

uint32_t tm_frames_describe(const uint8_t *p, size_t len, uint32_t *count) {
  uint32_t kinds = 0, n = 0;
  size_t at = 0;
  while (len - at >= TM_FRAME_PREFIX_BYTES) {
    uint32_t plen = tm_get_u32le(p + at);
    if (plen > len - at - TM_FRAME_PREFIX_BYTES) break;
    kinds |= tm_frame_kind_bit(p + at + TM_FRAME_PREFIX_BYTES, plen);
    n++;
    at += TM_FRAME_PREFIX_BYTES + plen;
  }
  *count = n;
  return kinds;
}

static int varint(const uint8_t *p, size_t len, size_t *at, uint64_t *v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *at < len; shift += 7) {
    uint8_t b = p[(*at)++];
    *v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return 0;
  }
  return -1;
}

uint64_t tm_frame_tick_time(const uint8_t *p, size_t len) {
  size_t at = 0;
  uint64_t tag, n, v;
  if (varint(p, len, &at, &tag) || tag != (3u << 3 | 2) || varint(p, len, &at, &n)) return 0;
  size_t end = n < len - at ? at + (size_t)n : len;
  while (at < end) { /* seq and time_ns come first; anything else ends the search */
    if (varint(p, end, &at, &tag) || (tag & 7) != 0 || varint(p, end, &at, &v)) return 0;
    if (tag >> 3 == 2) return v;
  }
  return 0;
}

void tm_block_writer_init(tm_block_writer *w, int level) {
  memset(w, 0, sizeof *w);
  w->level = level;
}

void tm_block_writer_free(tm_block_writer *w) {
  ZSTD_freeCCtx(w->cctx);
  free(w->out);
  memset(w, 0, sizeof *w);
}

static void header_encode(uint8_t *b, const tm_block_header *h) {
  memset(b, 0, TM_BLOCK_HEADER_BYTES);
  b[0] = h->type;
  tm_put_u32le(b + 4, h->raw_len);
  tm_put_u32le(b + 8, h->frames);
  tm_put_u32le(b + 12, h->kinds);
  put_u64(b + 16, h->first_ns);
  put_u64(b + 24, h->last_ns);
}

size_t tm_block_encode(tm_block_writer *w, const uint8_t *frames, size_t len, uint64_t first_ns,
                       uint64_t last_ns, tm_index_entry *meta) {
  if (len < TM_BLOCK_MIN_RAW || len > TM_MAX_FRAME_BYTES) return 0;
  if (!w->cctx) {
    if (!(w->cctx = ZSTD_createCCtx())) return 0;
    /* Sticky for every block of the context. Literals stored raw:
     * Huffman-coded ones were 40-70% of a reader's zstd CPU for 6-14% fewer
     * bytes (docs/benchmarks.md, "Raw literals"), and cost the writer more.
     * Any zstd decoder reads either; a libzstd that refused the parameter
     * would write Huffman literals as before. */
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level);
    ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_literalCompressionMode, ZSTD_ps_disable);
  }
  size_t need = TM_FRAME_PREFIX_BYTES + TM_BLOCK_HEADER_BYTES + ZSTD_compressBound(len);
  if (need > w->cap) {
    uint8_t *b = realloc(w->out, need);
    if (!b) return 0;
    w->out = b;
    w->cap = need;
  }
  uint8_t *body = w->out + TM_FRAME_PREFIX_BYTES;
  size_t z = ZSTD_compress2(w->cctx, body + TM_BLOCK_HEADER_BYTES,
                            w->cap - TM_FRAME_PREFIX_BYTES - TM_BLOCK_HEADER_BYTES, frames, len);
  if (ZSTD_isError(z)) return 0;
  size_t n = TM_BLOCK_HEADER_BYTES + z;
  if (n + TM_FRAME_PREFIX_BYTES >= len) return 0; /* does not pay */
  tm_block_header h = {
      .type = TM_BLOCK_FRAMES, .raw_len = (uint32_t)len, .first_ns = first_ns, .last_ns = last_ns};
  h.kinds = tm_frames_describe(frames, len, &h.frames);
  header_encode(body, &h);
  tm_put_u32le(w->out, TM_BLOCK_FLAG | (uint32_t)n);
  tm_put_u32le(w->out + 4, tm_crc32c(body, n));
  meta->first_ns = first_ns;
  meta->last_ns = last_ns;
  meta->kinds = h.kinds;
  meta->frames = h.frames;
  return TM_FRAME_PREFIX_BYTES + n;
}

int tm_index_add(tm_index *x, const tm_index_entry *e) {
  if (x->n == x->cap) {
    size_t cap = x->cap ? x->cap * 2 : 1024;
    tm_index_entry *b = realloc(x->e, cap * sizeof *b);
    if (!b) return -1;
    x->e = b;
    x->cap = cap;
  }
  x->e[x->n++] = *e;
  return 0;
}

void tm_index_free(tm_index *x) {
  free(x->e);
  memset(x, 0, sizeof *x);
}

/* Index body: u8 type, 3 zero bytes, u32 count, count entries (u64 offset,
 * first_ns, last_ns, u32 kinds, frames), u64 own offset, "TMIX". */
size_t tm_index_encode(const tm_index *x, uint64_t own_offset, uint8_t **out) {
  if (x->n > (TM_MAX_FRAME_BYTES - 64) / TM_INDEX_ENTRY_BYTES) return 0;
  size_t n = 8 + x->n * TM_INDEX_ENTRY_BYTES + TM_INDEX_TAIL_BYTES;
  uint8_t *r = calloc(1, TM_FRAME_PREFIX_BYTES + n);
  if (!r) return 0;
  uint8_t *b = r + TM_FRAME_PREFIX_BYTES;
  b[0] = TM_BLOCK_INDEX;
  tm_put_u32le(b + 4, (uint32_t)x->n);
  uint8_t *p = b + 8;
  for (size_t i = 0; i < x->n; i++, p += TM_INDEX_ENTRY_BYTES) {
    put_u64(p, x->e[i].offset);
    put_u64(p + 8, x->e[i].first_ns);
    put_u64(p + 16, x->e[i].last_ns);
    tm_put_u32le(p + 24, x->e[i].kinds);
    tm_put_u32le(p + 28, x->e[i].frames);
  }
  put_u64(p, own_offset);
  memcpy(p + 8, TM_INDEX_MAGIC, 4);
  tm_put_u32le(r, TM_BLOCK_FLAG | (uint32_t)n);
  tm_put_u32le(r + 4, tm_crc32c(b, n));
  *out = r;
  return TM_FRAME_PREFIX_BYTES + n;
}

int tm_block_header_parse(const uint8_t *b, size_t n, tm_block_header *h) {
  if (n < TM_BLOCK_HEADER_BYTES || b[0] != TM_BLOCK_FRAMES || b[1] || b[2] || b[3]) return -1;
  h->type = b[0];
  h->raw_len = tm_get_u32le(b + 4);
  h->frames = tm_get_u32le(b + 8);
  h->kinds = tm_get_u32le(b + 12);
  h->first_ns = get_u64(b + 16);
  h->last_ns = get_u64(b + 24);
  return h->raw_len <= TM_MAX_FRAME_BYTES ? 0 : -1;
}

int tm_block_decompress(const uint8_t *b, size_t n, const tm_block_header *h, uint8_t *out) {
  return tm_block_decompress_with(NULL, b, n, h, out);
}

int tm_block_decompress_with(void *dctx, const uint8_t *b, size_t n, const tm_block_header *h,
                             uint8_t *out) {
  const uint8_t *z = b + TM_BLOCK_HEADER_BYTES;
  size_t zn = n - TM_BLOCK_HEADER_BYTES;
  /* The zstd frame states its size: refuse a lie before inflating. */
  if (ZSTD_getFrameContentSize(z, zn) != h->raw_len) return -1;
  if (ZSTD_findFrameCompressedSize(z, zn) != zn) return -1;
  size_t got = dctx ? ZSTD_decompressDCtx((ZSTD_DCtx *)dctx, out, h->raw_len, z, zn)
                    : ZSTD_decompress(out, h->raw_len, z, zn);
  return !ZSTD_isError(got) && got == h->raw_len ? 0 : -1;
}

/* ---- reading the index ---- */

static int read_at(int fd, void *buf, size_t len, uint64_t at) {
  size_t done = 0;
  while (done < len) {
    ssize_t r = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(at + done));
    if (r <= 0) return -1;
    done += (size_t)r;
  }
  return 0;
}

/* Whether the index's entries can be trusted to seek with (a forged one
 * was read as an empty report, or made a reader allocate gigabytes):
 * records in file order from the header's end, each at least a prefix
 * long, its times in order, within TM_INDEX_SPAN_NS of the first and
 * TM_INDEX_JUMP_NS of the latest before; why not in why. */
static int index_entries_ok(const tm_index *x, uint64_t end, char *why, size_t whylen) {
  uint64_t first = 0, origin = 0, latest = 0;
  for (size_t i = 0; i < x->n; i++) {
    const tm_index_entry *e = &x->e[i];
    uint64_t next = i + 1 < x->n ? x->e[i + 1].offset : end;
    if (next < e->offset + TM_FRAME_PREFIX_BYTES) {
      snprintf(why, whylen, "record %zu at byte %llu is not before the next one's at %llu", i,
               (unsigned long long)e->offset, (unsigned long long)next);
      return 0;
    }
    if (e->first_ns && e->last_ns && e->last_ns < e->first_ns) {
      snprintf(why, whylen, "record %zu ends before it begins", i);
      return 0;
    }
    if (e->first_ns && e->first_ns < first) {
      snprintf(why, whylen, "record %zu begins before the one before it", i);
      return 0;
    }
    if (!origin) origin = e->first_ns ? e->first_ns : e->last_ns;
    if (origin &&
        (e->first_ns > origin + TM_INDEX_SPAN_NS || e->last_ns > origin + TM_INDEX_SPAN_NS)) {
      snprintf(why, whylen, "record %zu is more than 78 hours after the first", i);
      return 0;
    }
    /* 77 hours on in the last record made 55,000 windows of nothing. */
    if (latest &&
        (e->first_ns > latest + TM_INDEX_JUMP_NS || e->last_ns > latest + TM_INDEX_JUMP_NS)) {
      snprintf(why, whylen, "record %zu ends more than 24 hours after the one before it", i);
      return 0;
    }
    if (e->first_ns) first = e->first_ns;
    if (e->first_ns > latest) latest = e->first_ns;
    if (e->last_ns > latest) latest = e->last_ns;
  }
  uint64_t start = x->n ? x->e[0].offset : end;
  if (start != TM_HEADER_BYTES) {
    /* An empty index before 70 MB of records made a reader read them all
     * at once (770 MB), with no warning. */
    snprintf(why, whylen, "it lists no record from byte %u to byte %llu", TM_HEADER_BYTES,
             (unsigned long long)start);
    return 0;
  }
  return 1;
}

static int index_from_tail(int fd, uint64_t size, tm_index *out, char *why, size_t whylen) {
  uint8_t tail[TM_INDEX_TAIL_BYTES];
  if (size < TM_HEADER_BYTES + TM_FRAME_PREFIX_BYTES + 8 + TM_INDEX_TAIL_BYTES ||
      read_at(fd, tail, sizeof tail, size - sizeof tail) != 0 ||
      memcmp(tail + 8, TM_INDEX_MAGIC, 4) != 0)
    return -1;
  uint64_t at = get_u64(tail);
  if (at < TM_HEADER_BYTES || at > size - TM_FRAME_PREFIX_BYTES) return -1;
  uint64_t n = size - at - TM_FRAME_PREFIX_BYTES;
  if (n > TM_MAX_FRAME_BYTES) return -1;
  uint8_t *r = malloc(TM_FRAME_PREFIX_BYTES + n);
  if (!r) return -1;
  int ok = read_at(fd, r, TM_FRAME_PREFIX_BYTES + n, at) == 0 &&
           tm_get_u32le(r) == (TM_BLOCK_FLAG | (uint32_t)n) &&
           tm_get_u32le(r + 4) == tm_crc32c(r + TM_FRAME_PREFIX_BYTES, n);
  const uint8_t *b = r + TM_FRAME_PREFIX_BYTES;
  uint64_t count = ok ? tm_get_u32le(b + 4) : 0;
  ok = ok && b[0] == TM_BLOCK_INDEX && 8 + count * TM_INDEX_ENTRY_BYTES + TM_INDEX_TAIL_BYTES == n;
  for (uint64_t i = 0; ok && i < count; i++) {
    const uint8_t *p = b + 8 + i * TM_INDEX_ENTRY_BYTES;
    tm_index_entry e = {get_u64(p), get_u64(p + 8), get_u64(p + 16), tm_get_u32le(p + 24),
                        tm_get_u32le(p + 28)};
    ok = e.offset >= TM_HEADER_BYTES && e.offset < at && tm_index_add(out, &e) == 0;
    if (!ok) snprintf(why, whylen, "record %llu at byte %llu is outside the file's records",
                      (unsigned long long)i, (unsigned long long)e.offset);
  }
  ok = ok && index_entries_ok(out, at, why, whylen);
  free(r);
  if (!ok) tm_index_free(out);
  return ok ? 0 : -1;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Block headers found by a scan are the only times a capture without an
 * index has, and nothing checked them: a forged one made a streamed reader
 * cut billions of windows, or put every record after it in the last one.
 * The times kept are those of the longest run of records whose first times
 * go forward (a forged record loses its own times, not its followers'),
 * within TM_INDEX_SPAN_NS of the median record's and each ending no earlier
 * than it begins; the others become unknown (0: a reader gives them their
 * neighbours'). Returns how many lost their times; *first_bad the first.
 * Out of memory: all kept, as before. */
static size_t scan_times_check(tm_index *x, size_t *first_bad) {
  size_t n = x->n, known = 0, len = 0, dropped = 0;
  uint64_t *sorted = malloc((n + 1) * sizeof *sorted);
  size_t *ends = malloc((n + 1) * sizeof *ends), *prev = malloc((n + 1) * sizeof *prev);
  uint8_t *keep = calloc(n + 1, 1);
  if (!sorted || !ends || !prev || !keep) goto out;
  for (size_t i = 0; i < n; i++)
    if (x->e[i].first_ns) sorted[known++] = x->e[i].first_ns;
  qsort(sorted, known, sizeof *sorted, cmp_u64);
  uint64_t median = known ? sorted[known / 2] : 0;
  uint64_t lo = median > TM_INDEX_SPAN_NS ? median - TM_INDEX_SPAN_NS : 0;
  uint64_t hi = median + TM_INDEX_SPAN_NS;
  /* Longest non-decreasing run of first times: ends[k] is the record that
   * ends the best run of length k + 1 found so far. */
  for (size_t i = 0; i < n; i++) {
    const tm_index_entry *e = &x->e[i];
    if (!e->first_ns || e->first_ns < lo || e->first_ns > hi || e->last_ns > hi ||
        (e->last_ns && e->last_ns < e->first_ns))
      continue;
    size_t a = 0, b = len;
    while (a < b) {
      size_t m = a + (b - a) / 2;
      if (x->e[ends[m]].first_ns <= e->first_ns)
        a = m + 1;
      else
        b = m;
    }
    prev[i] = a ? ends[a - 1] : SIZE_MAX;
    ends[a] = i;
    if (a == len) len++;
  }
  for (size_t i = len ? ends[len - 1] : SIZE_MAX; i != SIZE_MAX; i = prev[i]) keep[i] = 1;
  /* Of that run, the longest stretch whose times never jump more than
   * TM_INDEX_JUMP_NS past the latest before (a record that ends that long
   * after it begins loses its times). */
  size_t best = 0, best_len = 0, start = 0, run = 0;
  uint64_t latest = 0;
  for (size_t i = 0; i < n; i++) {
    const tm_index_entry *e = &x->e[i];
    if (keep[i] && e->last_ns > e->first_ns + TM_INDEX_JUMP_NS) keep[i] = 0;
    if (!keep[i]) continue;
    if (run && e->first_ns > latest + TM_INDEX_JUMP_NS) run = 0;
    if (!run) {
      start = i;
      latest = 0;
    }
    run++;
    if (e->first_ns > latest) latest = e->first_ns;
    if (e->last_ns > latest) latest = e->last_ns;
    if (run > best_len) {
      best = start;
      best_len = run;
    }
  }
  for (size_t i = 0, k = 0; i < n; i++) {
    if (!keep[i]) continue;
    if (i < best || k >= best_len)
      keep[i] = 0;
    else
      k++;
  }
  for (size_t i = 0; i < n; i++) {
    tm_index_entry *e = &x->e[i];
    if (keep[i] || (!e->first_ns && !e->last_ns)) continue;
    if (!dropped++) *first_bad = i;
    e->first_ns = e->last_ns = 0;
  }
out:
  free(sorted);
  free(ends);
  free(prev);
  free(keep);
  return dropped;
}

/* One pass over the records' prefixes and block headers, no payload read
 * except a plain frame's first bytes (its kind, a Tick's time). A run of
 * plain frames is one record, as a writer's index has it (a file of empty
 * frames would otherwise cost a reader 48 bytes of index per 8 bytes of
 * file), cut at the first Tick past TM_SCAN_PLAIN_RECORD_BYTES and timed
 * by its Ticks as a block is: a capture of plain frames (format 1, or a
 * stream packed by nobody) is read a window at a time like any other. */
static void index_by_scan(int fd, uint64_t size, tm_index *out) {
  uint64_t at = TM_HEADER_BYTES;
  uint8_t head[TM_FRAME_PREFIX_BYTES + TM_BLOCK_HEADER_BYTES];
  int plain_run = 0;
  while (size - at >= TM_FRAME_PREFIX_BYTES) {
    size_t want = size - at < sizeof head ? (size_t)(size - at) : sizeof head;
    if (read_at(fd, head, want, at) != 0) return;
    uint32_t word = tm_get_u32le(head);
    uint32_t n = word & ~TM_BLOCK_FLAG;
    if (n > TM_MAX_FRAME_BYTES || n > size - at - TM_FRAME_PREFIX_BYTES) return;
    tm_index_entry e = {.offset = at};
    if (word & TM_BLOCK_FLAG) {
      tm_block_header h;
      if (head[TM_FRAME_PREFIX_BYTES] == TM_BLOCK_INDEX) return; /* the end */
      if (tm_block_header_parse(head + TM_FRAME_PREFIX_BYTES, n, &h) != 0) return;
      e.first_ns = h.first_ns;
      e.last_ns = h.last_ns;
      e.kinds = h.kinds;
      e.frames = h.frames;
      plain_run = 0;
    } else {
      size_t got = want - TM_FRAME_PREFIX_BYTES < n ? want - TM_FRAME_PREFIX_BYTES : n;
      e.kinds = got ? tm_frame_kind_bit(head + TM_FRAME_PREFIX_BYTES, n) : 0;
      e.first_ns = e.last_ns = tm_frame_tick_time(head + TM_FRAME_PREFIX_BYTES, got);
      e.frames = 1;
    }
    tm_index_entry *run = plain_run ? &out->e[out->n - 1] : NULL;
    if (run && e.first_ns && at - run->offset >= TM_SCAN_PLAIN_RECORD_BYTES) run = NULL;
    if (!(word & TM_BLOCK_FLAG) && run) {
      run->kinds |= e.kinds;
      run->frames += run->frames < UINT32_MAX;
      /* A Tick going back, or past any index's span, times nothing (the
       * model says what it dropped). */
      if (e.first_ns && !run->first_ns)
        run->first_ns = run->last_ns = e.first_ns;
      else if (e.last_ns >= run->last_ns && e.last_ns - run->first_ns <= TM_INDEX_SPAN_NS)
        run->last_ns = e.last_ns;
    } else {
      if (tm_index_add(out, &e) != 0) return;
      plain_run = !(word & TM_BLOCK_FLAG);
    }
    at += TM_FRAME_PREFIX_BYTES + n;
  }
}

int tm_capture_index(int fd, uint64_t size, tm_index *out, int *from_tail, char *err,
                     size_t errlen) {
  memset(out, 0, sizeof *out);
  if (errlen) err[0] = '\0';
  uint8_t header[TM_HEADER_BYTES];
  if (size < TM_HEADER_BYTES || read_at(fd, header, sizeof header, 0) != 0 ||
      memcmp(header, TM_MAGIC, TM_MAGIC_BYTES) != 0) {
    snprintf(err, errlen, "not a threadmon capture");
    return -1;
  }
  char why[120] = "";
  *from_tail = index_from_tail(fd, size, out, why, sizeof why) == 0;
  size_t bad = 0, dropped = 0;
  if (!*from_tail) {
    index_by_scan(fd, size, out);
    dropped = scan_times_check(out, &bad);
  }
  /* An index there but refused: said in err (the scan's records are used);
   * then block headers whose times were not believed. One line. */
  char times[120] = "";
  if (dropped)
    snprintf(
        times, sizeof times,
        "%s%zu block headers' times out of order or far (the first: record %zu) read as unknown",
        why[0] ? "; " : "", dropped, bad);
  if (why[0])
    snprintf(err, errlen, "its index is damaged (%s): read by a scan of its records%s", why, times);
  else if (dropped)
    snprintf(err, errlen, "%s", times);
  return 0;
}
