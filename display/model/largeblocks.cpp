#include "largeblocks.h"

#include <sys/mman.h>

#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

namespace tmon {
namespace largeblocks {

namespace {
// More than a model of the largest segment a reader reads holds (169 MB
// for 10 s of 100 busy threads): the rest is unmapped.
constexpr size_t kMaxKept = size_t(1) << 30;

struct Kept {
  std::mutex mutex;
  std::multimap<size_t, void *> bySize;
  size_t bytes = 0;
  int keepers = 0;
};

Kept &kept() {
  static Kept k;
  return k;
}

void *mapped(size_t size) {
  void *p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void *remapped(void *p, size_t size, size_t newSize) {
  void *q = mremap(p, size, newSize, MREMAP_MAYMOVE);
  return q == MAP_FAILED ? nullptr : q;
}
}  // namespace

void *take(size_t bytes, size_t *size) {
  const size_t want = pagesFor(bytes);
  Kept &k = kept();
  void *p = nullptr;
  size_t have = 0;
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    if (!k.bySize.empty()) {
      auto it = k.bySize.lower_bound(want);
      if (it == k.bySize.end()) it = std::prev(it);  // the largest, grown below
      have = it->first;
      p = it->second;
      k.bytes -= have;
      k.bySize.erase(it);
    }
  }
  if (!p) {
    *size = want;
    return mapped(want);
  }
  if (have >= want) {
    *size = have;
    return p;
  }
  // Its pages stay resident where it moves; only those past them are new.
  void *q = remapped(p, have, want);
  if (!q) {
    give(p, have);
    return nullptr;
  }
  *size = want;
  return q;
}

void *grow(void *p, size_t size, size_t used, size_t bytes, size_t *newSize) {
  const size_t want = pagesFor(bytes);
  if (want <= size) {
    *newSize = size;
    return p;
  }
  // A kept block large enough, its pages resident: copying the records
  // into it costs less than faulting in new pages (a fifth of the time).
  Kept &k = kept();
  void *q = nullptr;
  size_t have = 0;
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    auto it = k.bySize.lower_bound(want);
    if (it != k.bySize.end()) {
      have = it->first;
      q = it->second;
      k.bytes -= have;
      k.bySize.erase(it);
    }
  }
  if (q) {
    std::memcpy(q, p, used);
    give(p, size);
    *newSize = have;
    return q;
  }
  q = remapped(p, size, want);
  if (q) *newSize = want;
  return q;
}

void shrink(void *p, size_t size, size_t bytes) {
  const size_t want = pagesFor(bytes);
  if (want < size) give(static_cast<char *>(p) + want, size - want);
}

void give(void *p, size_t size) {
  Kept &k = kept();
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    if (k.keepers > 0 && k.bytes + size <= kMaxKept) {
      k.bySize.emplace(size, p);
      k.bytes += size;
      return;
    }
  }
  munmap(p, size);
}

KeepFreed::KeepFreed() {
  Kept &k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  k.keepers++;
}

KeepFreed::~KeepFreed() {
  Kept &k = kept();
  std::multimap<size_t, void *> unmap;
  {
    std::lock_guard<std::mutex> lock(k.mutex);
    if (--k.keepers > 0) return;
    unmap.swap(k.bySize);
    k.bytes = 0;
  }
  for (const auto &[size, p] : unmap) munmap(p, size);
}

bool keeping() {
  Kept &k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  return k.keepers > 0;
}

size_t keptBytes() {
  Kept &k = kept();
  std::lock_guard<std::mutex> lock(k.mutex);
  return k.bytes;
}

}  // namespace largeblocks
}  // namespace tmon
