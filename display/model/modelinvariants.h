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
//    counter agrees with its waits (and what its threads folded in waits).
//
// Each bound allows one tick per thread (kernel counters are read once a
// tick, waits end at the tick that sees them end).
#ifndef THREADMON_MODELINVARIANTS_H
#define THREADMON_MODELINVARIANTS_H

#include <QStringList>
#include <set>
#include <vector>

#include "modeltypes.h"

namespace tmon {

class SessionModel;

// What the check may compare with an object's counters. An object's wait
// counter takes a wait, whole, at its end: a model read from a window of a
// capture does not hold the part of a wait from before its window (nor its
// waiter, when the wait spans the window), so it can check its waits but
// not their counters; its reader compares those once its windows are
// merged (checkMergedWaits).
enum class CounterCheck { Compare, WindowOnly };

// What the checks need of an object's waits over r, summed from its waits
// and its who-blocked-whom cells (SessionModel::waitSums): a caller that
// asks the model for both anyway (the report) gives these, so that the
// checks do not ask again (asking twice was a tenth of the report's CPU).
struct ObjectWaitSums {
  size_t waiters = 0;                                // distinct threads
  int64_t recorded = 0, blamed = 0, unfinished = 0;  // closed waits; all but self-released; open
  uint64_t count = 0;                                // closed waits' count
  int64_t cells = 0;                                 // the who-blocked-whom cells' wait
};
ObjectWaitSums sumWaits(const WaitSums &waits);

// One line per violation over r (empty: none), naming the thread or object
// and both numbers. `known`, when given, holds one entry per object (an
// internal object's is not used); `attributed`, when given, each thread's
// threadStatesAttributed over r (by index), as the caller asked for them.
QStringList checkInvariants(const SessionModel &m, const TimeRange &r,
                            CounterCheck counters = CounterCheck::Compare,
                            const std::vector<ObjectWaitSums> &known = {},
                            const std::vector<StateTimes> &attributed = {});

// An object's waits over a whole run as a windowed reader merged them.
struct MergedWaits {
  SyncObjectInfo info;
  bool hasCounters = false;    // its samples were read
  int64_t counterNs = 0;       // its wait counter over the run
  int64_t holdNs = 0;          // its hold counter over the run (an estimate)
  int64_t waitsNs = 0;         // its waits' pieces, summed (open ones to the end)
  int64_t openBoundNs = 0;     // at most this much of them still went on at the end
  uint64_t pieces = 0;         // how many pieces (a wait across windows is several)
  std::set<uint32_t> waiters;  // who waited
};

// The counter checks of checkInvariants, over a run of runNs whose threads
// lived livesNs in all. `comparable`: the capture's waits and counters
// cover the same span (countersComparable). foldedWaitNs: the threads' time
// folded in waits on objects (SessionModel::foldedObjectWaitNs) over the
// run, counted by the objects' counters but in no wait.
QStringList checkMergedWaits(const std::vector<MergedWaits> &objects, int64_t runNs,
                             int64_t livesNs, size_t threads, int64_t tickNs, bool comparable,
                             int64_t foldedWaitNs);

// The waits of a capture with this info are those its counters counted: it
// ended with a Goodbye, kept every window's detail (not a flight recorder's
// last window only) and had no gap.
bool countersComparable(const SessionInfo &info);

}  // namespace tmon

#endif
