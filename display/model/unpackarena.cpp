#include "unpackarena.h"

#include <algorithm>
#include <new>

namespace tmon {

namespace {
constexpr size_t kAlign = alignof(std::max_align_t);
size_t rounded(size_t n) { return (n + kAlign - 1) & ~(kAlign - 1); }
}  // namespace

UnpackArena::UnpackArena() : allocator_{&UnpackArena::alloc, &UnpackArena::release, this} {}

void *UnpackArena::alloc(void *self, size_t size) {
  return static_cast<UnpackArena *>(self)->take(size);
}

// Memory goes back all at once, at the next frame.
void UnpackArena::release(void *, void *) {}

void *UnpackArena::take(size_t size) {
  size = rounded(std::max<size_t>(size, 1));
  for (;;) {
    if (block_ < blocks_.size() && used_ + size <= blocks_[block_].size) {
      void *p = blocks_[block_].bytes.get() + used_;
      used_ += size;
      return p;
    }
    if (block_ < blocks_.size() && used_ > 0) {  // this one is full: the next
      block_++;
      used_ = 0;
      continue;
    }
    // A fresh block (or one too small for a large field, replaced).
    Block b;
    b.size = std::max(kBlockBytes, size);
    b.bytes.reset(new (std::nothrow) unsigned char[b.size]);
    if (!b.bytes) return nullptr;
    if (block_ < blocks_.size()) blocks_[block_] = std::move(b);
    else blocks_.push_back(std::move(b));
  }
}

void UnpackArena::reset() {
  block_ = 0;
  used_ = 0;
}

Threadmon__Frame *UnpackArena::unpack(const uint8_t *payload, size_t len) {
  reset();
  return threadmon__frame__unpack(&allocator_, len, payload);
}

}  // namespace tmon
