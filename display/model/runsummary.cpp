#include "runsummary.h"

#include <algorithm>

#include "capturewindow.h"
#include "sessionmodel.h"

namespace tmon {

bool RunSummary::build(const CaptureWindow &cw, const std::function<bool(double)> &progress,
                       int64_t chunkNs) {
  rows_.clear();
  start_ = 0;
  buckets_ = 0;
  const int64_t first = cw.firstNs(), last = cw.lastNs();
  if (last <= first) return false;
  for (int64_t a = first; a < last; a += chunkNs) {
    const int64_t b = std::min(last, a + chunkNs);
    SessionModel m;
    cw.load(a, b, &m);
    m.settleNow();
    if (!start_) start_ = m.startNs();
    // The first chunk starts at the session's start (before its first tick).
    const int64_t from = a == first ? std::min(a, start_) : a;
    // Buckets count from the session's start; a chunk's first bucket may
    // begin in the chunk before (its part there was counted then).
    const int64_t end = b < last ? std::min(b, m.latestNs()) : m.latestNs();
    const size_t need = size_t((end - start_ + kBucketNs - 1) / kBucketNs);
    buckets_ = std::max(buckets_, need);
    for (int i = 0; i < m.threadCount(); i++) {
      std::vector<StateTimes> &row = rows_[m.thread(i).tid];
      row.resize(buckets_);
      for (int64_t s = from - (from - start_) % kBucketNs; s < end; s += kBucketNs) {
        const TimeRange r{std::max(s, from), std::min(s + kBucketNs, end)};
        if (r.t1 <= r.t0) continue;
        const StateTimes st = m.threadStates(i, r);
        StateTimes &to = row[size_t((s - start_) / kBucketNs)];
        for (size_t k = 0; k < st.ns.size(); k++) to.ns[k] += st.ns[k];
        to.lifetimeNs += st.lifetimeNs;
      }
    }
    if (progress && !progress(double(b - first) / double(last - first))) return false;
  }
  for (auto &[tid, row] : rows_) row.resize(buckets_);
  return true;
}

std::vector<uint32_t> RunSummary::tids() const {
  std::vector<uint32_t> out;
  for (const auto &kv : rows_) out.push_back(kv.first);
  std::sort(out.begin(), out.end());
  return out;
}

StateTimes RunSummary::states(uint32_t tid, const TimeRange &r) const {
  StateTimes out;
  auto it = rows_.find(tid);
  if (it == rows_.end() || r.t1 <= r.t0) return out;
  const int64_t t0 = std::max(r.t0, start_), t1 = std::min(r.t1, endNs());
  for (int64_t s = t0 - (t0 - start_) % kBucketNs; s < t1; s += kBucketNs) {
    const StateTimes &b = it->second[size_t((s - start_) / kBucketNs)];
    const int64_t covered = std::min(t1, s + kBucketNs) - std::max(t0, s);
    for (size_t k = 0; k < b.ns.size(); k++)
      out.ns[k] += covered == kBucketNs ? b.ns[k] : b.ns[k] * covered / kBucketNs;
    out.lifetimeNs += covered == kBucketNs ? b.lifetimeNs : b.lifetimeNs * covered / kBucketNs;
  }
  return out;
}

size_t RunSummary::bytes() const {
  size_t b = sizeof(*this);
  for (const auto &kv : rows_) b += kv.second.capacity() * sizeof(StateTimes) + 32;
  return b;
}

}  // namespace tmon
