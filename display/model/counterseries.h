// CounterSeries: samples of cumulative counters over time, looked up as a
// step function (the value at t is the newest sample at or before t).
//
// Memory stays bounded over long sessions: samples newer than kRecentNs
// (relative to the newest) are kept at full resolution, older ones are
// thinned to one per kCoarseStepNs, so window edges in old data are exact
// to within a second.
#ifndef THREADMON_COUNTERSERIES_H
#define THREADMON_COUNTERSERIES_H

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "nearend.h"

namespace tmon {

template <int N>
class CounterSeries {
 public:
  static constexpr int64_t kRecentNs = 30'000'000'000;
  static constexpr int64_t kCoarseStepNs = 1'000'000'000;
  // Thinning runs once this much uncompacted old data has piled up.
  static constexpr int64_t kThinEveryNs = 10'000'000'000;

  using Values = std::array<uint64_t, N>;
  struct Point {
    int64_t t;
    uint32_t aux;   // per-series extra (e.g. CPU and state letter of an LWP)
    int32_t extra;  // another one, in what would be padding (an LWP's read time)
    std::array<uint64_t, N> v;
  };

  // Returns false when a sample with the same time was already present.
  bool add(int64_t t, uint32_t aux, const std::array<uint64_t, N> &v, int32_t extra = 0) {
    if (pts_.empty() || t > pts_.back().t) {
      pts_.push_back(Point{t, aux, extra, v});
      thin();
      return true;
    }
    auto it = std::lower_bound(pts_.begin(), pts_.end(), t,
                               [](const Point &p, int64_t x) { return p.t < x; });
    if (it != pts_.end() && it->t == t) return false;
    size_t idx = size_t(it - pts_.begin());
    pts_.insert(it, Point{t, aux, extra, v});
    if (idx < coarseEnd_) coarseEnd_++;
    return true;
  }

  // Newest sample at or before t, nullptr if none.
  const Point *at(int64_t t) const {
    // Most lookups are of the newest time (a sample or record arriving).
    if (!pts_.empty() && pts_.back().t <= t) return &pts_.back();
    auto it = std::upper_bound(pts_.begin(), pts_.end(), t,
                               [](int64_t x, const Point &p) { return x < p.t; });
    return it == pts_.begin() ? nullptr : &*(it - 1);
  }
  // at(t), searched from near (a sample of this series, or nullptr: the
  // newest): a walk forward in time asks for the sample after the last one.
  const Point *atNear(int64_t t, const Point *near) const {
    if (!near || (!pts_.empty() && pts_.back().t <= t)) return at(t);
    auto it = upperBoundNear(pts_.begin(), pts_.end(), pts_.begin() + (near - pts_.data()), t,
                             [](const Point &p) { return p.t; });
    return it == pts_.begin() ? nullptr : &*(it - 1);
  }
  // Oldest sample after t, nullptr if none.
  const Point *after(int64_t t) const {
    if (pts_.empty() || pts_.back().t <= t) return nullptr;
    auto it = std::upper_bound(pts_.begin(), pts_.end(), t,
                               [](int64_t x, const Point &p) { return x < p.t; });
    return it == pts_.end() ? nullptr : &*it;
  }
  // Samples at or after t are not thinned (INT64_MIN: none is): those still
  // to be read at full rate (a thread's states not derived from them yet:
  // a whole read derives once, after every sample came).
  void thinOnlyBefore(int64_t t) { thinBefore_ = t; }
  const Point &operator[](size_t i) const { return pts_[i]; }  // in time order
  const Point *first() const { return pts_.empty() ? nullptr : &pts_.front(); }
  const Point *last() const { return pts_.empty() ? nullptr : &pts_.back(); }
  size_t size() const { return pts_.size(); }
  size_t bytes() const { return pts_.capacity() * sizeof(Point); }

 private:
  // a - b (b >= 0), INT64_MIN for what lies before it: times come from the
  // file, and a forged one, or thinBefore_'s INT64_MIN, is the smallest.
  static int64_t before(int64_t a, int64_t b) { return a < INT64_MIN + b ? INT64_MIN : a - b; }
  void thin() {
    int64_t recentFrom = std::min(before(pts_.back().t, kRecentNs), thinBefore_);
    if (recentFrom == INT64_MIN || pts_[coarseEnd_].t >= before(recentFrom, kThinEveryNs)) return;
    size_t out = coarseEnd_;
    int64_t lastKept = coarseEnd_ > 0 ? pts_[coarseEnd_ - 1].t : INT64_MIN;
    size_t in = coarseEnd_;
    for (; in < pts_.size() && pts_[in].t < recentFrom; in++) {
      if (lastKept == INT64_MIN || pts_[in].t - lastKept >= kCoarseStepNs) {
        pts_[out++] = pts_[in];
        lastKept = pts_[in].t;
      }
    }
    coarseEnd_ = out;
    pts_.erase(pts_.begin() + std::ptrdiff_t(out), pts_.begin() + std::ptrdiff_t(in));
    if (pts_.capacity() > 2 * pts_.size() + 1024) pts_.shrink_to_fit();
  }

  std::vector<Point> pts_;
  size_t coarseEnd_ = 0;  // points before this index are already thinned
  int64_t thinBefore_ = INT64_MAX;
};

}  // namespace tmon

#endif
