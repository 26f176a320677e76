// Invariants no capture may break, whatever recorded it (the probe, the
// external sampler, a flight recorder) and however it was read (whole, a
// window): numbers that cannot be true are a bug of the recorder or the
// model, and are said, never clamped silently (issue 24, docs/findings.md,
// "Numbers that cannot be").
//
//  - a thread's states sum to at most its life in the window, and that life
//    to at most the window;
//  - an LWP's kernel times (user + system, on-CPU, run queue) fit in its
//    life in the window;
//  - an object's wait is at most the window times the threads that waited
//    on it;
//  - an object's who-blocked-whom cells sum to its waits, and its wait
//    counter agrees with its waits.
//
// Each bound allows one tick per thread (kernel counters are read once a
// tick, waits end at the tick that sees them end).
#ifndef THREADMON_MODELINVARIANTS_H
#define THREADMON_MODELINVARIANTS_H

#include <QStringList>
#include <vector>

#include "modeltypes.h"

namespace tmon {

class SessionModel;

// One line per violation over r (empty: none), naming the thread or object
// and both numbers.
QStringList checkInvariants(const SessionModel &m, const TimeRange &r);

// What the checks need of an object's waits over r, summed from its waits
// and its who-blocked-whom cells: a caller that asks the model for both
// anyway (the report) gives these, so that the checks do not ask again
// (asking twice was a tenth of the report's CPU).
struct ObjectWaitSums {
  size_t waiters = 0;                                // distinct threads
  int64_t recorded = 0, blamed = 0, unfinished = 0;  // closed waits; all but self-released; open
  uint64_t count = 0;                                // closed waits' count
  int64_t cells = 0;                                 // the who-blocked-whom cells' wait
};
ObjectWaitSums sumWaits(const std::vector<WaitRecord> &waits,
                        const std::vector<WaitPair> &blockedBy);
// The same checks with them: known holds one entry per object (an
// internal object's is not used).
QStringList checkInvariants(const SessionModel &m, const TimeRange &r,
                            const std::vector<ObjectWaitSums> &known);

}  // namespace tmon

#endif
