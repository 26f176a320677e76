// Shared helpers of the findings rules (findings*.cpp): naming threads and
// objects the way a newcomer reads them, and the program's threads.
#ifndef THREADMON_FINDINGS_UTIL_H
#define THREADMON_FINDINGS_UTIL_H

#include <QJsonArray>
#include <QString>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "findings.h"
#include "sessionmodel.h"

namespace tmon {
namespace findings_detail {

struct ProgramThread {
  int index;
  uint32_t tid;
  StateTimes st;
};

// Every thread but the probe's and a runtime's housekeeping (runtimes.h;
// kept when they used more CPU than the rest), with its states over r
// (alive in r only), in thread index order.
std::vector<ProgramThread> programThreads(const SessionModel &m, const TimeRange &r);
// Of threads (the probe's left out) and whether each is a runtime's
// housekeeping (runtimes.h), those the rules count, as programThreads does.
std::vector<ProgramThread> chooseProgramThreads(const std::vector<ProgramThread> &all,
                                                const std::vector<bool> &housekeeping);
// Their tids.
std::set<uint32_t> programTids(const SessionModel &m, const TimeRange &r);
// What computeFindings' caller asked the rules to fill over r, or null.
FindingInputs *inputsFor(const SessionModel &m, const TimeRange &r);
// SessionModel::waiterNs, or what computeFindings' caller gave of it.
std::vector<std::pair<uint32_t, int64_t>> waiterNs(const SessionModel &m, uint32_t objectId,
                                                   const TimeRange &r);
// "looper-1 (4242)", or "thread 4242" when it has no name.
QString threadName(const SessionModel &m, uint32_t tid);
// "a (1), b (2) and c (3)"; many by pool (pools.h): "412 of the 500
// worker-# threads, 12 of the 40 io-# threads and 3 others (a (1), ...)".
QString threadList(const SessionModel &m, const std::vector<uint32_t> &tids);
// "mutex mutex_loop!mutexes+0x28", "a lock inside libc.so.6 (lock)", ...
QString objectName(const SessionModel &m, uint32_t objectId);
QString objectName(const SyncObjectInfo &o);
// The program's own function (module!function) on the object's busiest
// unwound call site in r, else on its first contention stack; empty when
// unknown.
QString programFunction(const SessionModel &m, uint32_t objectId, const TimeRange &r);
// Seconds since the session start.
double sessionSeconds(const SessionModel &m, int64_t t);
QString percent(double share);
QJsonArray tidArray(const std::vector<uint32_t> &tids);
// The "by share" severity of findings.def: high from finding::kHighFactor
// times the rule's threshold, else medium.
Severity severityByShare(double share, double threshold);

// The rules, each appending its findings.
void dataLostFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out);
// What the data_lost rule reads of a model over r, apart so that a streamed
// report can give it the whole run's: the threads with gaps of every
// window, the probe's share of the run (streamfindings.cpp).
struct DataLostInputs {
  uint64_t eventsDropped = 0, eventsFolded = 0, switchesLost = 0, switchesReceived = 0,
           framesDropped = 0;
  bool ended = false, goodbyeSeen = false;
  bool snapshot = false;         // a flight recorder's, written as the program ran on
  std::vector<uint32_t> gapped;  // threads with a gap in their events in r
  QString gappedList;            // threadList of them
  double probeRunnable = 0;      // the probe's thread's share waiting for a CPU
  // The gapped threads' time their gaps held (folded: ThreadInfo::folds),
  // and their lives, in r.
  int64_t foldedNs = 0, gappedLifeNs = 0;
  TimeRange r;
};
DataLostInputs dataLostInputs(const SessionModel &m, const TimeRange &r);
// A thread's time in its gaps over r from its cumulative fold points, in
// the wire states it was alive in.
int64_t foldedIn(const std::vector<FoldPoint> &folds, const TimeRange &r);
// A barrier's (or condition's) rounds summed for barrier_imbalance, round
// after round in order of release (barrierTally).
struct BarrierTally {
  bool barrier = false;
  bool hasPrev = false;
  int64_t prevEnd = 0;
  int n = 0;
  double othersShare = 0, lastShare = 0;  // summed over the rounds counted
  std::map<uint32_t, int> lastCount, releasers;
};
void barrierTally(BarrierTally *t, const FindingInputs::Round &rd);
// What barrier_imbalance says of a tally besides its figures: the object's
// name, the threads that waited (sorted), how to name a thread, the usual
// last arrival's CPU time and the others' average (ns; others 0: unknown),
// its share asleep (asleepShare) and its share idle.
struct BarrierContext {
  QString objectName;
  std::vector<uint32_t> threads;
  std::function<QString(uint32_t)> threadName;
  std::function<void(uint32_t last, double *cpuLast, double *cpuOthers)> cpu;
  std::function<double(uint32_t)> asleepShare, idleShare;
};
// The finding of a tally over r; false when it is no imbalance.
bool barrierFinding(uint32_t object, const BarrierTally &t, const BarrierContext &c,
                    const TimeRange &r, Finding *f);
// The oversubscribed finding of busy threads (busyTids, their lives summed
// in life) runnable for runnableNs beyond the CPUs over r; false under the
// rule's threshold.
bool oversubscribedFinding(const std::vector<uint32_t> &busyTids, int64_t life, double runnableNs,
                           int cpus, double cpuBusy, const TimeRange &r, Finding *f);
// The undersubscribed finding of the program's threads (tids) over r, whose
// phases left CPUs idle for idlePhaseNs, at most maxOccupying threads
// holding a CPU at once; false when the rule does not hold.
bool undersubscribedFinding(const std::vector<uint32_t> &tids, int64_t idlePhaseNs,
                            double maxOccupying, int cpus, double cpuBusy, const TimeRange &r,
                            Finding *f);
// The data_lost finding of those inputs; false when nothing was lost.
bool dataLostFinding(const DataLostInputs &in, Finding *f);
void deadlockFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out);
// A deadlock finding's last sentence: when it formed, how long it lasted.
QString deadlockLasted(double formedS, double lastedS, bool live);
void serialisingFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out);
// A serialising object's waits over its waiters' own lives (0 with none).
double ownShare(int64_t waitedNs, int64_t waitersLifeNs);
// The waiters its sentence names and whose lives its own share is over:
// those that waited 1% of their lives or more (the holder's one 3 us wait
// made mutex_hold's waiters, blocked 79% of the time, read 52%); all of
// them when none did. byWaiter: each waiter's wait; lifeOf: its life.
struct SentenceWaiters {
  std::vector<uint32_t> tids;
  int64_t waitedNs = 0, lifeNs = 0;
};
SentenceWaiters sentenceWaiters(const std::map<uint32_t, int64_t> &byWaiter,
                                const std::function<int64_t(uint32_t)> &lifeOf);
// Its finding's sentence: the waiters' own share, the program's (the rule's)
// beside it, the object and the program's function that took it.
QString serialisingMessage(const QString &waiters, double ownShare, double programShare,
                           const QString &object, const QString &takenIn);
void internalLockFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out);
void schedulingFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out);
void neverRunsFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out);
// The never_runs finding of program thread p over r: waiting gives what the
// model knows of its waits (asked only when its states leave it a
// candidate), sleepKnown whether the capture tells a sleep's cause,
// threadName its words for a thread; false when the rule does not hold.
bool neverRunsFinding(const ProgramThread &p,
                      const std::function<FindingInputs::Waiting()> &waiting, bool sleepKnown,
                      const std::function<QString(uint32_t)> &threadName, const TimeRange &r,
                      Finding *f);
void runtimeFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out);
// The program's waits on a runtime's locks of one kind (StackWait), summed
// by waiter and by the thread that released it, and the objects they were on.
struct RuntimeWaits {
  std::map<std::pair<uint32_t, uint32_t>, int64_t> byEdge;  // (waiter, releaser): ns
  std::vector<uint32_t> objects;
};
// Those of objects' inputs summed over windows, by kind: each object's waits
// by the program's threads shared out by its call sites' wait per kind.
std::map<int, RuntimeWaits> runtimeWaitsOf(
    const std::map<uint32_t, FindingInputs::RuntimeObject> &objects,
    const std::set<uint32_t> &program);
// gil_contention and java_lock of the waits by kind and the program's
// threads pts over r; names: the words for the threads a message names
// (threadList).
void runtimeFindingsOf(const std::map<int, RuntimeWaits> &waits,
                       const std::vector<ProgramThread> &pts,
                       const std::function<QString(const std::vector<uint32_t> &)> &names,
                       const TimeRange &r, std::vector<Finding> *out);
// Where a java_lock finding of evidence.lock comes in runtimeFindingsOf's
// output (a streamed report lists them in the same order).
int javaLockRank(const QString &lock);
void barrierFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out);
void userThreadFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out);
// The user threads alive over a range and what the M:N rules read of them.
struct UserPool {
  std::vector<uint32_t> userIds;  // in the model's order
  std::vector<uint32_t> lwps;     // the LWPs they ran on, sorted
  int64_t lifeNs = 0, onLwpNs = 0, dispatchableNs = 0;
  int64_t spans = 0;     // times they were put on an LWP
  StateTimes onLwp;      // the LWPs' states while running them
  StateTimes lwpStates;  // the LWPs' attributed states, all of them
  int64_t lwpNs = 0;     // the LWPs' lives
};
// A user thread's states (its life: on an LWP or dispatchable) into *p, the
// LWPs it ran on into *lwps.
void addUser(UserPool *p, uint32_t id, const UserThreadStates &st, std::set<uint32_t> *lwps);
// user_threads_share_lwps and user_thread_handoff of a pool over r.
void userPoolFindings(const UserPool &p, int cpus, const TimeRange &r, std::vector<Finding> *out);

}  // namespace findings_detail
}  // namespace tmon

#endif
