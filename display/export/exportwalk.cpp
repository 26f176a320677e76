#include "exportwalk.h"

#include <QFileInfo>
#include <algorithm>
#include <memory>

#include "capturewindow.h"
#include "largeblocks.h"
#include "sessionmodel.h"

namespace tmon {

namespace {
// A whole model holds about 25 bytes per byte of a busy capture (30 s of
// 100 busy threads: 15.7 MB, 388 MB of RSS read whole, 169 MB in windows):
// past this size the export reads windows.
constexpr qint64 kStreamFromBytes = 8ll << 20;
// More windows than this are no capture's (46 days in 1 s windows).
constexpr double kMaxWindows = 4e6;

bool hasRange(const TimeRange &r) { return r.t1 > r.t0; }

}  // namespace

bool exportModel(const SessionModel &m, const TimeRange &r, ExportSink *sink, QString *writeError) {
  TimeRange whole = m.resolve(Window::wholeRun());
  TimeRange span = whole;
  if (hasRange(r)) span = TimeRange{std::max(r.t0, whole.t0), std::min(r.t1, whole.t1)};
  if (span.t1 < span.t0) span.t1 = span.t0;
  sink->window(m, span, true, true);
  return sink->finish(writeError);
}

CaptureLoadResult exportCapture(const QString &path, ExportSink *sink, const ExportOptions &opt,
                                QString *writeError) {
  const bool stream = opt.mode == ExportOptions::Stream ||
                      (opt.mode == ExportOptions::Auto && QFileInfo(path).size() > kStreamFromBytes);
  CaptureWindow cw;
  if (!stream || !cw.open(path)) {
    // Small, or format 1 (no records to seek to): read whole.
    SessionModel m;
    CaptureLoadResult res = CaptureReader::load(path, &m);
    if (res.status == CaptureLoadResult::Unreadable) return res;
    m.settleNow();
    if (!exportModel(m, opt.range, sink, writeError)) res.status = CaptureLoadResult::Unreadable;
    return res;
  }
  int64_t first = cw.firstNs(), last = cw.lastNs();
  if (hasRange(opt.range)) {
    first = std::max(first, opt.range.t0);
    last = std::min(last, opt.range.t1);
  }
  // Times from the file: a forged one spans centuries (2.9 KB of
  // index-times-far.tmcap asked for billions of windows, and their list
  // alone outgrew the memory): refused, as the report refuses it.
  const double windowsWanted = (double(last) - double(first)) / double(opt.chunkNs);
  if (windowsWanted > kMaxWindows) {
    CaptureLoadResult refused;
    refused.status = CaptureLoadResult::Unreadable;
    refused.message =
        QStringLiteral("its records' times span %1 s: more than %2 windows, not trusted")
            .arg((double(last) - double(first)) / 1e9, 0, 'g', 3)
            .arg(kMaxWindows);
    return refused;
  }
  CaptureLoadResult res;
  res.status = CaptureLoadResult::Complete;
  // The windows of a segment are read into one model, window after window
  // (as the streamed report reads them): every record decoded once, each
  // thread's state, samples and open waits carried across the windows'
  // edges by the model. A segment starts as a window read alone does
  // (descriptions, warm-up) and is dropped at its end: memory follows the
  // segment. Only the segments' edges are edges a window can differ at
  // (docs/architecture.md, "Window edges").
  const int64_t perSegment = std::max<int64_t>(
      1, std::max(opt.segmentNs, opt.chunkNs) / std::max<int64_t>(1, opt.chunkNs));
  // A dropped model's large buffers kept for the next one: its pages were
  // faulted in again otherwise (a fifth of the CPU, in the kernel).
  const largeblocks::KeepFreed keepFreed;
  std::unique_ptr<SessionModel> m;
  std::unique_ptr<CaptureWindow::Sequence> seq;
  int64_t inSegment = 0;
  int64_t segmentEnd = INT64_MIN;  // where the segment's last window ends
  bool seqWhole = false;  // the segment's model read without damage
  // Where the window before ended: before its nominal end when its model
  // ended earlier (frames timed before their record's index time, read by
  // the next window only): the next window starts there, so that no span
  // is left out (mariadb.tmcap in 1 s windows: 4.16-5.0 s was, and a wait
  // held at 4.16 s was joined to a later one).
  int64_t from = first;
  // Windows follow each other from first; the last ends at last (one
  // window when the capture has no span).
  for (int64_t a = first;; a += opt.chunkNs) {
    const int64_t b = a > last - opt.chunkNs ? last : a + opt.chunkNs;
    const bool isFirst = a == first, isLast = b >= last;
    // The first window of a whole export from the first record: records
    // before the first timed one (transitions sent before the first tick)
    // have no time in the index (as StreamedReport reads it).
    const bool fromStart = isFirst && !hasRange(opt.range);
    const int64_t start = std::min(a, from);
    if (!seq || inSegment == perSegment) {
      // Waits open at the segment's start that began before its first
      // record, from the segment before: without them a wait longer than
      // the warm-up lost its beginning.
      std::vector<CaptureWindow::CarriedWait> carried;
      if (seq) carried = cw.waitsOpenAt(*m, start);
      seq.reset();
      // Kept until the next segment has each thread's last sample in it.
      const std::unique_ptr<SessionModel> before = std::move(m);
      m = std::make_unique<SessionModel>();
      seq = std::make_unique<CaptureWindow::Sequence>(cw, m.get(),
                                                      fromStart ? INT64_MIN / 2 : start, &carried);
      if (before) seq->carrySamplesFrom(*before);
      inSegment = 0;
      sink->segmentFrom(start);
      const int64_t span = (perSegment - 1) * opt.chunkNs;
      segmentEnd = a > last - opt.chunkNs - span ? last : a + span + opt.chunkNs;
    }
    inSegment++;
    // The segment is read whole with its first window, its later windows
    // cut from the same model: a thread's states up to a sample are derived
    // from that sample, however late it comes (a thread is sampled when its
    // counters moved, its asleep kind read then), and some frames come in a
    // record after their time (mariadb of the e2e tests, 1 s windows: 1,742
    // states of 4.7 s split otherwise; 1 s read ahead left one, a quiet
    // thread of mutex_loop-1 another 4 s later). The model grows to the
    // segment anyway: no more memory, and one settle. Read on to three
    // ticks past the segment's end, as the streamed report reads a window
    // (Sequence::readPast): the probe's own switch records come with the
    // tick after (deadlock-1 in --window 1 --segment 1: its thread read 8.5
    // of 95 us on a CPU at each edge's last ticks, the rest stolen).
    const int64_t readTo = std::max(b, segmentEnd);
    CaptureLoadResult part = seq->readPast(readTo);
    seqWhole = part.status == CaptureLoadResult::Complete;
    res.frames += part.frames;
    if (part.status != CaptureLoadResult::Complete && res.status == CaptureLoadResult::Complete) {
      res.status = part.status == CaptureLoadResult::Unreadable ? CaptureLoadResult::Damaged
                                                                  : part.status;
      res.message = part.message;
    }
    // Damage ends the model's stream: the next window starts a segment.
    if (!seqWhole) inSegment = perSegment;
    m->settleNow(2);
    int64_t t0 = start, t1 = std::min(b, m->latestNs());
    if (fromStart) t0 = std::min(t0, m->startNs());
    if (isLast && !hasRange(opt.range)) t1 = m->latestNs();
    sink->window(*m, TimeRange{t0, std::max(t0, t1)}, isFirst, isLast);
    if (isLast) break;
    from = std::max(t0, t1);
  }
  // As the report says it (StreamedReport::read): an index refused, or none.
  if (!cw.note().isEmpty() && res.status == CaptureLoadResult::Complete) {
    res.status = CaptureLoadResult::Damaged;
    res.message = cw.note();
  } else if (cw.lostItsIndex() && res.status == CaptureLoadResult::Complete) {
    res.status = CaptureLoadResult::Damaged;
    res.message = QStringLiteral("cut short (no index at its end): exporting its %1 whole records")
                      .arg(cw.records());
  }
  if (!sink->finish(writeError)) res.status = CaptureLoadResult::Unreadable;
  return res;
}

}  // namespace tmon
