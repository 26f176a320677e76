// RunSummary: every thread's final states per fixed bucket of a long
// capture (the level of detail the whole-run and zoomed-out views and the
// totals need): StateTimes per thread and bucket, 112 bytes, 44 MB for an
// hour of 102 threads at 1 s. read() takes it from the capture's Summary
// records (docs/format.md, "Summaries": its writer made them, a few MB to
// read for an hour); build() derives it from the detail, a chunk at a time
// through the index (CaptureWindow), for captures written without them.
#ifndef THREADMON_RUNSUMMARY_H
#define THREADMON_RUNSUMMARY_H

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "modeltypes.h"

namespace tmon {

class CaptureWindow;
class SessionModel;

class RunSummary {
 public:
  static constexpr int64_t kBucketNs = 1'000'000'000;
  // Threads times buckets held at most (448 MiB of StateTimes: an hour of
  // 1,100 threads): a crafted capture's summary stops there instead of
  // allocating without end.
  static constexpr size_t kMaxCells = size_t(4) << 20;

  // Reads the whole capture, chunkNs at a time (a multiple of kBucketNs) on
  // the grid from the session's start, as SummaryBuild does (the default:
  // the Summarizer's chunks, so the result is what Summary records say);
  // progress gets the share done (0..1) after each chunk and may return
  // false to stop (the summary then ends there).
  bool build(const CaptureWindow &cw, const std::function<bool(double)> &progress = {},
             int64_t chunkNs = 10 * kBucketNs);
  // Takes the capture's Summary records; false when it has none. Values a
  // crafted record gives beyond its bucket are clamped to it (counted in
  // clamped()), buckets outside the capture's span ignored.
  bool read(const CaptureWindow &cw);

  // What model (a chunk's) says of each thread over [from, end), split at
  // the buckets counted from start: fn(tid, bucket, states) for each part.
  using BucketFn = std::function<void(uint32_t tid, size_t bucket, const StateTimes &)>;
  static void foldChunk(const SessionModel &m, int64_t start, int64_t from, int64_t end,
                        const BucketFn &fn);
  // Adds one bucket of one thread (from a Summary record); false when the
  // bucket lies outside [start, start + maxBuckets) or the cells are used up.
  bool addBucket(uint32_t tid, size_t bucket, const StateTimes &st);
  void setStart(int64_t startNs, size_t maxBuckets);
  // Drops every bucket from the buckets-th on (records of a capture cut
  // short, kept up to their last whole chunk before the rest is built).
  void truncate(size_t buckets);

  int64_t startNs() const { return start_; }
  int64_t endNs() const { return start_ + int64_t(buckets_) * kBucketNs; }
  size_t buckets() const { return buckets_; }
  size_t clamped() const { return clamped_; }
  std::vector<uint32_t> tids() const;
  // A thread's states over r, from the buckets r covers; a bucket r covers
  // in part counts in proportion (zoomed-out views: the parts are under a
  // pixel). Empty for a tid never seen.
  StateTimes states(uint32_t tid, const TimeRange &r) const;
  // One bucket of one thread as summed (empty past the end).
  StateTimes bucket(uint32_t tid, size_t k) const;
  size_t bytes() const;

 private:
  std::vector<StateTimes> &row(uint32_t tid);
  void clear();
  int64_t start_ = 0;
  size_t buckets_ = 0;
  size_t maxBuckets_ = 0;
  size_t clamped_ = 0;
  std::unordered_map<uint32_t, std::vector<StateTimes>> rows_;  // by tid, one per bucket
};

}  // namespace tmon

#endif
