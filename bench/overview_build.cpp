// tm-bench-overview: a long capture without Summary records (the probe's)
// opened in the display as a user opens it (openCapture: the 10 s window,
// every view, the whole-run strip on a shown 1400x900 page), its overview
// built from the detail in the background (docs/benchmarks.md, "Whole-run
// overview without Summary records"). Measured: the open, the wall time
// until the overview is whole, the CPU of the GUI thread and of the process
// meanwhile, the GUI thread's longest block (a 5 ms heartbeat: past it, wall
// and the most CPU in one gap) and peak RSS; then the capture opened again,
// its overview from the cache. The page is saved as PNG when half of the
// chunks are done and when all are. The cache of an earlier run
// (CAPTURE.tmsum) is removed first. Run it with QT_QPA_PLATFORM=offscreen.
//
//   tm-bench-overview CAPTURE HALF.png FULL.png [AT_SECONDS]
#include <sys/resource.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "captureopen.h"
#include "guiblock.h"
#include "sessionview.h"
#include "wholerunstrip.h"

namespace {

double processCpuMs() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

tmui::WholeRunStrip *stripOf(tmui::SessionView *page) {
  return dynamic_cast<tmui::WholeRunStrip *>(
      page->findChild<QWidget *>(QStringLiteral("wholeRun")));
}

bool save(tmui::SessionView *page, const char *path) {
  QApplication::processEvents();
  return page->grab().toImage().save(QString::fromLocal8Bit(path));
}

}  // namespace

int main(int argc, char **argv) {
  QApplication app(argc, argv);
  if (argc < 4) {
    std::fprintf(stderr, "usage: tm-bench-overview CAPTURE HALF.png FULL.png [AT_SECONDS]\n");
    return 1;
  }
  const QString capture = QString::fromLocal8Bit(argv[1]);
  const double at = argc > 4 ? std::atof(argv[4]) : -1;
  QFile::remove(capture + QStringLiteral(".tmsum"));
  QElapsedTimer wall;
  wall.start();
  const double cpu0 = processCpuMs();
  const qint64 gui0 = scale::GuiBlockMeter::threadCpuNs();
  QString error;
  tmui::SessionView *page = openCapture(capture, &error, at);
  if (!page) {
    std::fprintf(stderr, "tm-bench-overview: %s\n", qPrintable(error));
    return 1;
  }
  const double openMs = double(wall.nsecsElapsed()) / 1e6;
  tmui::WholeRunStrip *strip = stripOf(page);
  if (!strip || !strip->building()) {
    std::fprintf(stderr, "tm-bench-overview: %s\n",
                 strip ? "the overview came from records or a cache" : "no overview");
    return 1;
  }
  const size_t chunks = strip->pendingChunks();
  scale::showPage(page);
  // The page's first paint and the views' first results are the open's,
  // as without an overview: the meter starts after them (the chunks done
  // meanwhile are counted in pending_after_first_paint).
  while (scale::anyBusy(page)) QApplication::processEvents(QEventLoop::WaitForMoreEvents);
  QApplication::processEvents();
  {
    // The views' first refreshes after show (not flagged busy) are the
    // page's, with or without an overview: 2 s of them are left out.
    QEventLoop settle;
    QTimer::singleShot(2000, &settle, &QEventLoop::quit);
    settle.exec();
  }
  const size_t firstPending = strip->pendingChunks();
  scale::GuiBlockMeter meter(5);
  meter.start();
  bool half = false;
  double longest = 0, longestCpu = 0;
  const auto stop = [&] {
    meter.stop();
    longest = std::max(longest, meter.longestMs());
    longestCpu = std::max(longestCpu, meter.longestCpuMs());
  };
  while (strip->building()) {
    QApplication::processEvents(QEventLoop::WaitForMoreEvents);  // sleeps until one comes
    if (!half && strip->pendingChunks() <= chunks / 2) {
      stop();  // the grab is the benchmark's, not the build's
      half = save(page, argv[2]);
      meter.start();
    }
  }
  stop();
  const double builtMs = double(wall.nsecsElapsed()) / 1e6;
  const double cpuMs = processCpuMs() - cpu0;
  const double guiMs = double(scale::GuiBlockMeter::threadCpuNs() - gui0) / 1e6;
  if (!half || !save(page, argv[3])) {
    std::fprintf(stderr, "tm-bench-overview: cannot write the PNGs\n");
    return 1;
  }
  delete page;
  QElapsedTimer again;
  again.start();
  tmui::SessionView *second = openCapture(capture, &error, at);
  const double reopenMs = double(again.nsecsElapsed()) / 1e6;
  const bool cached = second && stripOf(second) && !stripOf(second)->building();
  delete second;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf(
      "{\"chunks\":%zu,\"pending_after_first_paint\":%zu,\"open_ms\":%.0f,\"overview_wall_ms\":%."
      "0f,\"process_cpu_ms\":%.0f,"
      "\"gui_cpu_ms\":%.0f,\"gui_longest_block_ms\":%.1f,\"gui_longest_block_cpu_ms\":%.1f,"
      "\"reopen_ms\":%.0f,\"reopen_from_cache\":%s,\"peak_rss_kb\":%ld}\n",
      chunks, firstPending, openMs, builtMs, cpuMs, guiMs, longest, longestCpu, reopenMs,
      cached ? "true" : "false", ru.ru_maxrss);
  return 0;
}
