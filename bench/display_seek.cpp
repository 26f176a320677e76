// tm-bench-displayseek: what a user waits for when seeking in a long
// capture in the display (docs/benchmarks.md, "Seeking on two cores"). A
// 1400x900 main window opens the capture (its first 10 s window); then, for
// each of SEEKS positions spread over the run, the page is asked to seek as
// a click on its whole-run strip asks (SessionView::seekRequested), and the
// clock runs until the new page has replaced it in its tab and painted with
// its data: the read on CaptureLoader's thread (index, window, settle,
// overview), the page made on the GUI thread, the shown views' rebuilds (on
// workers for a large window) and the paint that shows them. Wall (and, as
// page_ms, until the page was first painted, before its views' data: what
// this measured until 2026-11-29), the process's CPU and the GUI thread's,
// one JSON line each; then a seek back to the first seek's window
// ("back_s": its views' results kept from then). Run it with QT_QPA_PLATFORM=offscreen; with
// THREADMON_SEEK_STEPS=1 the display says each step's wall and thread CPU
// on stderr (display/app/seeksteps.h).
//
//   tm-bench-displayseek CAPTURE [SEEKS (5)] [PNG: the last seek's page, as painted]
#include <QApplication>
#include <QElapsedTimer>
#include <QPointer>
#include <QTabWidget>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "capturewindow.h"
#include "mainwindow.h"
#include "modelview.h"
#include "sessionview.h"

namespace {

double cpuMs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

template <typename Done>
void waitFor(Done done) {
  while (!done()) {
    QApplication::processEvents(QEventLoop::WaitForMoreEvents);
    // What an event loop would: processEvents alone never runs deleteLater.
    QApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
  }
}

}  // namespace

int main(int argc, char **argv) {
  QApplication app(argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: tm-bench-displayseek CAPTURE [SEEKS] [PNG]\n");
    return 1;
  }
  const QString path = QString::fromLocal8Bit(argv[1]);
  const int seeks = argc > 2 ? std::atoi(argv[2]) : 5;
  tmon::CaptureWindow cw;
  if (!cw.open(path)) {
    std::fprintf(stderr, "tm-bench-displayseek: %s\n", qPrintable(cw.error()));
    return 1;
  }
  const double spanS = double(cw.lastNs() - cw.firstNs()) / 1e9;
  MainWindow w;
  w.resize(1400, 900);
  w.setAttribute(Qt::WA_DontShowOnScreen);
  w.show();
  tmui::SessionView *page = nullptr;
  QElapsedTimer wall;
  wall.start();
  w.openCaptureFile(path, -1, [&page](tmui::SessionView *p) { page = p; });
  waitFor([&] { return page != nullptr; });
  page->repaint();
  std::printf("{\"open\":{\"wall_ms\":%lld,\"span_s\":%.1f}}\n",
              static_cast<long long>(wall.elapsed()), spanS);
  constexpr double kWindowS = 10;
  // One seek, a JSON line: key is "seek_s", or "back_s" for a window read before.
  auto seekTo = [&](double at, const char *key) {
    // Null once deleted: the next page may be made at the same address.
    const QPointer<tmui::SessionView> old(page);
    wall.restart();
    const double cpu = cpuMs(CLOCK_PROCESS_CPUTIME_ID), gui = cpuMs(CLOCK_THREAD_CPUTIME_ID);
    emit old->seekRequested(at);
    // The tab holds a still of the old page until the new one is read.
    waitFor([&] {
      QWidget *shown = w.tabs()->currentWidget();
      return shown != old && shown->objectName() != QLatin1String("seekStill");
    });
    page = qobject_cast<tmui::SessionView *>(w.tabs()->currentWidget());
    if (!page || page == old) {
      std::fprintf(stderr, "tm-bench-displayseek: the seek to %.1f s gave no page\n", at);
      return false;
    }
    page->repaint();
    const qint64 pageMs = wall.elapsed();
    // Done when the views on screen show the new window: those of a large
    // window compute on workers after the page is in its tab.
    waitFor([&] {
      for (int v = 0; v < tmui::kViewCount; v++) {
        const tmui::ModelView *view = page->view(tmui::ViewKind(v));
        if (view && view->showing() && view->behind()) return false;
      }
      return true;
    });
    page->repaint();
    std::printf(
        "{\"%s\":%.1f,\"wall_ms\":%lld,\"page_ms\":%lld,\"cpu_ms\":%.1f,"
        "\"gui_cpu_ms\":%.1f}\n",
        key, at, static_cast<long long>(wall.elapsed()), static_cast<long long>(pageMs),
        cpuMs(CLOCK_PROCESS_CPUTIME_ID) - cpu, cpuMs(CLOCK_THREAD_CPUTIME_ID) - gui);
    std::fflush(stdout);
    return true;
  };
  double first = -1;
  for (int k = 0; k < seeks; k++) {
    const double at = kWindowS + (spanS - kWindowS) * (k + 1) / seeks;
    if (first < 0) first = at;
    if (!seekTo(at, "seek_s")) return 1;
  }
  // Back to the first seek's window: its views' results kept (KeptIndex).
  if (seeks > 1 && !seekTo(first, "back_s")) return 1;
  if (argc > 3 && !w.grab().save(QString::fromLocal8Bit(argv[3]))) {
    std::fprintf(stderr, "tm-bench-displayseek: cannot write %s\n", argv[3]);
    return 1;
  }
  return 0;
}
