#include "framearena.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "columnframe.h"
#include "largeblocks.h"

namespace tmon {

namespace {
constexpr size_t kAlign = alignof(std::max_align_t);
constexpr size_t kFirstBlock = 64 * 1024, kLastBlock = 1024 * 1024;
// Up to a Transitions batch's column of deltas allocated for a value per
// byte (about 40 KB for 100 busy threads), then cut (shrinkLast): malloc'd
// and freed with each frame, they made a page fault a few KB.
constexpr size_t kLarge = 64 * 1024;
}  // namespace

FrameArena::FrameArena() : allocator_{&FrameArena::allocate, &FrameArena::release, this} {}

FrameArena::~FrameArena() {
  rewind();
  for (const Block &b : blocks_) {
    if (b.mapped)
      largeblocks::give(b.bytes, b.size);
    else
      delete[] b.bytes;
  }
}

Threadmon__Frame *FrameArena::unpack(const uint8_t *data, size_t len) {
  if (Threadmon__Frame *f = unpackColumnFrame(data, len, &allocator_, &FrameArena::shrinkLast))
    return f;
  return threadmon__frame__unpack(&allocator_, len, data);
}

Threadmon__Frame *FrameArena::unpackColumns(const uint8_t *data, size_t len) {
  return unpackColumnFrame(data, len, &allocator_, &FrameArena::shrinkLast);
}

OwnedFrame FrameArena::shared(const std::shared_ptr<FrameArena> &arena, const uint8_t *data,
                              size_t len) {
  Threadmon__Frame *f = arena->unpack(data, len);
  if (!f) return OwnedFrame();
  return OwnedFrame(f, FrameFree{arena});
}

void FrameArena::rewind() {
  for (void *p : large_) std::free(p);
  large_.clear();
  block_ = 0;
  used_ = 0;
  last_ = nullptr;
}

void FrameArena::shrinkLast(void *self, void *p, size_t size) {
  auto *arena = static_cast<FrameArena *>(self);
  if (!p || p != arena->last_) return;
  const size_t at = size_t(static_cast<char *>(p) - arena->blocks_[arena->block_].bytes);
  arena->used_ = at + ((std::max<size_t>(size, 1) + kAlign - 1) & ~(kAlign - 1));
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
    last_ = nullptr;
    return p;
  }
  size = (std::max<size_t>(size, 1) + kAlign - 1) & ~(kAlign - 1);
  for (;;) {
    if (block_ < blocks_.size() && used_ + size <= blocks_[block_].size) {
      void *p = blocks_[block_].bytes + used_;
      used_ += size;
      last_ = p;
      return p;
    }
    if (block_ + 1 < blocks_.size()) {  // this one is full: the next kept one
      block_++;
      used_ = 0;
      continue;
    }
    // A new block, each twice the last up to 1 MiB.
    Block b;
    b.size = blocks_.empty() ? kFirstBlock : std::min(kLastBlock, 2 * blocks_.back().size);
    b.mapped = largeblocks::keeping();
    if (b.mapped)
      b.bytes = static_cast<char *>(largeblocks::take(b.size, &b.size));
    else
      b.bytes = new (std::nothrow) char[b.size];
    if (!b.bytes) return nullptr;
    blocks_.push_back(std::move(b));
    block_ = blocks_.size() - 1;
    used_ = 0;
  }
}

}  // namespace tmon
