// CellTable: the cells of a waiter x holder table (who blocked whom) being
// summed, in one flat array, found through an open-addressed table of their
// places + 1 (0: empty), at most half full. A hash map's node per cell and
// its lookups were a tenth of a streamed report's CPU; its merge of the
// windows' cells (10,000 per object of 100 busy threads) into such nodes,
// their sort and their freeing, 3% of the report's instructions.
#ifndef THREADMON_CELLTABLE_H
#define THREADMON_CELLTABLE_H

#include <algorithm>
#include <cstdint>
#include <vector>

#include "modeltypes.h"

namespace tmon {

class CellTable {
 public:
  // The cell (waiter, holder), made empty when new.
  WaitPair &at(uint32_t waiter, uint32_t holder) {
    const uint64_t key = uint64_t(waiter) << 32 | holder;
    for (size_t h = slot(key);; h = (h + 1) & mask_) {
      const uint32_t place = places_[h];
      if (!place) return make(h, waiter, holder);
      WaitPair &c = cells_[place - 1];
      if (c.waiter == waiter && c.holder == holder) return c;
    }
  }
  // w's count and time added to its cell.
  void add(const WaitPair &w) {
    WaitPair &c = at(w.waiter, w.holder);
    c.count += w.count;
    c.waitNs += w.waitNs;
  }
  void add(const std::vector<WaitPair> &v) {
    for (const WaitPair &w : v) add(w);
  }
  // Every cell, empty ones too, in no order.
  const std::vector<WaitPair> &cells() const { return cells_; }
  // The cells that waited at all, in no order.
  std::vector<WaitPair> take() {
    cells_.erase(std::remove_if(cells_.begin(), cells_.end(),
                                [](const WaitPair &c) { return !c.count && !c.waitNs; }),
                 cells_.end());
    return std::move(cells_);
  }
  // The same, as sortedWaitPairs orders them.
  std::vector<WaitPair> sorted() const {
    std::vector<WaitPair> out;
    out.reserve(cells_.size());
    for (const WaitPair &c : cells_)
      if (c.count || c.waitNs) out.push_back(c);
    sortWaitPairs(&out);
    return out;
  }

 private:
  size_t slot(uint64_t key) const { return size_t((key * 0x9E3779B97F4A7C15u) >> shift_); }
  // A new cell at the empty place h (the lookup's fast path stays small).
  __attribute__((noinline)) WaitPair &make(size_t h, uint32_t waiter, uint32_t holder) {
    cells_.push_back(WaitPair{waiter, holder, 0, 0});
    places_[h] = uint32_t(cells_.size());
    if (2 * cells_.size() > places_.size()) grow();
    return cells_.back();
  }
  void grow() {
    places_.assign(places_.size() * 2, 0);
    mask_ = places_.size() - 1;
    shift_--;
    for (size_t i = 0; i < cells_.size(); i++) {
      size_t h = slot(uint64_t(cells_[i].waiter) << 32 | cells_[i].holder);
      while (places_[h]) h = (h + 1) & mask_;
      places_[h] = uint32_t(i + 1);
    }
  }
  std::vector<uint32_t> places_ = std::vector<uint32_t>(64);
  size_t mask_ = 63;
  int shift_ = 58;  // 64 - log2(places_.size())
  std::vector<WaitPair> cells_;
};

}  // namespace tmon

#endif
