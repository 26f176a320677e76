#include "waitorder.h"

#include <algorithm>

namespace tmon {

namespace {

// order[from, to) by start, ties by compareWaits, sorted in place by
// insertion (a bucket's few waits, a run's nearly in order); true when
// two waits tie on all four.
bool sortBucket(const PodVector<ExportWait> &waits, uint32_t *order, size_t from, size_t to) {
  bool tie = false;
  if (to - from > 32) {  // (a start far from the others crowds the rest into a few buckets)
    std::sort(order + from, order + to, [&waits](uint32_t x, uint32_t y) {
      const int64_t a = waits[x].start, b = waits[y].start;
      return a != b ? a < b : compareWaits(waits[x], waits[y]) < 0;
    });
    for (size_t i = from + 1; i < to && !tie; i++)
      tie = compareWaits(waits[order[i - 1]], waits[order[i]]) == 0;
    return tie;
  }
  for (size_t i = from + 1; i < to; i++) {
    const uint32_t x = order[i];
    const int64_t s = waits[x].start;
    size_t j = i;
    for (; j > from; j--) {
      const uint32_t y = order[j - 1];
      const int64_t t = waits[y].start;
      if (t < s) break;
      if (t == s) {
        const int c = compareWaits(waits[y], waits[x]);
        tie = tie || c == 0;
        if (c <= 0) break;
      }
      order[j] = y;
    }
    order[j] = x;
  }
  return tie;
}

}  // namespace

void orderWaits(const PodVector<ExportWait> &waits, std::vector<uint32_t> *order, WaitOrder *pairs,
                std::vector<uint32_t> *buckets) {
  const uint32_t n = uint32_t(waits.size());
  order->resize(n);
  if (n == 0) return;
  int64_t lo = waits[0].start, hi = lo;
  for (uint32_t i = 1; i < n; i++) {
    lo = std::min(lo, waits[i].start);
    hi = std::max(hi, waits[i].start);
  }
  // About four waits a bucket, each bucket a span of starts of a power of
  // two ns.
  int bits = 0;
  while (bits < 28 && (uint32_t(1) << bits) < n / 2) bits++;
  const uint64_t range = uint64_t(hi) - uint64_t(lo);
  int shift = 0;
  while ((range >> shift) >> bits) shift++;
  const size_t count = (size_t(range >> shift)) + 1;
  buckets->assign(count, 0);
  uint32_t *const at = buckets->data();
  const auto bucketOf = [lo, shift](const ExportWait &w) {
    return size_t((uint64_t(w.start) - uint64_t(lo)) >> shift);
  };
  for (uint32_t i = 0; i < n; i++) at[bucketOf(waits[i])]++;
  uint32_t sum = 0;  // each bucket's first place
  for (size_t b = 0; b < count; b++) {
    const uint32_t c = at[b];
    at[b] = sum;
    sum += c;
  }
  uint32_t *const o = order->data();
  for (uint32_t i = 0; i < n; i++) o[at[bucketOf(waits[i])]++] = i;  // at[b]: its end now
  bool tie = false;
  for (size_t b = 0, from = 0; b < count && !tie; b++) {
    const size_t to = at[b];
    if (to - from > 1) tie = sortBucket(waits, o, from, to);
    from = to;
  }
  if (!tie) return;
  const auto pairBefore = [&waits](const std::pair<int64_t, uint32_t> &a,
                                   const std::pair<int64_t, uint32_t> &b) {
    if (a.first != b.first) return a.first < b.first;
    return compareWaits(waits[a.second], waits[b.second]) < 0;
  };
  pairs->resize(n);
  for (uint32_t i = 0; i < n; i++) (*pairs)[i] = {waits[i].start, i};
  std::sort(pairs->begin(), pairs->end(), pairBefore);
  for (uint32_t i = 0; i < n; i++) (*order)[i] = (*pairs)[i].second;
}

}  // namespace tmon
