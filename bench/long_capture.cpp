// tm-bench-longcap: a long capture of busy threads made in minutes, for
// measuring the display and the report on hours of data (docs/benchmarks.md,
// "Long captures"): the frames a probe writes for `tm-bench-swarm busy N`
// (display/tests/busy_capture.h), through the display's CaptureWriter.
// Times are simulated: an hour takes as long as packing, compressing and
// summing it (the writer's Summary records: docs/format.md, "Summaries").
//
//   tm-bench-longcap MINUTES THREADS OUT.tmcap [--no-index] [--no-summaries] [--plain]
//
// --no-index leaves the index off (a capture whose writer was killed),
// --no-summaries the Summary records (a capture of an older writer),
// --plain writes plain frames (format 1, THREADMON_COMPRESS=0's).
#include <QCoreApplication>
#include <QFile>
#include <QString>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "busy_capture.h"
#include "capturewriter.h"

int main(int argc, char **argv) {
  QCoreApplication app(argc, argv);  // the summaries' models use timers
  bool index = true, summaries = true, plain = false, usage = argc < 4;
  for (int i = 4; i < argc; i++) {
    if (std::strcmp(argv[i], "--no-index") == 0)
      index = false;
    else if (std::strcmp(argv[i], "--no-summaries") == 0)
      summaries = false;
    else if (std::strcmp(argv[i], "--plain") == 0)
      plain = true;
    else
      usage = true;
  }
  if (usage) {
    std::fprintf(stderr,
                 "usage: tm-bench-longcap MINUTES THREADS OUT.tmcap [--no-index] "
                 "[--no-summaries] [--plain]\n");
    return 1;
  }
  const double minutes = std::atof(argv[1]);
  const int threads = std::atoi(argv[2]);
  if (minutes <= 0 || threads <= 0) {
    std::fprintf(stderr, "tm-bench-longcap: MINUTES and THREADS must be positive\n");
    return 1;
  }
  const QString path = QString::fromLocal8Bit(argv[3]);
  if (plain) {
    if (!busycap::writePlainFile(path, threads, uint64_t(minutes * 60e9))) {
      std::fprintf(stderr, "tm-bench-longcap: cannot write %s\n", argv[3]);
      return 1;
    }
    std::printf("{\"minutes\":%g,\"threads\":%d,\"plain\":true,\"bytes\":%lld}\n", minutes, threads,
                static_cast<long long>(QFile(path).size()));
    return 0;
  }
  tmon::CaptureWriter out;
  out.setSummaries(summaries);
  if (!out.open(QString::fromLocal8Bit(argv[3]))) {
    std::fprintf(stderr, "tm-bench-longcap: %s\n", qPrintable(out.error()));
    return 1;
  }
  bool ok = busycap::write(&out, threads, uint64_t(minutes * 60e9));
  ok = ok && out.close();
  if (ok && !index) ok = busycap::dropIndex(QString::fromLocal8Bit(argv[3]));
  if (!ok) {
    std::fprintf(stderr, "tm-bench-longcap: %s\n", qPrintable(out.error()));
    return 1;
  }
  std::printf("{\"minutes\":%g,\"threads\":%d,\"frames\":%llu,\"bytes\":%lld}\n", minutes, threads,
              static_cast<unsigned long long>(out.framesWritten()),
              static_cast<long long>(QFile(QString::fromLocal8Bit(argv[3])).size()));
  return 0;
}
