// tm-bench-decode: what decoding a capture's frames costs, as every reader
// pays it (the report, the export, the display's seek): the stream checked
// and its blocks inflated (tm_decoder: CRC-32C, zstd), then each frame
// unpacked into a FrameArena (the column reader, protobuf-c for the rest),
// the arena rewound every 32 frames as ReadAhead's batches are. No model.
// The capture is read into memory first and fed in 1 MiB chunks.
//
//   tm-bench-decode CAPTURE [--passes N (1)] [--stage frames|unpack (unpack)]
//
// --stage frames stops after tm_decoder_next (framing, CRC, zstd). Prints
// one JSON line: frames, transitions and switch records decoded per pass,
// and the best pass's thread CPU. Instructions per transition: run it under
// `valgrind --tool=cachegrind --cache-sim=no` with 1 and 2 passes and divide
// the difference by the transitions (bench/decode_cost.py does).
#include <QFile>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "framearena.h"
#include "tmwire.h"

namespace {

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

struct Counts {
  uint64_t frames = 0, transitions = 0, switches = 0, bad = 0;
};

Counts decodeOnce(const QByteArray &bytes, bool unpack) {
  constexpr size_t kChunk = 1 << 20, kBatch = 32;
  Counts c;
  tm_decoder dec;
  tm_decoder_init(&dec);
  tmon::FrameArena arena;
  size_t inBatch = 0;
  for (size_t at = 0; at < size_t(bytes.size()) && !dec.failed; at += kChunk) {
    const size_t n = std::min(kChunk, size_t(bytes.size()) - at);
    if (tm_decoder_feed(&dec, bytes.constData() + at, n) != 0) break;
    const uint8_t *payload = nullptr;
    uint32_t len = 0;
    while (tm_decoder_next(&dec, &payload, &len) == TM_DECODE_FRAME) {
      c.frames++;
      if (!unpack) continue;
      if (inBatch++ == kBatch) {
        arena.rewind();
        inBatch = 1;
      }
      const Threadmon__Frame *f = arena.unpack(payload, len);
      if (!f) {
        c.bad++;
        continue;
      }
      if (f->body_case == THREADMON__FRAME__BODY_TRANSITIONS)
        c.transitions += f->transitions->n_tid;
      else if (f->body_case == THREADMON__FRAME__BODY_SWITCHES)
        c.switches += f->switches->n_tid;
    }
  }
  if (dec.failed) std::fprintf(stderr, "%s\n", tm_decoder_error(&dec));
  tm_decoder_free(&dec);
  return c;
}

}  // namespace

int main(int argc, char **argv) {
  const char *path = nullptr;
  int passes = 1;
  bool unpack = true;
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--passes") && i + 1 < argc) {
      passes = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--stage") && i + 1 < argc) {
      unpack = std::strcmp(argv[++i], "frames") != 0;
    } else if (!path) {
      path = argv[i];
    } else {
      path = nullptr;
      break;
    }
  }
  if (!path || passes < 1) {
    std::fputs("usage: tm-bench-decode CAPTURE [--passes N] [--stage frames|unpack]\n", stderr);
    return 2;
  }
  QFile file(QString::fromLocal8Bit(path));
  if (!file.open(QIODevice::ReadOnly)) {
    std::fprintf(stderr, "%s: %s\n", path, qPrintable(file.errorString()));
    return 1;
  }
  const QByteArray bytes = file.readAll();
  Counts c;
  double best = 0;
  for (int i = 0; i < passes; i++) {
    const double t0 = threadCpuSeconds();
    c = decodeOnce(bytes, unpack);
    const double t = threadCpuSeconds() - t0;
    if (i == 0 || t < best) best = t;
  }
  std::printf(
      "{\"bytes\": %lld, \"frames\": %llu, \"transitions\": %llu, \"switches\": %llu, "
      "\"malformed\": %llu, \"passes\": %d, \"stage\": \"%s\", \"best_cpu_s\": %.4f, "
      "\"ns_per_transition\": %.1f}\n",
      static_cast<long long>(bytes.size()), static_cast<unsigned long long>(c.frames),
      static_cast<unsigned long long>(c.transitions), static_cast<unsigned long long>(c.switches),
      static_cast<unsigned long long>(c.bad), passes, unpack ? "unpack" : "frames", best,
      c.transitions ? best * 1e9 / double(c.transitions) : 0.0);
  return c.bad ? 1 : 0;
}
