#include "framearena.h"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace tmnet {

namespace {
constexpr size_t kAlign = alignof(std::max_align_t);
constexpr size_t kFirstBlock = 64 * 1024, kLastBlock = 1024 * 1024;
constexpr size_t kLarge = 8 * 1024;
}  // namespace

FrameArena::~FrameArena() {
  for (char *b : blocks_) std::free(b);
  for (void *p : large_) std::free(p);
}

tmon::OwnedFrame FrameArena::unpack(const uint8_t *data, size_t len) {
  ProtobufCAllocator a{&FrameArena::allocate, &FrameArena::release, this};
  Threadmon__Frame *f = threadmon__frame__unpack(&a, len, data);
  if (!f) return tmon::OwnedFrame();
  return tmon::OwnedFrame(f, tmon::FrameFree{shared_from_this()});
}

void *FrameArena::allocate(void *self, size_t size) {
  return static_cast<FrameArena *>(self)->take(size);
}

void FrameArena::release(void *self, void *pointer) {
  std::vector<void *> &large = static_cast<FrameArena *>(self)->large_;
  // Newest first: the scratch is freed soon after it is taken. What lives
  // in a block goes with the block.
  auto it = std::find(large.rbegin(), large.rend(), pointer);
  if (it == large.rend()) return;
  std::free(pointer);
  large.erase(std::next(it).base());
}

void *FrameArena::take(size_t size) {
  if (size >= kLarge) {
    void *p = std::malloc(size);
    if (p) large_.push_back(p);
    return p;
  }
  size = (size + kAlign - 1) & ~(kAlign - 1);
  if (size_t(end_ - next_) < size) {
    const size_t bytes = blocks_.empty() ? kFirstBlock : std::min(kLastBlock, 2 * lastBlock_);
    char *b = static_cast<char *>(std::malloc(bytes));
    if (!b) return nullptr;
    blocks_.push_back(b);
    lastBlock_ = bytes;
    next_ = b;
    end_ = b + bytes;
  }
  void *p = next_;
  next_ += size;
  return p;
}

}  // namespace tmnet
