// TimelineSink: what the trace formats (Perfetto, Chrome JSON) share. It
// turns each window's model into events in time order per thread: the
// process and its threads once, each thread's state intervals (merged
// across window edges, so a window is invisible in the output), each
// closed wait with its object and who released it, and counters per tick
// (each CPU's busy share, the threads waiting for a CPU, contentions and
// wait per tick). The formats only write them.
#ifndef THREADMON_EXPORTTIMELINE_H
#define THREADMON_EXPORTTIMELINE_H

#include <QString>
#include <cstddef>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "exportwalk.h"
#include "modeltypes.h"
#include "podvector.h"

namespace tmon {

struct ExportThread {
  uint32_t tid = 0;
  QString name;  // "worker-3", or the program's name for the main thread
  QString startRoutine;
  bool main = false, probe = false;
};

// A sync object's names as its waits carry them: made once per object (a
// million waits each converting or copying its names was a tenth of a
// Perfetto export), again only when a later window names it otherwise.
struct ExportObject {
  uint32_t id = 0;
  uint32_t index = 0;  // 0, 1, 2 ... in the order made: a sink's own tables
  QString name;        // "mutex mutex_hold!big_lock"
  QString callSite;    // where it was contended first, "" when unknown
  QByteArray nameUtf8, callSiteUtf8;
  // A format's own text for it (Chrome: its names as a wait's arguments),
  // made at its first wait: one load, where a table by index took a bounds
  // check and a test.
  mutable const void *formatText = nullptr;
};

// Its fields up to object laid out as WaitRecord's, so that the walk
// copies a record whole (field by field, a sixth of the walk's
// instructions).
struct ExportWait {
  int64_t start = 0, end = 0;
  uint32_t waiter = 0, objectId = 0, holder = 0, releaser = 0;
  FinalState state = FinalState::BlockedMutex;
  bool open = false;                     // still blocked where the export ends
  uint32_t count = 1;                    // (WaitRecord's: always 1 here)
  const ExportObject *object = nullptr;  // the sink's, for the whole export
};
static_assert(offsetof(ExportWait, start) == offsetof(WaitRecord, start) &&
                  offsetof(ExportWait, end) == offsetof(WaitRecord, end) &&
                  offsetof(ExportWait, waiter) == offsetof(WaitRecord, waiter) &&
                  offsetof(ExportWait, objectId) == offsetof(WaitRecord, object) &&
                  offsetof(ExportWait, holder) == offsetof(WaitRecord, holder) &&
                  offsetof(ExportWait, releaser) == offsetof(WaitRecord, releaser) &&
                  offsetof(ExportWait, state) == offsetof(WaitRecord, state) &&
                  offsetof(ExportWait, open) == offsetof(WaitRecord, open) &&
                  offsetof(ExportWait, count) == offsetof(WaitRecord, count) &&
                  offsetof(ExportWait, object) == sizeof(WaitRecord),
              "ExportWait starts as WaitRecord");

class TimelineSink : public ExportSink {
 public:
  void window(const SessionModel &m, const TimeRange &span, bool first, bool last) override;

 protected:
  // Counters the trace formats draw, by index.
  enum Counter { kRunqueue, kContentions, kWaitMs, kCounters };
  static const char *counterName(int c);

  virtual void process(const SessionInfo &info, int cpuCount) = 0;
  virtual void thread(const ExportThread &t) = 0;
  // Intervals of one thread, in time order, contiguous runs of one state
  // (and object and CPU) merged.
  virtual void state(uint32_t tid, const StateInterval &iv) = 0;
  // Runs of one thread, n of them, in time order: the same as state() on
  // each, one call for a thread's window (a call per run was a fifth of
  // the instructions the formats spent on states).
  virtual void states(uint32_t tid, const StateInterval *runs, size_t n) {
    for (size_t i = 0; i < n; i++) state(tid, runs[i]);
  }
  virtual void wait(const ExportWait &w) = 0;
  // wait() on waits[order[0]], waits[order[1]] ... waits[order[n - 1]]: one
  // call for a window's waits, so that a format can take them in a loop
  // of its own (a call per wait was a tenth of a Perfetto wait).
  virtual void waitsInOrder(const ExportWait *waits, const uint32_t *order, size_t n) {
    for (size_t i = 0; i < n; i++) wait(waits[order[i]]);
  }
  virtual void cpuBusy(int cpu, int64_t t, double percent) = 0;
  virtual void counter(int which, int64_t t, double value) = 0;
  // A user thread (M:N) ran on LWP tid over [start, end): spans of one
  // user thread on one LWP, joined across window edges, in time order per LWP.
  virtual void userSpan(uint32_t tid, const QString &userThread, int64_t start, int64_t end) = 0;
  // The thread ended at t (after its last state).
  virtual void threadEnd(uint32_t tid, int64_t t) = 0;
  // Every window given and flushed.
  virtual void end() = 0;

  int64_t origin() const { return origin_; }  // the session's start
  uint32_t pid() const { return pid_; }
  // The session's start and process, as the first window gives them, for
  // a sink fed its callbacks otherwise (bench/trace_write.cpp replays them).
  void startAt(int64_t origin, uint32_t pid) {
    started_ = true;
    origin_ = origin;
    pid_ = pid;
  }

 private:
  // Thread index i's runs in the window, and those of object o's waits it
  // holds (into held) or keeps (into waits_).
  void threadStates(const SessionModel &m, int i, const TimeRange &span,
                    const std::vector<int64_t> &tickTimes, bool first, bool last);
  void objectWaits(const SessionModel &m, const SyncObjectInfo &o, const TimeRange &span, bool last,
                   std::vector<ExportWait> *held);
  int64_t origin_ = 0;
  uint32_t pid_ = 0;
  bool started_ = false;
  std::unordered_set<uint32_t> threadsSeen_;
  std::unordered_map<uint32_t, StateInterval> pending_;   // by tid: the run not closed yet
  std::unordered_map<uint32_t, ExportWait> pendingWait_;  // by waiter
  const ExportObject *objectNamed(uint32_t id, QString name, QString callSite);
  std::deque<ExportObject> objects_;                               // every one made, in order
  std::unordered_map<uint32_t, const ExportObject *> objectById_;  // the latest by id
  struct PendingSpan {
    QString name;
    int64_t start = 0, end = 0;
  };
  std::unordered_map<uint32_t, PendingSpan> pendingSpan_;  // by LWP
  void flushSpans(const SessionModel &m, const TimeRange &span, bool last);
  // A window's waits and their order by start: kept, so that each window
  // reuses the last one's memory (their growth was 4% of an export). The
  // waits grow by moving their pages (a segment's: 400,000 of them in
  // half.tmcap, whose copies were a tenth of an export's page faults).
  PodVector<ExportWait> waits_;
  std::vector<uint32_t> order_;
  std::vector<std::pair<int64_t, uint32_t>> pairs_;  // tied waits
  std::vector<uint32_t> buckets_;
  std::vector<WaitRecord> records_;  // one object's waits, window to window
  // One thread's runs in a window, merged as its pieces are read.
  std::vector<StateInterval> intervals_;
  // Waits ended, kept back for the next window (after a held one).
  PodVector<ExportWait> deferred_;
  int64_t lastCpuTick_ = INT64_MIN;
};

}  // namespace tmon

#endif
