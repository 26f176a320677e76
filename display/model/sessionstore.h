// SessionStore: the data behind a SessionModel and the rules that fold each
// frame into it. Plain C++ (no signals) so the folding is easy to follow.
#ifndef THREADMON_SESSIONSTORE_H
#define THREADMON_SESSIONSTORE_H

#include <QString>
#include <array>
#include <memory>
#include <unordered_map>
#include <vector>

#include "counterseries.h"
#include "framecheck.h"
#include "modeltypes.h"
#include "syncactivity.h"
#include "threadmon.pb-c.h"
#include "threadtimeline.h"
#include "tidindex.h"
#include "userthreads.h"

namespace tmon {

// Per-CPU /proc/stat counters, in CpuDelta order.
using CpuSeries = CounterSeries<kCpuCounters>;
// Per-object SyncStats counters (proto/counters.def), in its order.
enum SyncCounter {
#define TM_SYNC_COUNTER(field, number, index, ...) k##index,
#include "counters.def"
  kSyncCounters
};
using SyncSeries = CounterSeries<kSyncCounters>;

struct SyncEntry {
  SyncObjectInfo info;
  SyncSeries series;
};

class SessionStore {
 public:
  // Checks one frame in place (FrameCheck) and folds it in. Returns an
  // error line when the frame makes the session unusable (wrong protocol
  // version), else an empty string.
  QString apply(Threadmon__Frame &f);
  void markEnded();
  void knownFrom(int64_t t);  // SessionModel::knownFrom
  // SessionModel::carrySamples, one sample of tid.
  void carrySample(uint32_t tid, const LwpSeries::Point &p,
                   const ThreadTimeline::WaitBeforeBaseline &waitBefore);
  // SessionModel::carrySamples, a thread with no sample yet whose counters
  // were 0 at t.
  void carryZeroReading(uint32_t tid, int64_t t);
  // Newest time up to which every thread's state is known; INT64_MIN if none.
  int64_t horizon() const;
  int64_t startNs() const;
  // Derives every thread's intervals up to the horizon. Every query calls
  // it, so it returns at once while nothing was applied since the last call
  // (a view asking for 10,000 threads would otherwise visit 10,000 x 10,000).
  // threads > 1: the threads' timelines are derived on that many threads
  // (each timeline stands alone; a window's 100 busy threads take 40 ms).
  void settle(int threads = 1);
  int cpuCount() const;
  size_t bytes() const;
  // Bounded live memory: full detail (state intervals) is held for keepNs
  // behind the horizon only; older detail leaves RAM every kEvictEveryNs of
  // stream, its whole-run totals kept (ThreadTimeline::evictBefore). 0, the
  // default: everything is held. keepNs is at least 2 x kRawKeepNs, so no
  // late record can change what left.
  static constexpr int64_t kEvictEveryNs = 10'000'000'000;
  void keepDetailFor(int64_t keepNs);
  // Oldest time whose detail is held: startNs() until something left.
  int64_t detailFrom() const;
  // Switch records counted in info (switchesLost, switchesReceived): only
  // the batches whose base time is in [from, to). A streamed report's
  // windows tile the run, each loaded with a warm-up before it and records
  // overlapping its ends; each counts its own span, so the sum counts every
  // batch once. Default: all.
  void countSwitchesIn(int64_t from, int64_t to);

  SessionInfo info;
  std::vector<std::unique_ptr<ThreadTimeline>> threads;
  TidIndex tidIndex;
  TickTimes tickTimes;
  std::vector<TickPoint> points;  // parallel to tickTimes
  std::vector<CpuSeries> cpus;
  std::vector<SyncEntry> sync;
  std::unordered_map<uint32_t, int> syncIndex;
  SyncActivity activity;
  UserThreads users;
  bool deadlockFormed = false;  // set by a tick that found a new cycle; the model clears it

 private:
  QString fold(const Threadmon__Frame &f);
  QString applyHello(const Threadmon__Hello &h);
  void applyGoodbye(const Threadmon__Goodbye &g);
  void applyExec(const Threadmon__Exec &e);
  void applyTick(const Threadmon__Tick &t);
  static void dropWaitBeforeBaseline(ThreadTimeline *th, const LwpSeries::Point *prev, int64_t t,
                                     int64_t read, LwpSeries::Values *v);
  void applyThreadStart(const Threadmon__ThreadStart &s);
  void applyThreadEnd(const Threadmon__ThreadEnd &e);
  void applyThreadAttr(const Threadmon__ThreadAttr &a);
  void applySyncObject(const Threadmon__SyncObject &o);
  void applyTransitions(const Threadmon__Transitions &t);
  // One transition of a batch, every case (applyTransitions folds the
  // plain ones itself); sets batchDropped_ when its tid has no thread.
  void foldTransition(int64_t at, int state, uint32_t obj, uint32_t holder, uint32_t releaser,
                      uint32_t tid);
  // seeTime of the first n records of a batch applyTransitions took, the
  // last at lastNs; dropped: some of them had no thread.
  void seeBatchTimes(const Threadmon__Transitions &t, size_t n, int64_t lastNs, bool dropped);
  void applySwitches(const Threadmon__CpuSwitches &s);
  // Records lost, or the probe stopped them: a gap in every thread's records
  // after each CPU's newest in batchNewestByCpu_, and after newest.
  void addSwitchGapsAfterEachCpu(int64_t newest);
  // Sets runtimeKind/runtimeWhat of a KIND_INTERNAL or KIND_FUTEX object
  // from a waiter's stack.
  static void classifyRuntime(SyncObjectInfo &i, const QStringList &frames);
  // The state of a BLOCKED_FUTEX wait on object: its runtime's blocked kind
  // when the object was recognised (classifyRuntime), else BLOCKED_FUTEX.
  int futexWaitState(uint32_t object) const;
  void applyStack(const Threadmon__Stack &s);
  void seeTime(int64_t t);
  void evictOld();
  // nullptr when the session holds limits::kMaxThreads (or objects) already.
  ThreadTimeline *threadFor(uint32_t tid, int64_t t);
  int threadIndexFor(uint32_t tid, int64_t t);  // into threads; -1 as above
  int newThread(uint32_t tid, int64_t t);       // threadIndexFor of a tid not seen
  // The fold's entry for tid (its timeline made on first sight, newThread),
  // nullptr when the session holds limits::kMaxThreads already.
  struct FoldSlot;
  FoldSlot *foldSlotFor(uint32_t tid, int64_t t);
  SyncEntry *syncFor(uint32_t id);
  // Counts a rejected record of th: crowded, or too late to use.
  void rejected(const ThreadTimeline &th, ThreadTimeline::Added a, int64_t t);

  FrameCheck check_;
  // What the fold looks up for every transition, by the tid's low bits:
  // its timeline and its place among the waits (SyncActivity::slotOf its
  // tid, -1 until a transition of it reaches them, so that the waits keep
  // their order). One lookup, where the tid's index, the timeline's pointer
  // and the wait slot were three (each a vector's base and an element).
  struct FoldSlot {
    ThreadTimeline *timeline = nullptr;  // none: the slot is empty
    uint32_t tid = 0;
    int waitSlot = -1;
  };
  static constexpr size_t kFoldSlots = 1024;
  std::array<FoldSlot, kFoldSlots> foldSlots_{};
  bool batchDropped_ = false;  // a record of no thread (ThreadsFull): its time is not seen
  bool unsettled_ = true;  // something was applied since the last settle()
  int64_t earliest_ = INT64_MAX;
  int64_t latest_ = INT64_MIN;
  int maxCpuSeen_ = -1;
  int64_t lastSwitchNs_ = INT64_MIN;  // newest switch record so far
  // Per CPU (limits::kMaxCpus: unknown), the newest record of the last
  // batch that had records; INT64_MIN: none there (addSwitchGapsAfterEachCpu).
  std::vector<int64_t> batchNewestByCpu_;
  int64_t pausedSince_ = INT64_MIN;   // the probe paused its records here (DetailLoss)
  int64_t switchCountFrom_ = INT64_MIN, switchCountTo_ = INT64_MAX;
  int64_t keepNs_ = 0;
  int64_t evictedUntil_ = INT64_MIN;  // the newest cut
};

}  // namespace tmon

#endif
