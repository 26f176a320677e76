// RunSummary: every thread's final states per fixed bucket of a long
// capture (the level of detail the whole-run and zoomed-out views and the
// totals need), built by reading the capture a chunk at a time through its
// index (CaptureWindow), so its memory is one chunk's model plus the
// buckets: StateTimes per thread and bucket, 112 bytes, 44 MB for an hour of
// 102 threads at 1 s.
#ifndef THREADMON_RUNSUMMARY_H
#define THREADMON_RUNSUMMARY_H

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "modeltypes.h"

namespace tmon {

class CaptureWindow;

class RunSummary {
 public:
  static constexpr int64_t kBucketNs = 1'000'000'000;
  static constexpr int64_t kChunkNs = 30 * kBucketNs;  // read at a time

  // Reads the whole capture, chunkNs at a time (a multiple of kBucketNs);
  // progress gets the share done (0..1) after each chunk and may return
  // false to stop (the summary then ends there).
  bool build(const CaptureWindow &cw, const std::function<bool(double)> &progress = {},
             int64_t chunkNs = kChunkNs);

  int64_t startNs() const { return start_; }
  int64_t endNs() const { return start_ + int64_t(buckets_) * kBucketNs; }
  size_t buckets() const { return buckets_; }
  std::vector<uint32_t> tids() const;
  // A thread's states over r, from the buckets r covers; a bucket r covers
  // in part counts in proportion (zoomed-out views: the parts are under a
  // pixel). Empty for a tid never seen.
  StateTimes states(uint32_t tid, const TimeRange &r) const;
  size_t bytes() const;

 private:
  int64_t start_ = 0;
  size_t buckets_ = 0;
  std::unordered_map<uint32_t, std::vector<StateTimes>> rows_;  // by tid, one per bucket
};

}  // namespace tmon

#endif
