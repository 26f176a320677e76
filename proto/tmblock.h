/* tmblock: compressed blocks and the capture index (docs/format.md,
 * "Blocks and the index"), format major 2.
 *
 * A block is a record in place of a frame: u32 LE (TM_BLOCK_FLAG | n),
 * u32 LE CRC-32C of the n body bytes, then the body: a 32-byte block header
 * and one zstd frame that decompresses to whole frames exactly as they
 * would have been written plain (prefix + payload each). Every block stands
 * alone (no shared dictionary), so a capture cut short reads up to its last
 * whole block. A clean capture ends with an index record listing every
 * record's offset, time span and frame kinds, found from the file's last 12
 * bytes; without one a reader scans the records' headers once.
 */
#ifndef TMBLOCK_H
#define TMBLOCK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TM_FORMAT_MAJOR_BLOCKS 2
#define TM_BLOCK_FLAG 0x80000000u
#define TM_BLOCK_FRAMES 1 /* body type: zstd-compressed frames */
#define TM_BLOCK_INDEX 2  /* body type: the capture index */
#define TM_BLOCK_HEADER_BYTES 32
#define TM_INDEX_ENTRY_BYTES 32
#define TM_INDEX_TAIL_BYTES 12 /* u64 LE offset of the index record, "TMIX" */
#define TM_INDEX_MAGIC "TMIX"
/* Batches smaller than this are written plain: zstd's frame overhead
 * would eat what it saves. */
#define TM_BLOCK_MIN_RAW 256u
/* How far after a capture's first record (before or after its median one,
 * in a scan) a record's times may be: the model's session window (2^48 ns,
 * 78 hours; display/model/framecheck.h). */
#define TM_INDEX_SPAN_NS (1ull << 48)
/* How far a record's times may run past the latest time before them (or
 * its own first): a day, where a writer sends a record every 32 s at most
 * unless the program was stopped. */
#define TM_INDEX_JUMP_NS (24ull * 3600 * 1000000000)

/* One record of a capture: a block, or a frame written plain. Times are
 * the writer's CLOCK_MONOTONIC when its first and last frame were sent
 * (0 = not known: a plain frame found by a scan); kinds has bit k set when
 * a frame with Frame.body field number k is inside. */
typedef struct tm_index_entry {
  uint64_t offset;
  uint64_t first_ns, last_ns;
  uint32_t kinds;
  uint32_t frames;
} tm_index_entry;

typedef struct tm_block_header {
  uint8_t type;
  uint32_t raw_len, frames, kinds;
  uint64_t first_ns, last_ns;
} tm_block_header;

/* Walks whole frames (prefix + payload); returns the kinds mask and sets
 * *count. Stops at the first frame that does not fit. */
uint32_t tm_frames_describe(const uint8_t *frames, size_t len, uint32_t *count);

/* 1 << the Frame.body field number of a payload (0 when over 31). */
uint32_t tm_frame_kind_bit(const uint8_t *payload, size_t len);

/* A scan of a capture without an index cuts a run of plain frames into
 * records of about this size, at a Tick (tm_capture_index). */
#define TM_SCAN_PLAIN_RECORD_BYTES (1u << 20)

/* A Tick frame's time_ns (field 2 of the Tick), found without unpacking;
 * 0 for another frame or none. */
uint64_t tm_frame_tick_time(const uint8_t *payload, size_t len);

typedef struct tm_block_writer {
  void *cctx;
  int level;
  uint8_t *out;
  size_t cap;
} tm_block_writer;

void tm_block_writer_init(tm_block_writer *w, int level);
void tm_block_writer_free(tm_block_writer *w);
/* Compresses whole frames into one block record at w->out (zstd at
 * w->level, literals stored raw) and returns its
 * length (prefix included), or 0 when it does not pay or memory ran out:
 * the caller then writes the frames plain. meta gets the record's kinds,
 * frame count and times (offset left to the caller). */
size_t tm_block_encode(tm_block_writer *w, const uint8_t *frames, size_t len, uint64_t first_ns,
                       uint64_t last_ns, tm_index_entry *meta);

typedef struct tm_index {
  tm_index_entry *e;
  size_t n, cap;
} tm_index;

int tm_index_add(tm_index *x, const tm_index_entry *e); /* -1: out of memory */
void tm_index_free(tm_index *x);
/* The index record (prefix included) for a file where it starts at
 * own_offset; malloc'd into *out. Returns its length, 0 on failure. */
size_t tm_index_encode(const tm_index *x, uint64_t own_offset, uint8_t **out);

/* Parses a block body's header; -1 if it is too short or malformed. */
int tm_block_header_parse(const uint8_t *body, size_t n, tm_block_header *h);
/* Decompresses a TM_BLOCK_FRAMES body into out (at least h->raw_len
 * bytes); -1 unless it yields exactly raw_len bytes. */
int tm_block_decompress(const uint8_t *body, size_t n, const tm_block_header *h, uint8_t *out);
/* The same with a ZSTD_DCtx of the caller's, reused from block to block
 * (ZSTD_decompress makes and frees one for every call); NULL: as above. */
int tm_block_decompress_with(void *dctx, const uint8_t *body, size_t n, const tm_block_header *h,
                             uint8_t *out);

/* The index of the capture open at fd (size bytes): from its index record
 * when it ends with a valid one (*from_tail = 1), else by reading every
 * record's prefix and block header once (*from_tail = 0), up to the first
 * damaged or incomplete record. Returns 0, or -1 with a one-line err when
 * it is no capture at all. An index record whose entries cannot be trusted
 * (outside the records, out of file order, not from the header's end,
 * times out of order or over TM_INDEX_SPAN_NS apart) is refused: the
 * scan's index is returned, and err says why (rc 0, err non-empty). A
 * scan's block headers whose times are out of order or far from the others
 * get unknown times (0), said in err too. */
int tm_capture_index(int fd, uint64_t size, tm_index *out, int *from_tail, char *err,
                     size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
