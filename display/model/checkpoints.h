// Checkpoints: what evicted detail leaves behind (a live model's bound,
// SessionModel::keepDetailFor): cumulative sums at each cut, from which any
// span of evicted time is exact at the cuts and shared out evenly between
// them, and the whole of it exact.
#ifndef THREADMON_CHECKPOINTS_H
#define THREADMON_CHECKPOINTS_H

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tmon {

template <size_t N>
class Checkpoints {
 public:
  using Sums = std::array<int64_t, N>;

  // The detail of [last cut, t) left, adding up to part.
  void cut(int64_t t, const Sums &part) {
    Cut c{t, cuts_.empty() ? Sums{} : cuts_.back().sums};
    for (size_t k = 0; k < N; k++) c.sums[k] += part[k];
    cuts_.push_back(c);
  }
  bool empty() const { return cuts_.empty(); }
  int64_t last() const { return cuts_.empty() ? INT64_MIN : cuts_.back().t; }
  const Sums &total() const { return cuts_.back().sums; }
  // Sums from start (where they were zero) to t.
  Sums at(int64_t t, int64_t start) const {
    auto next = std::lower_bound(cuts_.begin(), cuts_.end(), t,
                                 [](const Cut &c, int64_t x) { return c.t < x; });
    if (next != cuts_.end() && next->t == t) return next->sums;
    const Cut zero{start, {}};
    const Cut &a = next == cuts_.begin() ? zero : *(next - 1);
    if (next == cuts_.end() || t <= a.t) return a.sums;
    const double f = double(t - a.t) / double(next->t - a.t);
    Sums v;
    for (size_t k = 0; k < N; k++)
      v[k] = a.sums[k] + int64_t(std::llround(double(next->sums[k] - a.sums[k]) * f));
    return v;
  }
  size_t bytes() const { return cuts_.capacity() * sizeof(Cut); }

 private:
  struct Cut {
    int64_t t;
    Sums sums;
  };
  std::vector<Cut> cuts_;
};

}  // namespace tmon

#endif
