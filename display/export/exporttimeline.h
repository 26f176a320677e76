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
#include <cstring>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "exportwait.h"
#include "exportwalk.h"
#include "modeltypes.h"
#include "podvector.h"
#include "waitorder.h"

namespace tmon {

struct ExportThread {
  uint32_t tid = 0;
  QString name;  // "worker-3", or the program's name for the main thread
  QString startRoutine;
  bool main = false, probe = false;
};

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
  // wait() on waits[0], waits[1] ... waits[n - 1]: one call for a batch of
  // a window's waits (made in order, a few hundred at a time, from the
  // model's records read in place), so that a format can take them in a
  // loop of its own (a call per wait was a tenth of a Perfetto wait).
  virtual void waitsInOrder(const ExportWait *waits, size_t n) {
    for (size_t i = 0; i < n; i++) wait(waits[i]);
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
  // A window's waits: kept, so that each window reuses the last one's
  // memory.
  WindowWaits waits_;
  std::vector<WaitRecord> records_;  // one object's waits, window to window
  // One thread's runs in a window, merged as its pieces are read.
  std::vector<StateInterval> intervals_;
  // Waits ended, kept back for the next window (after a held one).
  PodVector<ExportWait> deferred_;
  int64_t lastCpuTick_ = INT64_MIN;
};

}  // namespace tmon

#endif
