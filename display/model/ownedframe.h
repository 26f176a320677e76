// A decoded frame with its owner: what a decoder thread hands to the model
// (SessionModel::applyFrames). A frame unpacked into an arena (the decoder
// thread's FrameArena, shared by the frames of one chunk) holds the arena
// and lets it go; any other is freed with protobuf-c's own free.
#ifndef THREADMON_OWNEDFRAME_H
#define THREADMON_OWNEDFRAME_H

#include <memory>
#include <vector>

#include "threadmon.pb-c.h"

namespace tmon {

struct FrameFree {
  std::shared_ptr<void> arena;  // the memory the frame lives in, when not its own
  void operator()(Threadmon__Frame *f) {
    if (arena)
      arena.reset();
    else
      threadmon__frame__free_unpacked(f, nullptr);
  }
};
using OwnedFrame = std::unique_ptr<Threadmon__Frame, FrameFree>;
using FrameBatch = std::vector<OwnedFrame>;

}  // namespace tmon

#endif
