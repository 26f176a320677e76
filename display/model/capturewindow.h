// CaptureWindow: a capture too long to hold, read a time window at a time
// through its index (docs/format.md, "Blocks and the index"). open() reads
// the index (from the file's end, or by one scan of the records' headers
// when the capture was cut short) and keeps the descriptions (Hello,
// ThreadStart, SyncObject, Stack, ...: the frames that say what the tids
// and object ids are, a few KiB); load() fills a fresh SessionModel with
// the descriptions sent before the window and every record overlapping it,
// from a warm-up before its start, so a seek costs the window's frames, not
// the frames since the start.
#ifndef THREADMON_CAPTUREWINDOW_H
#define THREADMON_CAPTUREWINDOW_H

#include <QByteArray>
#include <QFile>
#include <QString>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "capturereader.h"
#include "threadmon.pb-c.h"
#include "tmblock.h"

namespace tmon {

class SessionModel;

class CaptureWindow {
 public:
  // States of a thread come from its transitions, and a thread's state at a
  // window's start from its last transition before it: 1 s of warm-up
  // covers the busy thread (a change a millisecond); a thread blocked since
  // earlier shows the kernel's view (on a CPU, runnable, asleep) until its
  // next change.
  static constexpr int64_t kWarmUpNs = 1'000'000'000;
  // Frame.body kinds of the frames that describe rather than measure (kept
  // from the whole capture, a few KiB).
  static constexpr uint32_t kDescriptionKinds =
      1u << THREADMON__FRAME__BODY_HELLO | 1u << THREADMON__FRAME__BODY_THREAD_START |
      1u << THREADMON__FRAME__BODY_THREAD_END | 1u << THREADMON__FRAME__BODY_THREAD_ATTR |
      1u << THREADMON__FRAME__BODY_SYNC_OBJECT | 1u << THREADMON__FRAME__BODY_NOTICE |
      1u << THREADMON__FRAME__BODY_STACK | 1u << THREADMON__FRAME__BODY_USER_THREAD |
      1u << THREADMON__FRAME__BODY_EXEC;

  CaptureWindow() = default;
  CaptureWindow(const CaptureWindow &) = delete;
  CaptureWindow &operator=(const CaptureWindow &) = delete;

  // False with error() set when the file is no capture. A capture of plain
  // frames (format 1, which has no index) is cut into records by a scan, at
  // its Ticks (tm_capture_index), and read by windows like any other.
  bool open(const QString &path);
  QString error() const { return error_; }
  // What was wrong with the file though it opened (an index refused and
  // replaced by a scan), one line; empty when nothing.
  QString note() const { return note_; }
  bool indexFromTail() const { return fromTail_; }
  // Whether the capture is of plain frames (format 1). One whose span fits
  // a window is still read whole up to kPlainWholeUpToBytes (about 16 bytes
  // of memory per byte: a scale test's 74 MB of 10,000 threads in seconds).
  bool plainFrames() const { return plain_; }
  static constexpr qint64 kPlainWholeUpToBytes = qint64(256) << 20;
  // Whether the capture should have had an index at its end and has none
  // (its writer was killed): format 1 never has one.
  bool lostItsIndex() const { return !fromTail_ && !plain_; }
  size_t records() const { return index_.size(); }
  // The span the records' times cover (CLOCK_MONOTONIC of the probe).
  int64_t firstNs() const;
  int64_t lastNs() const;
  size_t descriptionBytes() const;

  // A thread in a wait at a window's start that began before the window's
  // first record: the window's model would not know it (the thread shows
  // asleep, and its wait's end, releaser and all, is lost).
  struct CarriedWait {
    uint32_t tid = 0, object = 0, holder = 0;
    int state = 0;  // threadmon.ThreadState
  };
  // From m, a model read through t0 (the window before, or a segment):
  // what a model read from t0 on would not see begin: every thread blocked
  // in a join at t0 (joinsAt), and the waits on sync objects open at t0
  // that began before the first record a window at t0 reads. The streamed
  // report and the export carry them into a segment's new model.
  std::vector<CarriedWait> waitsOpenAt(const SessionModel &m, int64_t t0) const;

  // Loads [t0, t1] (and kWarmUpNs before t0) into model, which should be
  // fresh; marks it ended when the window reaches the capture's end. stop,
  // when set, ends the read early (a background build cancelled): checked
  // before each 1 MiB read. carried: waits open at t0 (waitsOpenAt),
  // begun in the model at its first record's time.
  CaptureLoadResult load(int64_t t0, int64_t t1, SessionModel *model,
                         const std::atomic<bool> *stop = nullptr,
                         const std::vector<CarriedWait> *carried = nullptr) const;

  // The capture's records read in order into one model, each record once,
  // a window after another: no warm-up, the model carries every thread's
  // state, open waits and counters across the windows' edges (a streamed
  // report, an export: every frame decoded and folded once). Memory grows
  // with what the model holds: the report starts a fresh model and Sequence
  // every 20 s (StreamedReport::kSegmentNs).
  class Sequence {
   public:
    // From the window at t0 as load(t0, t1) reads it (descriptions
    // before it replayed, kWarmUpNs of warm-up); INT64_MIN / 2: from the
    // first record.
    Sequence(const CaptureWindow &cw, SessionModel *model, int64_t t0,
             const std::vector<CarriedWait> *carried = nullptr);
    ~Sequence();
    Sequence(const Sequence &) = delete;
    Sequence &operator=(const Sequence &) = delete;
    // Reads on, through the first record that starts after t1 (the ticks
    // that close the window's last spans, as load(t0, t1) reads): the
    // frames applied by this call; marks the model ended at the last
    // record. Damaged stays so: later calls read nothing.
    CaptureLoadResult readThrough(int64_t t1, const std::atomic<bool> *stop = nullptr);
    // readThrough(t1), then on record by record until the model holds a
    // tick after t1 (the samples that settle the spans before t1: a tick's
    // CPU split, its stolen share), or to the end. A report's window sums
    // [t0, t1) only once they are final (records may be seconds of ticks
    // apart, and each is whole only when the tick after it is read).
    CaptureLoadResult readPast(int64_t t1, const std::atomic<bool> *stop = nullptr);
    bool atEnd() const;
    // Before the first readThrough: gives the model every live thread's
    // newest kernel sample in before (the segment before's model) older
    // than its first record (SessionModel::carrySamples), so that its first
    // sample of each is read against it, not from nothing.
    void carrySamplesFrom(const SessionModel &before);

   private:
    CaptureLoadResult readTo(size_t to, const std::atomic<bool> *stop);
    const CaptureWindow &cw_;
    SessionModel *model_;
    std::unique_ptr<class FrameDecoder> dec_;
    size_t next_ = 0;  // the first record not read
    uint64_t frames_ = 0;
    bool fed_ = false;  // records read (the model known from the first)
    CaptureLoadResult::Status status_ = CaptureLoadResult::Complete;
  };

  // The bytes of records load(t0, t1) reads.
  uint64_t bytesOf(int64_t t0, int64_t t1) const;

  // The hidden locks (KIND_INTERNAL objects with an address) the capture
  // describes anywhere, (id, address): their estimates need every
  // window's ticks on their words, from before a window's model knows them.
  std::vector<std::pair<uint32_t, uint64_t>> hiddenLocks() const;

  // Whether the index lists records of Summary frames only (written by the
  // capture's writer: docs/format.md, "Summaries").
  bool hasSummaries() const;
  // Reads those records alone and gives hook every Summary frame's payload,
  // in file order (the checked frames: CRC, size).
  void readSummaries(const std::function<void(const uint8_t *, uint32_t)> &hook) const;

 private:
  struct Description {
    size_t record;  // the record it came in
    QByteArray payload;
  };
  // Records [from, to) with their times known, unknown ones (plain frames
  // found by a scan) taking their neighbours'.
  size_t firstRecordEndingAfter(int64_t t) const;
  size_t firstRecordStartingAfter(int64_t t) const;
  static int64_t warmUpFrom(int64_t t0);
  // The records [from, to) that load(t0, t1) reads.
  std::pair<size_t, size_t> recordsOf(int64_t t0, int64_t t1) const;
  bool readDescriptions();
  // Feeds dec the header and the descriptions sent before the warm-up of
  // a window at t0; returns the warm-up's first record.
  size_t prime(int64_t t0, class FrameDecoder *dec) const;
  // The time a window at t0 knows its threads from: its first record's.
  int64_t knownFrom(int64_t t0) const;
  // Applies to model the descriptions in records from `to` on that give
  // the first contention stack of an object it knows: a whole read names
  // its waits by it from the start (SyncObjectInfo::callSite), however late
  // the probe sent it.
  void applyLaterStacks(size_t to, SessionModel *model) const;
  // Every thread of m blocked in a join at t0 (no sync object's wait: a
  // main thread joined for 16 s showed its kernel view after each edge,
  // 492 ms on a CPU in spin_sleep-2's capture where the whole read has the
  // join). A join begun after a window's first record is begun again where
  // it began: the carried one covers only the warm-up before the window.
  static std::vector<CarriedWait> joinsAt(const SessionModel &m, int64_t t0);
  // Feeds dec the carried waits' beginnings, at time t (one Transitions).
  static void feedCarried(const std::vector<CarriedWait> &carried, int64_t t,
                          class FrameDecoder *dec);
  // The records [from, to) fed to dec through its read-ahead.
  void feedAhead(size_t from, size_t to, class FrameDecoder *dec,
                 const std::atomic<bool> *stop) const;
  uint64_t offsetOf(size_t record) const;
  // Reads one record whole and feeds it to dec.
  void feedRecord(size_t record, class FrameDecoder *dec) const;

  mutable QFile file_;
  QString error_;
  QString note_;
  bool fromTail_ = false;
  bool plain_ = false;    // format 1
  uint64_t dataEnd_ = 0;  // where the index record (or the file) starts
  QByteArray header_;
  std::vector<tm_index_entry> index_;
  std::vector<int64_t> lo_, hi_;  // per record, known times carried over
  std::vector<Description> descriptions_;
  // The SyncObject descriptions with a first contention stack: (index in
  // descriptions_, object id).
  std::vector<std::pair<size_t, uint32_t>> stackUpdates_;
};

}  // namespace tmon

#endif
