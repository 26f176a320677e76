// tm-bench-wholerun: the whole-run view of a long capture, from open to its
// first complete paint (docs/benchmarks.md, "Long captures"): the capture
// opened by its index (CaptureWindow), the whole run's summary taken from
// its Summary records (RunSummary::read; built from the detail when it has
// none), then the whole-run timeline (display/ui/wholerunpainter.h) painted
// into an image of WIDTHxHEIGHT and saved as PNG. One JSON line: wall and
// this thread's CPU of each step and of all of them. Run it with
// QT_QPA_PLATFORM=offscreen; peak RSS under /usr/bin/time -v.
//
//   tm-bench-wholerun CAPTURE OUT.png [WIDTHxHEIGHT (1400x900)]
#include <QElapsedTimer>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>

#include <cstdio>
#include <ctime>

#include "capturewindow.h"
#include "runsummary.h"
#include "wholerunpainter.h"

namespace {

double cpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

}  // namespace

int main(int argc, char **argv) {
  QGuiApplication app(argc, argv);
  if (argc < 3) {
    std::fprintf(stderr, "usage: tm-bench-wholerun CAPTURE OUT.png [WIDTHxHEIGHT]\n");
    return 1;
  }
  int width = 1400, height = 900;
  if (argc > 3 && std::sscanf(argv[3], "%dx%d", &width, &height) != 2) {
    std::fprintf(stderr, "tm-bench-wholerun: size is WIDTHxHEIGHT\n");
    return 1;
  }
  QElapsedTimer wall;
  wall.start();
  const double cpu0 = cpuMs();
  tmon::CaptureWindow cw;
  if (!cw.open(QString::fromLocal8Bit(argv[1]))) {
    std::fprintf(stderr, "tm-bench-wholerun: %s\n", qPrintable(cw.error()));
    return 1;
  }
  const double openMs = cpuMs() - cpu0;
  tmon::RunSummary sum;
  const bool fromRecords = sum.read(cw);
  if (!fromRecords) sum.build(cw);
  const double sumMs = cpuMs() - cpu0 - openMs;
  QImage image(width, height, QImage::Format_RGB32);
  {
    QPainter p(&image);
    tmui::paintWholeRun(&p, image.rect(), sum);
  }
  const double paintMs = cpuMs() - cpu0 - openMs - sumMs;
  const qint64 paintedWall = wall.elapsed();
  if (!image.save(QString::fromLocal8Bit(argv[2]))) {
    std::fprintf(stderr, "tm-bench-wholerun: cannot write %s\n", argv[2]);
    return 1;
  }
  std::printf("{\"summary_from\":\"%s\",\"threads\":%zu,\"buckets\":%zu,\"open_cpu_ms\":%.1f,"
              "\"summary_cpu_ms\":%.1f,\"paint_cpu_ms\":%.1f,\"painted_cpu_ms\":%.1f,"
              "\"painted_wall_ms\":%lld}\n",
              fromRecords ? "records" : "detail", sum.tids().size(), sum.buckets(), openMs, sumMs,
              paintMs, openMs + sumMs + paintMs, static_cast<long long>(paintedWall));
  return 0;
}
