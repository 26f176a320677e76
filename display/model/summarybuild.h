// SummaryBuild: the part of a capture's RunSummary that its Summary records
// do not give (the probe writes none; a capture cut short has them only up to
// the cut), derived from the detail in the background. The run is cut into
// the Summarizer's chunks (10 s on the grid from the session's start, each
// loaded with its warm-up), so what it derives is what the records would have
// said. Chunks are independent: each worker thread opens the capture on its
// own (CaptureWindow), takes the next chunk in time order, folds it and hands
// its buckets on, so the whole run fills in from its start.
#ifndef THREADMON_SUMMARYBUILD_H
#define THREADMON_SUMMARYBUILD_H

#include <QString>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "modeltypes.h"

class QThread;

namespace tmon {

class CaptureWindow;
class RunSummary;

class SummaryBuild {
 public:
  // One chunk's buckets, ready for RunSummary::addBucket.
  struct Cell {
    uint32_t tid;
    uint32_t bucket;
    StateTimes states;
  };
  struct Part {
    TimeRange span;  // the chunk
    std::vector<Cell> cells;
  };

  // The session's start (Hello), from the capture's first record; its id
  // into *sessionId.
  static int64_t sessionStart(const CaptureWindow &cw, uint64_t *sessionId = nullptr);
  // Readies sum (what RunSummary::read took of the capture's records, when
  // hadRecords) for a build of the rest: records that start the run at
  // start are kept up to their last whole chunk (a capture cut short: a
  // chunk's records are written together), others dropped. Returns where
  // the build starts.
  static int64_t keepRecords(RunSummary *sum, bool hadRecords, int64_t start, int64_t last);
  // The chunks of [from, last) on the grid of chunkNs from start; from is on
  // it (a chunk's start) or start itself.
  static std::vector<TimeRange> plan(int64_t start, int64_t from, int64_t last, int64_t chunkNs);
  // Folds one chunk of cw's run (session start start, end last); stop, when
  // set, abandons it (an empty part).
  static Part fold(const CaptureWindow &cw, int64_t start, int64_t last, const TimeRange &chunk,
                   const std::atomic<bool> *stop = nullptr);
  // Adds a part's buckets to sum (set up with setStart).
  static void merge(const Part &part, RunSummary *sum);

  // deliver runs on a worker thread with each chunk done, in about time
  // order (each worker takes the next); done once no chunk is left.
  using Deliver = std::function<void(Part)>;
  SummaryBuild(const QString &path, int64_t start, int64_t last, std::vector<TimeRange> chunks,
               int workers, Deliver deliver, std::function<void()> done = {});
  // Stops the workers: a chunk being read is abandoned within one read of
  // the file (1 MiB), so this returns within a few tens of ms.
  ~SummaryBuild();
  SummaryBuild(const SummaryBuild &) = delete;
  SummaryBuild &operator=(const SummaryBuild &) = delete;

  // Workers: one. Each holds a chunk's model, as large as the window the
  // page shows (about 80 MB for 10 s of 100 busy threads), and the display's
  // memory follows the window, not the file: a second worker took 60 s of
  // 100 busy threads from 94 to 207 MiB, and on a busy 2-core machine the
  // build's CPU is its wall time anyway (the hour: 146 s of CPU in 154 s).
  static int defaultWorkers(size_t chunks);

 private:
  void work();

  QString path_;
  int64_t start_, last_;
  std::vector<TimeRange> chunks_;
  Deliver deliver_;
  std::function<void()> done_;
  std::atomic<size_t> next_{0};
  std::atomic<int> running_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::unique_ptr<QThread>> threads_;
};

}  // namespace tmon

#endif
