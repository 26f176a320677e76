// The column frames' own check (test_columnframe, fuzz-frame): a payload
// unpacked by unpackColumnFrame must be what protobuf-c unpacks from it,
// field for field (both packed again, byte for byte).
#ifndef THREADMON_COLUMNFRAMECHECK_H
#define THREADMON_COLUMNFRAMECHECK_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "columnframe.h"
#include "framearena.h"

namespace tmon {

enum class ColumnCheck { NotColumns, Same, Differ };

inline ColumnCheck checkColumnFrame(FrameArena *arena, const uint8_t *data, size_t len) {
  arena->rewind();
  Threadmon__Frame *mine = arena->unpackColumns(data, len);
  if (!mine) return ColumnCheck::NotColumns;
  Threadmon__Frame *theirs = threadmon__frame__unpack(nullptr, len, data);
  if (!theirs) return ColumnCheck::Differ;  // protobuf-c refuses what was read
  std::vector<uint8_t> a(threadmon__frame__get_packed_size(mine));
  std::vector<uint8_t> b(threadmon__frame__get_packed_size(theirs));
  threadmon__frame__pack(mine, a.data());
  threadmon__frame__pack(theirs, b.data());
  threadmon__frame__free_unpacked(theirs, nullptr);
  return a == b ? ColumnCheck::Same : ColumnCheck::Differ;
}

}  // namespace tmon

#endif
