// The state mix of some threads (a pool, or one thread) per pixel column of
// a span of time: for each column and final state, the threads' shares of
// the column's time in that state, summed. A column of a pool of 4 where 3
// were blocked on a mutex the whole column holds 3 in BlockedMutex and 1 in
// what the fourth did; threads not alive (or not known) add nothing, so a
// column sums to the threads alive through it. What the timeline draws for
// a pool row (each column split by these shares) and, for one thread, the
// state that filled most of each column.
#ifndef THREADMON_MODEL_POOLMIX_H
#define THREADMON_MODEL_POOLMIX_H

#include <array>
#include <vector>

#include "modeltypes.h"

namespace tmon {

class SessionModel;

struct StateMix {
  TimeRange range;
  int columns = 0;
  int threads = 0;           // added to it
  std::vector<float> cover;  // columns x kFinalStateCount
  // Per column, the threads' shares of it whose states are folded totals
  // (the probe's ring was full: the order inside is not what happened).
  std::vector<float> folded;

  // An empty mix of `width` columns over r.
  StateMix(const TimeRange &r = {}, int width = 0);
  const float *column(int c) const { return &cover[size_t(c) * kFinalStateCount]; }
  float at(int c, FinalState s) const { return column(c)[size_t(s)]; }
  // Adds one thread's intervals (clipped to the range or not).
  void add(const std::vector<StateInterval> &intervals);
  // Adds one thread's spans of folded states (SessionModel::eventGapSpans).
  void addFolded(const std::vector<TimeRange> &spans);
};

// The mix of these threads (model indices) over r in `columns` columns.
// Cost: their intervals in r plus the columns each thread lived through (a
// thread's intervals never overlap, so at most intervals + columns each).
StateMix stateMix(const SessionModel &m, const std::vector<int> &threads, const TimeRange &r,
                  int columns);

// How many of these threads were in each state at t; the last slot counts
// those not alive then (or with no data).
using StateCounts = std::array<int, kFinalStateCount + 1>;
StateCounts statesAt(const SessionModel &m, const std::vector<int> &threads, int64_t t);

}  // namespace tmon

#endif
