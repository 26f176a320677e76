#include "exportformats.h"

#include <QFileInfo>

#include "capturewindow.h"
#include "chromeexport.h"
#include "perfettoexport.h"
#include "pprofexport.h"
#include "sessionmodel.h"

namespace tmon {

namespace {
const ExportFormat kPerfetto{
    "perfetto", ".pftrace", false, "open it in https://ui.perfetto.dev",
    "Perfetto keeps states, waits, wakeups and counters; it drops acquisitions, hold times and "
    "findings"};
const ExportFormat kChrome{
    "chrome", ".json", false, "open it in https://ui.perfetto.dev or chrome://tracing",
    "Chrome JSON keeps states, waits (object, first call site), wakeups and counters; it drops "
    "call stacks, hold times and findings, and has no interning: about 130 bytes an event"};
const ExportFormat kPprof{
    "pprof", ".pb.gz", true, "open it with go tool pprof -http=: FILE",  // FILE: the path
    "pprof keeps waits (or holds) by lock, call stack and thread; it drops time, thread states "
    "and findings"};
const ExportFormat *const kFormats[] = {&kPerfetto, &kChrome, &kPprof, nullptr};
}  // namespace

const ExportFormat *const *exportFormats() { return kFormats; }

const ExportFormat *exportFormat(const QString &name) {
  for (const ExportFormat *const *f = kFormats; *f; f++)
    if (name == QLatin1String((*f)->name)) return *f;
  return nullptr;
}

QString exportOpenHint(const ExportFormat &f, const QString &path) {
  return QString::fromUtf8(f.openHint).replace(QLatin1String("FILE"), path);
}

QString exportFileName(const QString &capture, const ExportFormat &f) {
  QString base = capture;
  if (base.endsWith(QLatin1String(".tmcap"))) base.chop(6);
  return base + QLatin1String(f.extension);
}

std::unique_ptr<ExportSink> makeExportSink(const ExportFormat &f, ExportOutput *out, bool holds) {
  if (&f == &kPprof)
    return std::make_unique<PprofSink>(out, holds ? PprofSink::Holds : PprofSink::Waits);
  if (&f == &kChrome) return std::make_unique<ChromeSink>(out);
  return std::make_unique<PerfettoSink>(out);
}

TimeRange relativeRange(const QString &capture, double fromS, double toS) {
  int64_t start = 0;
  CaptureWindow cw;
  SessionModel m;
  if (cw.open(capture))
    cw.load(cw.firstNs(), cw.firstNs(), &m);
  else
    CaptureReader::load(capture, &m);
  start = m.startNs();
  TimeRange r{fromS > 0 ? start + int64_t(fromS * 1e9) : INT64_MIN / 2,
              toS >= 0 ? start + int64_t(toS * 1e9) : INT64_MAX / 2};
  return r;
}

}  // namespace tmon
