// SessionModel: everything known about one probe session, fed frame by frame
// from a live socket or a capture file (the same path for both). QtCore only.
//
// Feed it with apply() (decoded frames) or through FrameDecoder (raw stream
// bytes). It emits changed() coalesced to at most ~20 per second. Queries are
// cheap enough to call from paint code for the visible window.
#ifndef THREADMON_SESSIONMODEL_H
#define THREADMON_SESSIONMODEL_H

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "findings.h"
#include "modeltypes.h"
#include "ownedframe.h"
#include "threadmon.pb-c.h"

namespace tmon {

class ThreadTimeline;
class SessionStore;
class SyncActivity;

class SessionModel : public QObject {
  Q_OBJECT

 public:
  explicit SessionModel(QObject *parent = nullptr);
  ~SessionModel() override;

  // Feeding. apply() tolerates anything missing, duplicated or out of order;
  // it checks and clamps the frame in place first (FrameCheck), and says
  // what it dropped in info().inputWarnings.
  void apply(Threadmon__Frame &frame);
  // Unpacks one serialized Frame; false (and the error state) when malformed.
  bool applyPayload(const uint8_t *data, size_t len);
  // Frames unpacked elsewhere (a live connection's decoder thread), taken
  // over and applied in order: at most kSliceNs of them at once, the rest
  // on the next event-loop turns, so that a large batch never blocks.
  void applyFrames(FrameBatch &frames);
  // The input is over (capture read, connection closed) without a Goodbye:
  // open states are closed at the newest time seen.
  void markEnded();
  // Nothing before t was fed (a window of a long capture, CaptureWindow):
  // the threads described so far are known from t on, their counters'
  // values at their start not known (so no span before t is derived, and
  // the first one after it is read from its own samples).
  void knownFrom(int64_t t);
  // A thread's newest kernel sample (LwpSample) before a time, taken from
  // one window's model into the next's (CaptureWindow::Sequence): the next
  // model's first sample of the thread is read against it, as the whole
  // read reads it (its idle time, its CPU time, its run-queue time).
  struct CarriedSample {
    uint32_t tid = 0;
    int64_t t = 0;
    uint32_t aux = 0;
    int32_t extra = 0;
    std::vector<uint64_t> v;
    // Its wait before the reading its counters count from, as of t
    // (ThreadTimeline::WaitBeforeBaseline).
    int64_t baselineNs = INT64_MIN, droppedFromNs = INT64_MAX;
    uint64_t runqueueDropped = 0;
    // No sample before t: its counters were 0 at t (its start), v empty.
    bool zeroReading = false;
  };
  // Of every thread alive at t: its newest sample before t, or when it has
  // none, when its counters were 0 (ThreadTimeline::countersZeroNs), if known.
  std::vector<CarriedSample> samplesBefore(int64_t t) const;
  // Into a model fed its descriptions and nothing since: to the threads it
  // knows as born by the sample's time.
  void carrySamples(const std::vector<CarriedSample> &samples);
  // Puts the session into its error state (first message wins).
  void setError(const QString &message);
  bool hasError() const { return !error_.isEmpty(); }
  QString errorText() const { return error_; }
  uint64_t framesApplied() const { return framesApplied_; }

  // Reading from another thread. A query that can take long at scale (the
  // findings of 10,000 threads) runs on a worker thread between
  // beginBackgroundRead() and endBackgroundRead(), both called on the
  // model's own thread. Meanwhile nothing changes the model: what arrives
  // (apply, applyPayload, markEnded, setError) waits in order and is applied
  // after the last reader ends, a few milliseconds per event-loop turn so
  // the catch-up never blocks either. Queries on the model's own thread stay
  // allowed while a reader runs (they only read; settle() ran before).
  // Derives every thread's intervals now, which the first query would
  // otherwise do (after loading a capture, so the first paint does not:
  // 0.35 s for 10,000 threads).
  // threads > 1 splits the work (a seek the user waits for, on two cores).
  void settleNow(int threads = 1);
  // A loader thread fills a model that no view watches yet (the display
  // opens captures off the GUI thread). Meanwhile the model starts no timer:
  // they belong to its own thread. Set and cleared on the model's thread,
  // before the loader starts and after it ends.
  void setFilledOffThread(bool on) { filledOffThread_ = on; }
  void beginBackgroundRead();
  void endBackgroundRead();
  bool backgroundReading() const { return readers_ > 0; }
  // Frames waiting for the readers to end.
  size_t deferredCount() const { return deferred_.size(); }

  // Session.
  const SessionInfo &info() const;
  int64_t startNs() const;   // session start
  int64_t latestNs() const;  // newest settled time (end of "last N s" windows)
  double durationSeconds() const;
  TimeRange resolve(const Window &w) const;

  // Threads, by index (stable: indices only grow). Sorted by first sight.
  int threadCount() const;
  const ThreadInfo &thread(int index) const;
  int indexOfTid(uint32_t tid) const;  // -1 when unknown

  StateTimes threadStates(int index, const TimeRange &r) const;
  // Its folded time in r (ThreadInfo::folds, shared out as threadStates
  // does) in waits on objects: waits its probe counted on their objects'
  // counters but did not record, so of no object known.
  int64_t foldedObjectWaitNs(int index, const TimeRange &r) const;
  // While one lives, on the thread that made it, threadStates(i, r) and
  // threadCpuTimes(i, r) over its model and range are derived once per
  // thread (in one walk) and then remembered: the report asks for each
  // thread's states over a window three times (its rows, the findings, the
  // window's checks). Nothing may change the model meanwhile (queries only).
  // One at a time per thread.
  class StatesMemo {
   public:
    StatesMemo(const SessionModel &m, const TimeRange &r);
    ~StatesMemo();
    StatesMemo(const StatesMemo &) = delete;
    StatesMemo &operator=(const StatesMemo &) = delete;

   private:
    friend class SessionModel;
    struct Entry {
      bool known = false;
      StateTimes states;
      std::vector<int64_t> cpu;
    };
    const SessionModel *model_;
    TimeRange range_;
    std::vector<Entry> entries_;
  };
  // The same, with the sleep estimated on objects a runtime built into the
  // program (a C++20 semaphore, a Rust Mutex: SyncObjectInfo::runtimeKind)
  // shown as the blocked state of their kind. What the tables show.
  StateTimes threadStatesAttributed(int index, const TimeRange &r) const;
  // Its runnable intervals in r that were a spin before a runtime's event
  // wait (libstdc++'s std::barrier, latch, semaphore, atomic::wait yield
  // before they sleep on their futex): the thread sleeps on such an object
  // in r, and its sched_yield count rose across the interval. As blocked
  // intervals of that object's kind (threadStatesAttributed, findings).
  std::vector<StateInterval> spinWaits(int index, const TimeRange &r) const;
  // Exact intervals overlapping r, clipped to it, in time order.
  std::vector<StateInterval> intervals(int index, const TimeRange &r) const;
  // The same into *out (cleared first, its room kept): one vector for many
  // threads' intervals (a 10 s window of a busy thread is 10,000 of them).
  void intervals(int index, const TimeRange &r, std::vector<StateInterval> *out) const;
  // Without a copy: settledTimeline(index).forEachPiece(r, tickTimes(), f)
  // (threadtimeline.h) walks them in the timeline's own store.
  const ThreadTimeline &settledTimeline(int index) const;
  const std::vector<int64_t> &tickTimes() const;  // the session's, sorted
  // Final state at time t (false when the thread was not alive or not known).
  bool stateAt(int index, int64_t t, StateInterval *out) const;
  LwpDelta lwpDelta(int index, const TimeRange &r) const;
  // Kernel (LwpSample) samples kept for the thread; 0: its CPU use is unknown.
  size_t lwpSampleCount(int index) const;
  // Where its kernel counters count from: INT64_MIN from 0 at its start;
  // its first sample's time for a thread an attach found (born before it).
  int64_t lwpCountedFromNs(int index) const;
  // ns of on_cpu time per CPU index for one thread.
  std::vector<int64_t> threadCpuTimes(int index, const TimeRange &r) const;

  // User threads (M:N contexts), by index (stable: indices only grow).
  int userThreadCount() const;
  const UserThreadInfo &userThread(int index) const;
  // Its life in r ([created, done or the end)), spent on LWPs (in their
  // final states) or dispatchable.
  UserThreadStates userThreadStates(int index, const TimeRange &r) const;
  // Its spans on LWPs overlapping r, clipped to it, in time order.
  std::vector<UserSpan> userThreadSpans(int index, const TimeRange &r) const;

  // CPUs.
  int cpuCount() const;  // from Hello, or the highest CPU seen + 1
  // /proc/stat counters interpolated at r's edges (samples may be sparse).
  CpuDelta cpuDelta(int cpu, const TimeRange &r) const;
  // Share of all CPUs' time in r that was busy (non-idle, non-iowait),
  // -1 when /proc/stat data is missing. Findings and charts both use it.
  double cpuBusyShare(const TimeRange &r) const;
  // cpuBusyShare of each window of `width` from r.t0 (the last one ends at
  // r.t1): one pass over the samples, for the findings' thousands of bins.
  std::vector<double> cpuBusyShares(const TimeRange &r, int64_t width) const;
  // Threads that ran on cpu in r, most time first.
  std::vector<ThreadCpuTime> cpuThreads(int cpu, const TimeRange &r) const;

  // Sync objects, by index (stable). Ids are the probe's.
  int syncObjectCount() const;
  const SyncObjectInfo &syncObject(int index) const;
  int indexOfSyncObject(uint32_t id) const;  // -1 when unknown
  SyncDelta syncDelta(int index, const TimeRange &r) const;
  // Object indices with any activity in r, most waiting first; objects only
  // a runtime's housekeeping threads waited on (the JVM's compile queue)
  // after the program's own.
  std::vector<int> syncObjectsByWait(const TimeRange &r) const;
  // A runtime's own thread (runtimes.h: the JVM's JIT, GC, VM Thread, ...).
  bool housekeepingThread(int index) const;
  // Only housekeeping threads waited on the object in r.
  bool housekeepingObject(int index, const TimeRange &r) const;
  std::vector<BlockedInterval> blockedOn(uint32_t objectId, const TimeRange &r) const;
  // Spans of thread index whose order of states was folded (its ring was
  // full), overlapping r.
  std::vector<TimeRange> eventGapSpans(int index, const TimeRange &r) const;

  // Waits as the interposer saw them (holder, releaser), overlapping r,
  // clipped to it, in start order. Open waits end at latestNs().
  std::vector<WaitRecord> waits(uint32_t objectId, const TimeRange &r) const;
  // The same into *out (cleared first): its capacity reused across objects.
  void waits(uint32_t objectId, const TimeRange &r, std::vector<WaitRecord> *out) const;
  // Without a copy: syncActivity().forEachWaitInOrder(objectId, r,
  // latestNs(), scratch, f) (syncactivity.h) reads them in place.
  const SyncActivity &syncActivity() const;
  // Waiter x holder matrix over r: one object, or every object (0), most
  // waiting first. Counts waits that began in r; wait time is clipped to r.
  std::vector<WaitPair> waitMatrix(const TimeRange &r, uint32_t objectId = 0) const;
  // Both of one object summed where they lie, in one pass (WaitSums): for
  // a caller that only adds its waits up.
  void waitSums(uint32_t objectId, const TimeRange &r, WaitSums *out) const;
  // Each waiter's time in waits on the object in r (clipped to r), by tid.
  std::vector<std::pair<uint32_t, int64_t>> waiterNs(uint32_t objectId, const TimeRange &r) const;
  // Thread index's inputs to hidden locks' estimates over r, seen 0
  // (estimateHiddenWaits); the ticks over r that saw each thread on the
  // word of hidden lock objectId, by tid, those that saw it at all.
  HiddenInputs hiddenInputs(int index, const TimeRange &r) const;
  std::vector<std::pair<uint32_t, uint64_t>> hiddenSeen(uint32_t objectId,
                                                        const TimeRange &r) const;
  // The same for the word at addr, whether or not an object is known there.
  std::vector<std::pair<uint32_t, uint64_t>> hiddenSeenAt(uint64_t addr, const TimeRange &r) const;
  // The waits open at latestNs(), one a waiting thread, not clipped (a
  // streamed report learns their releasers from the next window).
  void openWaits(std::vector<WaitRecord> *out) const;

  // Interned call stacks (Stack frames): the program's call site first.
  // Empty when the id is unknown.
  QStringList stack(uint32_t stackId) const;
  // Contention of one object per call stack over r, most waiting first.
  std::vector<CallSite> callSites(uint32_t objectId, const TimeRange &r) const;
  // Threads seen blocked on a KIND_INTERNAL object's futex word in r, and
  // the others running the same function, most waiting first. Estimated:
  // the thread's sleep in the kernel outside wrapped calls (exact, from
  // switch records) and its system time, x the share of the ticks that
  // found those threads asleep that found them on this word; ticks seen x
  // tick interval when the capture lacks that.
  std::vector<InternalWaiter> internalWaiters(uint32_t objectId, const TimeRange &r) const;
  // Sum of internalWaiters for one thread over every internal object.
  uint64_t internalWaitNs(int index, const TimeRange &r) const;
  // ns of r the thread spent in a wrapped sleep call (nanosleep, usleep,
  // sleep): sleeping it chose, unlike a wait inside the kernel.
  int64_t chosenSleepNs(int index, const TimeRange &r) const;
  // Ticks of r that found the thread asleep outside wrapped calls, by what
  // its syscall waited for (index: AsleepKind of threadmon.proto).
  std::array<uint64_t, kAsleepKinds> asleepTicksByKind(int index, const TimeRange &r) const;
  // Where an object was contended: the wrapper's first contention frame,
  // else (hidden locks) the program's frame of its top call site in r.
  QString objectCallSite(int index, const TimeRange &r) const;
  // The module!function frame of the program's own code in a stack (the
  // first frame whose module is the program's executable), else the first.
  QString programFrame(const QStringList &frames) const;

  // Deadlocks: cycles in the wait-for graph, re-checked on every tick.
  std::vector<Deadlock> liveDeadlocks() const;  // cycles that still hold
  std::vector<Deadlock> deadlocks() const;      // every cycle seen, in order

  // Findings over r, most severe first (findings.h, docs/findings.md).
  std::vector<Finding> findings(const TimeRange &r) const;

  // Charts: one point per tick inside r.
  std::vector<TickPoint> ticks(const TimeRange &r) const;

  // Bytes held by the model's containers (for the memory bound tests).
  size_t memoryBytes() const;

  // Bounded live memory (SessionStore::keepDetailFor): state intervals are
  // held for the last keepNs only (0: all, the default); older ones leave
  // RAM with their whole-run totals kept, so whole-run states stay exact and
  // intervals() before detailFromNs() are empty: a live session reads them
  // back from its spool (LiveSession::loadDetail).
  void keepDetailFor(int64_t keepNs);
  int64_t detailFromNs() const;
  // Switch records counted in info(): those sent in [from, to) only
  // (SessionStore::countSwitchesIn; a streamed report's window).
  void countSwitchesIn(int64_t from, int64_t to);

 signals:
  void changed();
  // A new wait-for cycle formed (liveDeadlocks() lists it); not coalesced.
  void deadlockDetected();

 private:
  // The live StatesMemo's entry of thread index over r, filled on the first
  // ask; null when none applies.
  const StatesMemo::Entry *memoised(int index, const TimeRange &r) const;
  void touch();
  // What arrives while readers run, or waits for the next slice (a frame,
  // a payload, else error set: setError, else markEnded).
  struct Deferred {
    OwnedFrame frame;
    QByteArray payload;
    QString error;
    bool end = false;
  };
  bool deferring() const { return (readers_ > 0 || !deferred_.empty()) && !draining_; }
  void applyNow(Threadmon__Frame &frame);
  void drainDeferred();
  std::vector<Deferred> deferred_;
  size_t deferredHead_ = 0;
  int readers_ = 0;
  bool draining_ = false;
  bool filledOffThread_ = false;
  QTimer drain_;
  // Derives what was applied, at most every kSettleEveryMs (applyFrames).
  void settleEvery();
  QElapsedTimer sinceSettle_;
  // Ticks in r that saw a thread on a hidden lock's word, and asleep at all.
  struct HiddenTicks {
    uint64_t seen = 0, asleep = 0;
  };
  HiddenTicks hiddenTicks(int index, uint64_t addr, const TimeRange &r) const;
  // Thread index's estimated wait on a hidden lock: seen on it `seen` ticks,
  // its pool (it and the threads of its start routine) as given.
  InternalWaiter hiddenWait(int index, uint64_t seen, const HiddenTicks &pool,
                            const TimeRange &r) const;
  bool unseenPeer(int index, uint64_t addr, const TimeRange &r) const;
  // Asleep outside every wrapped call (in the kernel, for no known object).
  int64_t sleepOutsideWrappedNs(int index, const TimeRange &r) const;
  // Pooled hidden-lock ticks of the threads of one start routine on one
  // word over one range (internalWaitNs asks the same for every thread of a
  // pool: 10,000 workers were 10^8 lookups). Valid while nothing is applied.
  struct PoolKey {
    QString routine;
    uint64_t addr;
    bool operator==(const PoolKey &o) const { return addr == o.addr && routine == o.routine; }
  };
  struct PoolKeyHash {
    size_t operator()(const PoolKey &k) const { return qHash(k.routine) ^ std::hash<uint64_t>()(k.addr); }
  };
  struct PoolCache {
    uint64_t generation = ~uint64_t(0);
    TimeRange range{0, 0};
    std::unordered_map<PoolKey, HiddenTicks, PoolKeyHash> pools;
  };
  mutable PoolCache poolCache_;
  mutable std::mutex poolMutex_;  // findings may run on a worker thread
  uint64_t generation_ = 0;  // bumped by everything that feeds the model
  std::unique_ptr<SessionStore> store_;
  QTimer coalesce_;
  QString error_;
  uint64_t framesApplied_ = 0;
};

}  // namespace tmon

#endif
