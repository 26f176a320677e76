// FrameArena: memory for the frames unpacked from one chunk of a stream.
// protobuf-c unpacks a frame into a malloc per field, string and message
// (a Tick of 1,000 threads is over a thousand), and the model frees them
// one by one after applying it on the GUI thread: at 100 ticks a second of
// 1,000 threads that was a tenth of the live display's CPU. Here they are
// carved from a few large blocks, freed at once when the last frame of the
// chunk goes (each frame holds the arena: see OwnedFrame).
#ifndef THREADMON_NET_FRAMEARENA_H
#define THREADMON_NET_FRAMEARENA_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ownedframe.h"

namespace tmnet {

class FrameArena : public std::enable_shared_from_this<FrameArena> {
 public:
  static std::shared_ptr<FrameArena> create() {
    return std::shared_ptr<FrameArena>(new FrameArena);
  }
  ~FrameArena();
  FrameArena(const FrameArena &) = delete;
  FrameArena &operator=(const FrameArena &) = delete;
  // The frame in data, living in this arena; empty when it is not a Frame.
  tmon::OwnedFrame unpack(const uint8_t *data, size_t len);

 private:
  FrameArena() = default;
  static void *allocate(void *self, size_t size);
  static void release(void *self, void *pointer);
  void *take(size_t size);
  std::vector<char *> blocks_;
  size_t lastBlock_ = 0;  // the newest block's size: each is twice the last, up to 1 MiB
  char *next_ = nullptr, *end_ = nullptr;
  // Allocations too large for a block (protobuf-c's scratch while it scans
  // a long message, the arrays of repeated fields): malloc'd and freed as
  // asked, so that the scratch does not stay.
  std::vector<void *> large_;
};

}  // namespace tmnet

#endif
