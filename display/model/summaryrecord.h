// SummaryRecord: one threadmon.Summary frame (docs/format.md, "Summaries"):
// every thread's final states over one bucket of the session. pack() makes
// the frame's payload for a capture's writer; unpack() reads one back with
// its values clamped as FrameCheck clamps a frame's: no state or lifetime
// beyond the bucket's width, none negative, so sums of them cannot overflow.
#ifndef THREADMON_SUMMARYRECORD_H
#define THREADMON_SUMMARYRECORD_H

#include <cstdint>
#include <vector>

#include "modeltypes.h"

namespace tmon {

class SummaryRecord {
 public:
  // A bucket wider than this (an hour) is refused, not clamped.
  static constexpr int64_t kMaxBucketNs = 3'600'000'000'000;

  SummaryRecord() = default;
  SummaryRecord(int64_t startNs, int64_t endNs) : start_(startNs), end_(endNs) {}
  void add(uint32_t tid, const StateTimes &st);
  std::vector<uint8_t> pack() const;
  // False when the payload is no Summary frame or its bucket is empty,
  // reversed, wider than kMaxBucketNs or past the clock's range.
  bool unpack(const uint8_t *payload, uint32_t len);

  int64_t startNs() const { return start_; }
  int64_t endNs() const { return end_; }
  size_t threads() const { return tids_.size(); }
  uint32_t tid(size_t i) const { return tids_[i]; }
  const StateTimes &states(size_t i) const { return states_[i]; }
  size_t clamped() const { return clamped_; }

 private:
  int64_t start_ = 0, end_ = 0;
  std::vector<uint32_t> tids_;
  std::vector<StateTimes> states_;
  size_t clamped_ = 0;
};

}  // namespace tmon

#endif
