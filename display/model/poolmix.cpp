#include "poolmix.h"

#include <algorithm>

#include "sessionmodel.h"

namespace tmon {

StateMix::StateMix(const TimeRange &r, int width)
    : range(r), columns(std::max(0, width)), cover(size_t(columns) * kFinalStateCount, 0.f) {}

void StateMix::add(const std::vector<StateInterval> &intervals) {
  ++threads;
  const int w = columns;
  const double pxPerNs = double(w) / double(std::max<int64_t>(1, range.length()));
  for (const StateInterval &iv : intervals) {
    // In floating point: times anywhere in int64 stay far from overflow.
    const double x0 = std::max(0.0, (double(iv.start) - double(range.t0)) * pxPerNs);
    const double x1 = std::min(double(w), (double(iv.end) - double(range.t0)) * pxPerNs);
    const size_t s = size_t(iv.state);
    for (int c = int(x0); c < w && c < x1; ++c) {
      const double part = std::min(x1, c + 1.0) - std::max(x0, double(c));
      if (part > 0) cover[size_t(c) * kFinalStateCount + s] += float(part);
    }
  }
}

StateMix stateMix(const SessionModel &m, const std::vector<int> &threads, const TimeRange &r,
                  int columns) {
  StateMix mix(r, columns);
  for (int i : threads) mix.add(m.intervals(i, r));
  return mix;
}

StateCounts statesAt(const SessionModel &m, const std::vector<int> &threads, int64_t t) {
  StateCounts n{};
  for (int i : threads) {
    StateInterval iv;
    ++n[m.stateAt(i, t, &iv) ? size_t(iv.state) : size_t(kFinalStateCount)];
  }
  return n;
}

}  // namespace tmon
