// UnpackArena: a protobuf-c allocator that hands out memory from blocks it
// keeps, for a frame that lives until the next one is unpacked. protobuf-c
// mallocs every message and repeated field of a frame and frees each one
// again: a tenth of the CPU of folding a capture, with its malloc and free.
#ifndef THREADMON_UNPACKARENA_H
#define THREADMON_UNPACKARENA_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "threadmon.pb-c.h"

namespace tmon {

class UnpackArena {
 public:
  UnpackArena();
  UnpackArena(const UnpackArena &) = delete;
  UnpackArena &operator=(const UnpackArena &) = delete;

  // Unpacks one frame into the arena; nullptr when malformed. The frame
  // (and everything unpacked before) is valid until the next call; it is
  // never freed with protobuf-c's free.
  Threadmon__Frame *unpack(const uint8_t *payload, size_t len);

 private:
  static void *alloc(void *self, size_t size);
  static void release(void *self, void *ptr);
  void *take(size_t size);
  void reset();

  static constexpr size_t kBlockBytes = 64 * 1024;
  struct Block {
    std::unique_ptr<unsigned char[]> bytes;
    size_t size = 0;
  };
  std::vector<Block> blocks_;
  size_t block_ = 0;  // the block being filled
  size_t used_ = 0;   // bytes of it handed out
  ProtobufCAllocator allocator_;
};

}  // namespace tmon

#endif
