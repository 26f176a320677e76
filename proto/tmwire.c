#include "tmwire.h"

#include <stdbool.h>
#include <string.h>

/* CRC-32C (Castagnoli), reflected, table-driven. A table built at first use
 * keeps the library free of a 1 KiB literal; building it is idempotent, so a
 * race between two first callers only writes the same values twice. */
static uint32_t crc_table[256];
static volatile int crc_table_ready;

static void crc_table_build(void) {
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    crc_table[i] = c;
  }
  __atomic_store_n(&crc_table_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t crc_by_table(uint32_t c, const uint8_t *p, size_t len) {
  if (!__atomic_load_n(&crc_table_ready, __ATOMIC_ACQUIRE)) crc_table_build();
  while (len--) c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
  return c;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
/* SSE4.2's crc32 instruction is CRC-32C: 8 bytes per instruction instead of
 * a table lookup per byte. Every frame and block the probe writes is summed,
 * on the sampler's tick (docs/benchmarks.md, "Behind the comments"). */
__attribute__((target("sse4.2"), always_inline)) static inline uint64_t crc_word(uint64_t c,
                                                                                 const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return __builtin_ia32_crc32di(c, v);
}

__attribute__((target("sse4.2"))) static uint32_t crc_by_sse42(uint32_t c, const uint8_t *p,
                                                              size_t len) {
  uint64_t c64 = c;
  /* Eight words a round: one loop test for 64 bytes (the instructions are
   * chained either way, each waiting for the last). Each word is read by
   * its crc32 from the input: copying a round's words into an array first
   * made GCC pass them through the stack, 11 instructions per 32 bytes. */
  for (; len >= 64; p += 64, len -= 64) {
    c64 = crc_word(c64, p);
    c64 = crc_word(c64, p + 8);
    c64 = crc_word(c64, p + 16);
    c64 = crc_word(c64, p + 24);
    c64 = crc_word(c64, p + 32);
    c64 = crc_word(c64, p + 40);
    c64 = crc_word(c64, p + 48);
    c64 = crc_word(c64, p + 56);
  }
  for (; len >= 8; p += 8, len -= 8) c64 = crc_word(c64, p);
  c = (uint32_t)c64;
  for (; len; p++, len--) c = __builtin_ia32_crc32qi(c, *p);
  return c;
}

/* 0 unknown, 1 yes, 2 no; a race only asks twice. */
static volatile int have_sse42;

static bool sse42(void) {
  int h = __atomic_load_n(&have_sse42, __ATOMIC_RELAXED);
  if (!h) {
    /* CPUID itself, not __builtin_cpu_supports: that links libgcc's
     * __cpu_indicator_init, a constructor whose dozen CPUIDs (each a trap
     * to the hypervisor in a VM) every process that loads the probe paid. */
    unsigned a, b, c, d;
    h = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) ? 1 : 2;
    __atomic_store_n(&have_sse42, h, __ATOMIC_RELAXED);
  }
  return h == 1;
}
#endif

uint32_t tm_crc32c(const void *data, size_t len) {
  const uint8_t *p = data;
#if defined(__x86_64__) && defined(__GNUC__)
  if (sse42()) return crc_by_sse42(0xFFFFFFFFu, p, len) ^ 0xFFFFFFFFu;
#endif
  return crc_by_table(0xFFFFFFFFu, p, len) ^ 0xFFFFFFFFu;
}

static void put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

void tm_header_encode(uint8_t out[TM_HEADER_BYTES]) { tm_header_encode_major(out, TM_FORMAT_MAJOR); }

void tm_header_encode_major(uint8_t out[TM_HEADER_BYTES], uint16_t major) {
  memcpy(out, TM_MAGIC, TM_MAGIC_BYTES);
  put_u16(out + 8, major);
  put_u16(out + 10, TM_FORMAT_MINOR);
  tm_put_u32le(out + 12, 0);
}

void tm_frame_prefix_encode(uint8_t out[TM_FRAME_PREFIX_BYTES],
                            const uint8_t *payload, uint32_t len) {
  tm_put_u32le(out, len);
  tm_put_u32le(out + 4, tm_crc32c(payload, len));
}
