// FrameArena: a protobuf-c allocator that carves the frames it unpacks out
// of a few large blocks. protobuf-c mallocs every message, string and
// repeated field of a frame (a Tick of 1,000 threads is over a thousand)
// and frees each one again: a tenth of the CPU of folding a capture, and of
// the live display's. Two uses:
// - a reader unpacking frame after frame (FrameDecoder) rewinds it before
//   each frame, so its blocks are reused and nothing is freed;
// - a live decoder thread unpacks a chunk's frames into one arena shared by
//   them (shared()), freed when the model has let the last of them go.
#ifndef THREADMON_FRAMEARENA_H
#define THREADMON_FRAMEARENA_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ownedframe.h"

namespace tmon {

class FrameArena {
 public:
  FrameArena();
  ~FrameArena();
  FrameArena(const FrameArena &) = delete;
  FrameArena &operator=(const FrameArena &) = delete;

  // The frame in data, living in this arena until rewind() or its end;
  // nullptr when it is not a Frame. Never freed with protobuf-c's free.
  Threadmon__Frame *unpack(const uint8_t *data, size_t len);
  // Only the column frames' own path (columnframe.h): nullptr for any
  // other frame. For the tests that hold it to protobuf-c's.
  Threadmon__Frame *unpackColumns(const uint8_t *data, size_t len);
  // The same, holding the arena: it lives while any of its frames does.
  static OwnedFrame shared(const std::shared_ptr<FrameArena> &arena, const uint8_t *data,
                           size_t len);
  // Everything unpacked so far is gone; the blocks stay for what comes next.
  void rewind();
  // The last allocation, at p, cut to size bytes: the next one takes the
  // rest. (columnframe.cpp allocates a column for the most values its bytes
  // can hold, then cuts it to those they hold.) Nothing for another.
  static void shrinkLast(void *self, void *p, size_t size);

 private:
  static void *allocate(void *self, size_t size);
  static void release(void *self, void *pointer);
  void *take(size_t size);

  struct Block {
    char *bytes = nullptr;
    size_t size = 0;
    // A kept mapping's pages (largeblocks.h), taken while a reader of
    // segments keeps them: each segment's reader makes its arenas anew.
    bool mapped = false;
  };
  std::vector<Block> blocks_;
  size_t block_ = 0;  // the block being filled
  size_t used_ = 0;   // bytes of it handed out
  void *last_ = nullptr;  // the last allocation, when it is in a block
  // Allocations too large for a block (protobuf-c's scratch while it scans
  // a long message, the arrays of long repeated fields): malloc'd and freed
  // as asked, so that the scratch does not stay.
  std::vector<void *> large_;
  ProtobufCAllocator allocator_;
};

}  // namespace tmon

#endif
