// A decoded frame with its owner: what a decoder thread hands to the model
// (SessionModel::applyFrames), freed with protobuf-c's own free.
#ifndef THREADMON_OWNEDFRAME_H
#define THREADMON_OWNEDFRAME_H

#include <memory>
#include <vector>

#include "threadmon.pb-c.h"

namespace tmon {

struct FrameFree {
  void operator()(Threadmon__Frame *f) const { threadmon__frame__free_unpacked(f, nullptr); }
};
using OwnedFrame = std::unique_ptr<Threadmon__Frame, FrameFree>;
using FrameBatch = std::vector<OwnedFrame>;

}  // namespace tmon

#endif
