#include "poolmix.h"

#include <algorithm>

#include "sessionmodel.h"

namespace tmon {

StateMix::StateMix(const TimeRange &r, int width)
    : range(r),
      columns(std::max(0, width)),
      cover(size_t(columns) * kFinalStateCount, 0.f),
      folded(size_t(columns), 0.f) {}

namespace {

double pxPerNs(const StateMix &mix) {
  return double(mix.columns) / double(std::max<int64_t>(1, mix.range.length()));
}

// Calls add(column, share) for each column [t0, t1) covers part of
// (pxPerNs(mix): computed once for many calls).
template <typename Add>
void spread(const StateMix &mix, double pxPerNs, int64_t t0, int64_t t1, Add add) {
  const int w = mix.columns;
  // In floating point: times anywhere in int64 stay far from overflow.
  const double x0 = std::max(0.0, (double(t0) - double(mix.range.t0)) * pxPerNs);
  const double x1 = std::min(double(w), (double(t1) - double(mix.range.t0)) * pxPerNs);
  const int first = int(x0);
  // Most intervals of a window lie in one column: its share, as the loop
  // below computes it (min(x1, c + 1) is x1, max(x0, c) is x0).
  if (first < w && x1 <= first + 1.0) {
    if (x1 - x0 > 0) add(size_t(first), float(x1 - x0));
    return;
  }
  for (int c = first; c < w && c < x1; ++c) {
    const double part = std::min(x1, c + 1.0) - std::max(x0, double(c));
    if (part > 0) add(size_t(c), float(part));
  }
}

}  // namespace

void StateMix::add(const std::vector<StateInterval> &intervals) {
  ++threads;
  const double scale = pxPerNs(*this);
  for (const StateInterval &iv : intervals) {
    const size_t s = size_t(iv.state);
    spread(*this, scale, iv.start, iv.end,
           [&](size_t c, float part) { cover[c * kFinalStateCount + s] += part; });
  }
}

void StateMix::addFolded(const std::vector<TimeRange> &spans) {
  for (const TimeRange &g : spans)
    spread(*this, pxPerNs(*this), g.t0, g.t1, [&](size_t c, float part) { folded[c] += part; });
}

StateMix stateMix(const SessionModel &m, const std::vector<int> &threads, const TimeRange &r,
                  int columns) {
  StateMix mix(r, columns);
  std::vector<StateInterval> ivs;  // one vector for every thread's
  for (int i : threads) {
    m.intervals(i, r, &ivs);
    mix.add(ivs);
    mix.addFolded(m.eventGapSpans(i, r));
  }
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
