#include "summarybuild.h"

#include <sys/resource.h>
#include <unistd.h>

#include <QThread>
#include <algorithm>

#include "capturewindow.h"
#include "runsummary.h"
#include "sessionmodel.h"
#include "summarizer.h"

namespace tmon {

// RunSummary::build's default chunk is the Summarizer's.
static_assert(Summarizer::kChunkNs == 10 * RunSummary::kBucketNs);

int64_t SummaryBuild::sessionStart(const CaptureWindow &cw, uint64_t *sessionId) {
  SessionModel head;
  cw.load(cw.firstNs(), cw.firstNs(), &head);
  if (sessionId) *sessionId = head.info().sessionId;
  return head.startNs();
}

std::vector<TimeRange> SummaryBuild::plan(int64_t start, int64_t from, int64_t last,
                                          int64_t chunkNs) {
  std::vector<TimeRange> out;
  for (int64_t a = std::max(from, start); a < last; a += chunkNs)
    out.push_back(TimeRange{a, std::min(last, a + chunkNs)});
  return out;
}

int64_t SummaryBuild::keepRecords(RunSummary *sum, bool hadRecords, int64_t start, int64_t last) {
  constexpr size_t kPerChunk = size_t(Summarizer::kChunkNs / RunSummary::kBucketNs);
  size_t kept = 0;
  if (hadRecords && sum->startNs() == start) {
    kept = sum->buckets() / kPerChunk * kPerChunk;
    sum->truncate(kept);
  } else {
    *sum = RunSummary();
  }
  sum->setStart(start, size_t((last - start) / RunSummary::kBucketNs + 2));
  return start + int64_t(kept) * RunSummary::kBucketNs;
}

SummaryBuild::Part SummaryBuild::fold(const CaptureWindow &cw, int64_t start, int64_t last,
                                      const TimeRange &chunk, const std::atomic<bool> *stop) {
  Part part{chunk, {}};
  SessionModel m;
  cw.load(chunk.t0, chunk.t1, &m, stop);
  if (stop && *stop) return part;
  m.settleNow();
  // As the Summarizer sums a chunk: to its end, the last one to the newest
  // time the capture holds.
  const int64_t end = chunk.t1 < last ? std::min(chunk.t1, m.latestNs()) : m.latestNs();
  RunSummary::foldChunk(m, start, chunk.t0, end,
                        [&part](uint32_t tid, size_t k, const StateTimes &st) {
                          part.cells.push_back(Cell{tid, uint32_t(k), st});
                        });
  return part;
}

void SummaryBuild::merge(const Part &part, RunSummary *sum) {
  for (const Cell &c : part.cells) sum->addBucket(c.tid, c.bucket, c.states);
}

int SummaryBuild::defaultWorkers(size_t) {
  return 1;
}

SummaryBuild::SummaryBuild(const QString &path, int64_t start, int64_t last,
                           std::vector<TimeRange> chunks, int workers, Deliver deliver,
                           std::function<void()> done)
    : path_(path),
      start_(start),
      last_(last),
      chunks_(std::move(chunks)),
      deliver_(std::move(deliver)),
      done_(std::move(done)) {
  const int n = std::max(1, workers);
  running_ = n;
  // QThreads, not std::threads: a SessionModel starts a timer as it is fed.
  for (int i = 0; i < n; i++) {
    threads_.emplace_back(QThread::create([this] { work(); }));
    threads_.back()->start();
  }
}

SummaryBuild::~SummaryBuild() {
  stop_ = true;
  for (auto &t : threads_) t->wait();
}

void SummaryBuild::work() {
  // Below the GUI thread (nice applies per thread on Linux): the overview
  // fills in while the user works, never ahead of them.
  setpriority(PRIO_PROCESS, id_t(gettid()), 10);
  CaptureWindow cw;
  if (cw.open(path_)) {
    for (size_t i = next_++; i < chunks_.size() && !stop_; i = next_++) {
      Part part = fold(cw, start_, last_, chunks_[i], &stop_);
      if (!stop_) deliver_(std::move(part));
    }
  }
  if (--running_ == 0 && !stop_ && done_) done_();
}

}  // namespace tmon
