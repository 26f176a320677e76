// Findings: what a newcomer should look at first, computed from a
// SessionModel over a time range (docs/findings.md gives every threshold
// and the reasoning behind it). QtCore only.
#ifndef THREADMON_FINDINGS_H
#define THREADMON_FINDINGS_H

#include <QJsonObject>
#include <QString>
#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "modeltypes.h"
#include "views.h"

namespace tmon {

class SessionModel;

enum class FindingKind {
#define TM_FINDING(kind, key, view, merge, runtime, severity) kind,
#include "findings.def"
#undef TM_FINDING
};
enum class Severity { High = 0, Medium = 1, Low = 2 };

// What makes findings of two windows the same one (findings.def).
enum class FindingMerge { Newest, Cycle, Objects, Threads, Lock, Program };
// What becomes of a finding about a runtime's own machinery (findings.def).
enum class FindingRuntime { Drop, Keep };

struct FindingInfo {
  FindingKind kind;
  const char *key;  // "deadlock", "serialising_object", ... (the JSON keys)
  ViewKind view;
  FindingMerge merge;
  FindingRuntime runtime;
};

inline constexpr FindingInfo kFindings[] = {
#define TM_FINDING(kind, key, view, merge, runtime, severity) \
  {FindingKind::kind, key, ViewKind::view, FindingMerge::merge, FindingRuntime::runtime},
#include "findings.def"
#undef TM_FINDING
};
inline constexpr int kFindingKindCount = int(sizeof kFindings / sizeof kFindings[0]);

inline constexpr const FindingInfo &findingInfo(FindingKind k) {
  return kFindings[int(k)];
}
inline const char *findingKindKey(FindingKind k) {
  return findingInfo(k).key;
}
// "high", "medium", "low".
const char *severityKey(Severity s);

struct Finding {
  FindingKind kind = FindingKind::SerialisingObject;
  Severity severity = Severity::Low;
  QString message;        // one or two plain sentences
  QJsonObject evidence;   // the numbers behind it (tids, object ids, shares, times)
  std::vector<uint32_t> threads;  // tids involved
  std::vector<uint32_t> objects;  // sync object ids involved
  int64_t t0 = 0;         // the span it is about
  int64_t t1 = 0;
};

// Default thresholds (docs/findings.md).
namespace finding {
// serialising_object: summed blocked time on one object / summed lifetime
// of the program's threads, with at least this many distinct waiters.
constexpr double kSerialisingShare = 0.20;
constexpr int kSerialisingMinWaiters = 2;
// starved_writer: a rwlock's waits held off by its readers (a writer's: the
// holder at arrival unknown, no writer holding it) / the waiter's lifetime.
constexpr double kStarvedWriterShare = 0.30;
// internal_lock: estimated time lost to the lock (asleep on it, and system
// time in calls for it) / summed thread time of its waiters.
constexpr double kInternalShare = 0.10;
// gil_contention: time waiting for CPython's GIL / summed lifetime of the
// threads that waited for it.
constexpr double kGilShare = 0.20;
// java_lock: time blocked entering Java monitors (or parked by
// java.util.concurrent) / summed lifetime of the threads that did, with at
// least this many of them.
constexpr double kJavaLockShare = 0.20;
constexpr int kJavaLockMinThreads = 2;
// java_lock (park): a wake-up edge between two parking threads takes part in
// the cycle test only when the wait it carries (both ways) is at least this
// share of the smaller of the two threads' waits woken by peers. An
// executor's pool threads sometimes meet on its queue's lock (one wake-up of
// 0.4 ms against 1.6 s parked for work); a lock's holders hand it round and
// each edge carries about 2/(n-1) of their waits.
constexpr double kJavaParkEdgeShare = 0.05;
// gil_contention, java_lock: a thread is one of the waiters named only when
// its wait of that kind is at least this share of its own lifetime. A
// ReentrantLock worker once waited 0.45 ms on a JVM monitor (a class being
// initialised by another thread) in 1.5 s and was named among the
// synchronized block's waiters.
constexpr double kRuntimeWaiterMinShare = 0.01;
// oversubscribed: runnable share of the program threads' summed lifetime,
// counted while more threads were runnable than CPUs.
constexpr double kOversubscribedShare = 0.25;
// undersubscribed: share of the run with idle CPUs while program threads
// still had work (some blocked at a barrier/join waiting for the others).
constexpr double kUndersubscribedShare = 0.10;
// barrier_imbalance: average wait of the non-last arrivals / round length,
// with the last arrival waiting less than kBarrierLastShare of the round.
constexpr double kBarrierWaitShare = 0.30;
constexpr double kBarrierLastShare = 0.05;
constexpr int kBarrierMinRounds = 3;
// data_lost: switch records lost below this share of all (and nothing
// else lost) are a Low finding, not a High one; folded changes whose gaps
// held below this share of their threads' time, Low, not Medium.
constexpr double kDataLostMinorShare = 0.01;
// never_runs: alive at least this long (and this share of the session)
// with on_cpu below kNeverRunsOnCpu and not blocked in a sync call.
constexpr int64_t kNeverRunsMinLifeNs = 500'000'000;
constexpr double kNeverRunsMinSessionShare = 0.20;
constexpr double kNeverRunsOnCpu = 0.005;
constexpr double kNeverRunsMaxSyncBlocked = 0.50;
// never_runs, not starved: at least this share of its life in a system
// call that says nothing of what it waits for (not a sync call, a sleep
// call or a wait for work).
constexpr double kNeverRunsMinStuck = 0.50;
// user_threads_share_lwps: more user threads than the LWPs they ran on;
// medium when dispatchable at least this share of their summed lives with
// fewer LWPs than CPUs. user_thread_handoff: the same dispatchable share,
// at most this many microseconds on an LWP per dispatch on average, and
// their LWPs idle in their own context (parked, or woken and waiting for a
// CPU) at least this share of the LWPs' time.
constexpr double kUserDispatchableShare = 0.25;
constexpr double kHandoffMaxSpanUs = 100.0;
constexpr double kHandoffIdleShare = 0.10;
// Severity: a share this many times its threshold is high.
constexpr double kHighFactor = 2.0;
}  // namespace finding

// Every finding over r, most severe first (then by kind order above); of a
// flight recorder's capture, over the part of r with its kept detail.
std::vector<Finding> computeFindings(const SessionModel &m, const TimeRange &r);
// Objects' waiters' time over r (SessionModel::waiterNs) a caller already
// has, by object id (the report): the rules ask the model for the others.
using KnownWaiterNs =
    std::unordered_map<uint32_t, const std::vector<std::pair<uint32_t, int64_t>> *>;
// What rules read over r that a report read a window at a time sums over
// its windows, to give their findings of the whole run (streamfindings.h).
struct FindingInputs {
  // oversubscribed: the program's runnable time beyond the CPUs (ns), the
  // CPUs, the machine's busy share of them over r (-1: unknown).
  double runnableBeyondCpusNs = 0;
  int cpus = 0;
  double cpuBusy = -1;
  // The program's threads over r: tid, ns on a CPU or runnable, life in r.
  struct Active {
    uint32_t tid;
    int64_t activeNs, lifeNs;
  };
  std::vector<Active> active;
  // undersubscribed: the time of r in phases that left CPUs idle while
  // threads waited at a barrier, and the most threads that held a CPU at
  // once (average over a bin).
  int64_t idlePhaseNs = 0;
  double maxOccupying = 0;
  // barrier_imbalance: the rounds released in r at each barrier (or
  // condition) the program's threads waited on, in order of release.
  struct Round {
    uint32_t object = 0;
    bool barrier = false;  // a barrier's, else a condition's
    int64_t end = 0;       // release
    uint32_t releaser = 0, last = 0;
    double lastWait = 0, othersWait = 0;  // ns, the others' average
    int waiters = 0;
  };
  std::vector<Round> rounds;
  // gil_contention and java_lock: each object whose call sites include a
  // runtime's lock (the GIL, Java monitors, Java parks), its call sites'
  // wait by kind (StackWait) and every thread's waits on it by waiter and
  // by the thread that released it: all the rules read of them.
  struct RuntimeObject {
    std::map<int, double> siteWaitNs;
    std::map<std::pair<uint32_t, uint32_t>, int64_t> byEdge;  // (waiter, releaser): ns
  };
  std::map<uint32_t, RuntimeObject> runtimeObjects;
  // never_runs: what the model knows of each program thread's time over r
  // besides its states (a streamed report's rows sum those, with the
  // blocked time the merge carries over a segment's edge): its waits on
  // hidden locks, its time in event gaps, its chosen sleep, the ticks that
  // found it asleep by kind, whether it has kernel samples; and whether the
  // capture tells a sleep's cause.
  struct Waiting {
    uint32_t tid = 0;
    int64_t internalWaitNs = 0, gapNs = 0, chosenSleepNs = 0;
    std::array<uint64_t, kAsleepKinds> asleep{};
    bool sampled = false;
  };
  std::vector<Waiting> waiting;
  bool sleepKnown = false;
  // user_thread_handoff: the times user threads were put on an LWP in r
  // (a span going on at r's start is the range's before's).
  int64_t userSpansBegun = 0;
  // internal_lock: the finding each hidden lock would make whose share in r
  // is under the rule's. Sightings come a few a second: a run's share may
  // be over it where no window's is (0.116 read whole, no 1 s window over
  // 0.10), and a streamed report judges the run's (StreamFindings).
  std::vector<Finding> internalUnder;
};
// inputs, when given, filled with what the rules read over r.
std::vector<Finding> computeFindings(const SessionModel &m, const TimeRange &r,
                                     const KnownWaiterNs &known, FindingInputs *inputs = nullptr);

}  // namespace tmon

#endif
