// libFuzzer target: the input as a capture file reported the way
// threadmon-report reads a capture over 64 MiB: StreamedReport::rows (the
// index or the scan of the block headers, windows on two threads, the merge,
// the report). Inputs are 4 KiB, so the threshold is lowered through the
// function's own parameter rather than the input laid over a large
// synthetic capture (seconds per execution): the whole-read threshold at 0,
// so that every input takes the long captures' path, and 10 ms windows, so
// that a seed of 150 ms (display/fuzz/block_seed.py --tick-times) is cut
// into many. A forged index or block header must cost bounded memory and
// time (the run's -rss_limit_mb and -timeout): an input read as billions of
// windows, or as one window holding everything, stops the run as a crash
// would.
#include <sys/mman.h>
#include <unistd.h>

#include <QJsonDocument>
#include <QString>

#include "reportjson.h"
#include "reportstream.h"
#include "reporttext.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The readers read a file: the input is one in memory.
  static const int fd = memfd_create("fuzz-stream", 0);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != ssize_t(size)) return 0;
  ReportRows rows;
  const tmon::CaptureLoadResult res =
      StreamedReport::rows(QStringLiteral("/proc/self/fd/%1").arg(fd), &rows,
                           StreamedReport::Mode::Auto, 10'000'000, /*wholeUpToBytes=*/0);
  if (res.status == tmon::CaptureLoadResult::Unreadable) return 0;
  const QJsonObject report = reportJson(rows);
  reportText(report);
  QJsonDocument(report).toJson();
  return 0;
}
