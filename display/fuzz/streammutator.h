// Mutations of a threadmon stream for libFuzzer that keep its framing
// whole: a random byte flip almost always breaks a frame's CRC-32C, and the
// fuzzer would spend its time on the checksum test. These mutate one frame's
// payload (and fix its prefix), put huge numbers where varints are, repeat,
// drop, move or swap frames; now and then they damage the raw bytes too, so
// the framing's own errors stay covered.
#ifndef THREADMON_STREAMMUTATOR_H
#define THREADMON_STREAMMUTATOR_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tmfuzz {

// In a format-2 stream (zstd blocks, docs/format.md) the frames of every
// whole block are taken out of it, and join gathers them into blocks again
// (block_frames to a block), so that mutations reach the frames inside.
struct Stream {
  std::string header;               // the 16-byte stream header
  std::vector<std::string> frames;  // payloads of the whole frames
  std::string tail;                 // bytes after the last whole frame or block
  bool blocks = false;              // format 2: join writes blocks
  size_t block_frames = 8;
  // Non-zero: join flips a byte of one block's body and fixes its CRC, so
  // that the checks behind the checksum (header, zstd frame, a frame cut
  // by the block's end) see damage too.
  uint32_t block_damage = 0;
  // The stream ended with an index: join writes one that matches its
  // blocks (times from their ticks, as a writer's), so that readers seek
  // through it and cut windows.
  bool indexed = false;
  // Non-zero: join forges one value of the index or of a block header (a
  // time, an offset, a length) with good checksums, as a hostile user would
  // (forge_capture.py does it to a long capture).
  uint32_t forge = 0;
};

// False when data does not start with a stream header.
bool split(const uint8_t *data, size_t size, Stream *out);
// Header, frames with fresh length and CRC prefixes (in blocks when
// s.blocks), tail; 0 when it does not fit in maxSize.
size_t join(const Stream &s, uint8_t *out, size_t maxSize);

// libFuzzer's custom mutator, given its own byte mutator.
using ByteMutator = size_t (*)(uint8_t *data, size_t size, size_t maxSize);
size_t mutate(uint8_t *data, size_t size, size_t maxSize, unsigned seed, ByteMutator bytes);

}  // namespace tmfuzz

#endif
