// LargeBlocks: the memory of PodVector's large buffers, each a mapping of
// whole pages of its own. It grows by mremap (its pages move, none is
// copied), and, while a KeepFreed lives, a freed one is kept, its pages
// resident, for the next buffer to take. A long capture is read in
// segments, each into a model dropped at its end; the next segment's model
// grows to the same size again, and its buffers, freed to the kernel and
// faulted in again zeroed, were a fifth of the CPU of a report or an export
// (docs/benchmarks.md, "System time: page faults of the readers").
#ifndef THREADMON_LARGEBLOCKS_H
#define THREADMON_LARGEBLOCKS_H

#include <cstddef>

namespace tmon {
namespace largeblocks {

// A buffer of this many bytes or more is a mapping; smaller ones are
// malloc's (its bins reuse them already).
constexpr size_t kFrom = 64 * 1024;
constexpr size_t kPage = 4096;

// Bytes rounded up to whole pages: a block's size.
inline size_t pagesFor(size_t bytes) {
  return (bytes + kPage - 1) & ~(kPage - 1);
}

// A block of at least bytes (>= kFrom); its size, pagesFor(bytes) or more,
// in *size. A kept block first: the smallest that is large enough, else
// the largest grown. nullptr when out of memory.
void *take(size_t bytes, size_t *size);
// The block p of size grown to at least bytes, its first used bytes moved
// with it when it must move; its new size in *size. nullptr (p unchanged)
// when out of memory.
void *grow(void *p, size_t size, size_t used, size_t bytes, size_t *newSize);
// The block p of size cut to pagesFor(bytes) (>= kFrom): the pages past it
// are a block given back (give()).
void shrink(void *p, size_t size, size_t bytes);
// p is free: kept while a KeepFreed lives, unmapped otherwise.
void give(void *p, size_t size);

// While one lives (on any thread), freed blocks are kept for reuse; when
// the last one ends they are unmapped. A reader of segments holds one.
class KeepFreed {
 public:
  KeepFreed();
  ~KeepFreed();
  KeepFreed(const KeepFreed &) = delete;
  KeepFreed &operator=(const KeepFreed &) = delete;
};

// Whether a KeepFreed lives now.
bool keeping();

// Bytes of the blocks kept now (tests).
size_t keptBytes();

}  // namespace largeblocks
}  // namespace tmon

#endif
