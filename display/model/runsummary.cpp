#include "runsummary.h"

#include <algorithm>

#include "capturewindow.h"
#include "sessionmodel.h"
#include "summarybuild.h"
#include "summaryrecord.h"

namespace tmon {

void RunSummary::clear() {
  rows_.clear();
  start_ = 0;
  buckets_ = 0;
  maxBuckets_ = 0;
  clamped_ = 0;
}

void RunSummary::setStart(int64_t startNs, size_t maxBuckets) {
  start_ = startNs;
  maxBuckets_ = maxBuckets;
}

std::vector<StateTimes> &RunSummary::row(uint32_t tid) {
  return rows_[tid];
}

bool RunSummary::addBucket(uint32_t tid, size_t bucket, const StateTimes &st) {
  if (bucket >= maxBuckets_) return false;
  std::vector<StateTimes> &r = row(tid);
  if (r.size() <= bucket) {
    if ((rows_.size()) * std::max(buckets_, bucket + 1) > kMaxCells) return false;
    r.resize(bucket + 1);
  }
  // A bucket holds at most its width of each: repeated records of a crafted
  // capture cannot add up past it (nor overflow).
  StateTimes &to = r[bucket];
  for (size_t k = 0; k < st.ns.size(); k++) to.ns[k] = std::min(kBucketNs, to.ns[k] + st.ns[k]);
  to.lifetimeNs = std::min(kBucketNs, to.lifetimeNs + st.lifetimeNs);
  buckets_ = std::max(buckets_, bucket + 1);
  return true;
}

void RunSummary::foldChunk(const SessionModel &m, int64_t start, int64_t from, int64_t end,
                           const BucketFn &fn) {
  for (int i = 0; i < m.threadCount(); i++) {
    const uint32_t tid = m.thread(i).tid;
    for (int64_t s = from - (from - start) % kBucketNs; s < end; s += kBucketNs) {
      const TimeRange r{std::max(s, from), std::min(s + kBucketNs, end)};
      if (r.t1 <= r.t0) continue;
      fn(tid, size_t((s - start) / kBucketNs), m.threadStates(i, r));
    }
  }
}

bool RunSummary::build(const CaptureWindow &cw, const std::function<bool(double)> &progress,
                       int64_t chunkNs) {
  clear();
  const int64_t last = cw.lastNs();
  if (last <= cw.firstNs()) return false;
  const int64_t start = SummaryBuild::sessionStart(cw);
  setStart(start, size_t((last - start) / kBucketNs + 2));
  const std::vector<TimeRange> chunks = SummaryBuild::plan(start, start, last, chunkNs);
  for (size_t i = 0; i < chunks.size(); i++) {
    SummaryBuild::merge(SummaryBuild::fold(cw, start, last, chunks[i]), this);
    if (progress && !progress(double(i + 1) / double(chunks.size()))) return false;
  }
  return true;
}

void RunSummary::truncate(size_t buckets) {
  for (auto &kv : rows_)
    if (kv.second.size() > buckets) kv.second.resize(buckets);
  buckets_ = std::min(buckets_, buckets);
}

bool RunSummary::read(const CaptureWindow &cw) {
  clear();
  if (!cw.hasSummaries()) return false;
  const int64_t last = cw.lastNs();
  cw.readSummaries([&](const uint8_t *p, uint32_t n) {
    SummaryRecord rec;
    if (!rec.unpack(p, n)) return;
    if (!start_) {
      // The first record's bucket starts the session (docs/format.md).
      if (last < rec.startNs()) return;
      setStart(rec.startNs(), size_t((last - rec.startNs()) / kBucketNs + 2));
    }
    if (rec.startNs() < start_ || (rec.startNs() - start_) % kBucketNs) return;
    const size_t k = size_t((rec.startNs() - start_) / kBucketNs);
    for (size_t i = 0; i < rec.threads(); i++) addBucket(rec.tid(i), k, rec.states(i));
    clamped_ += rec.clamped();
  });
  return start_ != 0;
}

std::vector<uint32_t> RunSummary::tids() const {
  std::vector<uint32_t> out;
  for (const auto &kv : rows_) out.push_back(kv.first);
  std::sort(out.begin(), out.end());
  return out;
}

StateTimes RunSummary::bucket(uint32_t tid, size_t k) const {
  auto it = rows_.find(tid);
  return it == rows_.end() || k >= it->second.size() ? StateTimes{} : it->second[k];
}

StateTimes RunSummary::states(uint32_t tid, const TimeRange &r) const {
  StateTimes out;
  auto it = rows_.find(tid);
  if (it == rows_.end() || r.t1 <= r.t0) return out;
  const int64_t t0 = std::max(r.t0, start_), t1 = std::min(r.t1, endNs());
  for (int64_t s = t0 - (t0 - start_) % kBucketNs; s < t1; s += kBucketNs) {
    const size_t k = size_t((s - start_) / kBucketNs);
    if (k >= it->second.size()) break;
    const StateTimes &b = it->second[k];
    const int64_t covered = std::min(t1, s + kBucketNs) - std::max(t0, s);
    for (size_t st = 0; st < b.ns.size(); st++)
      out.ns[st] += covered == kBucketNs ? b.ns[st] : b.ns[st] * covered / kBucketNs;
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
