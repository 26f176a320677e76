/* zstd, linked into the probe, calls these tracing hooks through weak
 * references when anything in the process defines them. Defined here
 * (hidden, tracing off: a zero context means "do not trace"), a program's
 * own hooks never see the probe's compressions. */
#include <stddef.h>

typedef unsigned long long tm_zstd_trace_ctx;

tm_zstd_trace_ctx ZSTD_trace_compress_begin(const void *cctx);
void ZSTD_trace_compress_end(tm_zstd_trace_ctx ctx, const void *trace);
tm_zstd_trace_ctx ZSTD_trace_decompress_begin(const void *dctx);
void ZSTD_trace_decompress_end(tm_zstd_trace_ctx ctx, const void *trace);

tm_zstd_trace_ctx ZSTD_trace_compress_begin(const void *cctx) {
  (void)cctx;
  return 0;
}

void ZSTD_trace_compress_end(tm_zstd_trace_ctx ctx, const void *trace) {
  (void)ctx;
  (void)trace;
}

tm_zstd_trace_ctx ZSTD_trace_decompress_begin(const void *dctx) {
  (void)dctx;
  return 0;
}

void ZSTD_trace_decompress_end(tm_zstd_trace_ctx ctx, const void *trace) {
  (void)ctx;
  (void)trace;
}
