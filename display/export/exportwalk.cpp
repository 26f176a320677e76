#include "exportwalk.h"

#include <QFileInfo>
#include <algorithm>

#include "capturewindow.h"
#include "sessionmodel.h"

namespace tmon {

namespace {
// A whole model holds about 25 bytes per byte of a busy capture (30 s of
// 100 busy threads: 15.7 MB, 388 MB of RSS read whole, 169 MB in windows):
// past this size the export reads windows.
constexpr qint64 kStreamFromBytes = 8ll << 20;

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
  std::vector<std::pair<int64_t, int64_t>> spans;
  for (int64_t a = first; a < last || spans.empty(); a += opt.chunkNs)
    spans.emplace_back(a, std::min(last, a + opt.chunkNs));
  CaptureLoadResult res;
  res.status = CaptureLoadResult::Complete;
  for (size_t k = 0; k < spans.size(); k++) {
    const bool isFirst = k == 0, isLast = k + 1 == spans.size();
    SessionModel m;
    // The first window of a whole export from the first record: records
    // before the first timed one (transitions sent before the first tick)
    // have no time in the index (as StreamedReport reads it).
    const bool fromStart = isFirst && !hasRange(opt.range);
    CaptureLoadResult part = cw.load(fromStart ? INT64_MIN / 2 : spans[k].first, spans[k].second, &m);
    res.frames += part.frames;
    if (part.status != CaptureLoadResult::Complete && res.status == CaptureLoadResult::Complete) {
      res.status = part.status == CaptureLoadResult::Unreadable ? CaptureLoadResult::Damaged
                                                                  : part.status;
      res.message = part.message;
    }
    m.settleNow(2);
    int64_t t0 = spans[k].first, t1 = std::min(spans[k].second, m.latestNs());
    if (fromStart) t0 = std::min(t0, m.startNs());
    if (isLast && !hasRange(opt.range)) t1 = m.latestNs();
    sink->window(m, TimeRange{t0, std::max(t0, t1)}, isFirst, isLast);
  }
  if (!cw.indexFromTail() && res.status == CaptureLoadResult::Complete) {
    res.status = CaptureLoadResult::Damaged;
    res.message = QStringLiteral("cut short (no index at its end): exporting its %1 whole records")
                      .arg(cw.records());
  }
  if (!sink->finish(writeError)) res.status = CaptureLoadResult::Unreadable;
  return res;
}

}  // namespace tmon
