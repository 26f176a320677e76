#include "waitorder.h"

#include <algorithm>

namespace tmon {

namespace {

constexpr uint32_t kFewInBucket = 32;

// order[from, to) by start, ties by compareWaits, sorted in place by
// insertion (a bucket's few waits, or buckets in order, each of few);
// true when two waits tie on all four.
bool sortBucket(const PodVector<ExportWait> &waits, uint32_t *order, size_t from, size_t to) {
  bool tie = false;
  if (to - from < 2) return tie;
  int64_t last = waits[order[from]].start;  // the latest start before i
  for (size_t i = from + 1; i < to; i++) {
    const uint32_t x = order[i];
    const int64_t s = waits[x].start;
    if (s > last) {  // (nearly every one)
      last = s;
      continue;
    }
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
    order[j] = x;  // (last stays: s was not after it)
  }
  return tie;
}

// The same, bucket by bucket (at[b]: bucket b's end), a bucket of many
// by std::sort (a start far from the others crowds the rest into a few).
bool sortBuckets(const PodVector<ExportWait> &waits, uint32_t *order, const uint32_t *at,
                 size_t count) {
  bool tie = false;
  for (size_t b = 0, from = 0; b < count && !tie; b++) {
    const size_t to = at[b];
    if (to - from <= kFewInBucket) {
      tie = sortBucket(waits, order, from, to);
    } else {
      std::sort(order + from, order + to, [&waits](uint32_t x, uint32_t y) {
        const int64_t a = waits[x].start, c = waits[y].start;
        return a != c ? a < c : compareWaits(waits[x], waits[y]) < 0;
      });
      for (size_t i = from + 1; i < to && !tie; i++)
        tie = compareWaits(waits[order[i - 1]], waits[order[i]]) == 0;
    }
    from = to;
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
  // About two waits a bucket, each bucket a span of starts of a power of
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
  uint32_t sum = 0, most = 0;  // each bucket's first place; the most in one
  for (size_t b = 0; b < count; b++) {
    const uint32_t c = at[b];
    at[b] = sum;
    sum += c;
    most = std::max(most, c);
  }
  uint32_t *const o = order->data();
  for (uint32_t i = 0; i < n; i++) o[at[bucketOf(waits[i])]++] = i;  // at[b]: its end now
  // Sorted by insertion in one pass over all of them (each bucket's in
  // place: a wait moves back only past later ones of its bucket), or
  // bucket by bucket when one holds many.
  const bool tie = most <= kFewInBucket ? sortBucket(waits, o, 0, n) : sortBuckets(waits, o, at, count);
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
