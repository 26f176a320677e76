// libFuzzer target: the column frames' one-pass reader (columnframe.h)
// against protobuf-c. The input is tried as one frame payload and, read as
// a stream, frame by frame: wherever the one-pass reader takes a frame,
// protobuf-c must unpack the same fields from it (else abort: a finding).
#include <cstdlib>

#include "columnframecheck.h"
#include "framedecoder.h"

using namespace tmon;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FrameArena arena;
  if (checkColumnFrame(&arena, data, size) == ColumnCheck::Differ) std::abort();
  FrameDecoder dec(nullptr);
  dec.setFrameHook([](const uint8_t *p, uint32_t n) {
    if (checkColumnFrame(&arena, p, n) == ColumnCheck::Differ) std::abort();
  });
  dec.feed(data, size);
  return 0;
}
