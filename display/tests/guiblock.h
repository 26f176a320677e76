// Measuring the display at scale, shared by test-ui-scale and tm-bench-display.
//
// GuiBlockMeter: the longest time the GUI thread went without coming back to
// its event loop. A zero-interval timer fires once per loop iteration; the
// largest gap between two firings is the longest block (whatever ran in
// between: a view's rebuild, a paint, a layout, decoding frames). On a
// loaded machine a gap also holds the time the thread waited for a CPU, so
// the meter also keeps the most CPU time the thread used within one gap:
// the work itself. A meter with an interval (a live benchmark measuring CPU
// use, where a zero-interval timer would keep the thread busy itself) fires
// that often and counts only the time past it.
//
// measure(): one user action on a session page, then the event loop until
// every view has shown its result, with the meter running.
// timelineSteps(): the timeline's own actions (zoom, which mixes the pools
// again; hovering over the largest pool, unfolding it and scrolling its
// threads), measured.
#ifndef THREADMON_TESTS_GUIBLOCK_H
#define THREADMON_TESTS_GUIBLOCK_H

#include <QApplication>
#include <QElapsedTimer>
#include <QScrollBar>
#include <QTimer>
#include <algorithm>
#include <ctime>
#include <functional>
#include <vector>

#include "modelview.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "timelinecanvas.h"
#include "timelineview.h"

namespace scale {

class GuiBlockMeter {
 public:
  explicit GuiBlockMeter(int intervalMs = 0) : intervalNs_(qint64(intervalMs) * 1000000) {
    beat_.setTimerType(Qt::PreciseTimer);
    beat_.setInterval(intervalMs);
    QObject::connect(&beat_, &QTimer::timeout, [this] { beat(); });
  }
  void start() {
    longestNs_ = longestCpuNs_ = 0;
    clock_.start();
    last_ = 0;
    lastCpu_ = threadCpuNs();
    beat_.start();
  }
  void stop() {
    beat();
    beat_.stop();
  }
  double longestMs() const { return double(longestNs_) / 1e6; }
  double longestCpuMs() const { return double(longestCpuNs_) / 1e6; }

  static qint64 threadCpuNs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }

 private:
  void beat() {
    const qint64 now = clock_.nsecsElapsed(), cpu = threadCpuNs();
    longestNs_ = std::max(longestNs_, now - last_ - intervalNs_);
    longestCpuNs_ = std::max(longestCpuNs_, cpu - lastCpu_);
    last_ = now;
    lastCpu_ = cpu;
  }
  QTimer beat_;
  qint64 intervalNs_;
  QElapsedTimer clock_;
  qint64 last_ = 0, longestNs_ = 0, lastCpu_ = 0, longestCpuNs_ = 0;
};

// Every view of views.def.
inline std::vector<tmui::ViewKind> allKinds() {
  std::vector<tmui::ViewKind> kinds;
  for (const tmon::ViewInfo &v : tmon::kViews) kinds.push_back(v.kind);
  return kinds;
}
const std::vector<tmui::ViewKind> kKinds = allKinds();

// A view still computing on its worker thread, or frames waiting for it.
inline bool anyBusy(tmui::SessionView *page) {
  for (tmui::ViewKind k : kKinds)
    if (page->view(k)->busy()) return true;
  return page->model()->backgroundReading() || page->model()->deferredCount() > 0;
}

struct Step {
  double readyMs = 0;    // until every view showing has drawn its result
  double longestMs = 0;  // the longest the GUI thread was blocked meanwhile (wall)
  double cpuMs = 0;      // the most CPU the GUI thread used in one loop turn
};

// An action, then the event loop until every view's result is shown (at most 120 s).
inline Step measure(tmui::SessionView *page, const std::function<void()> &action) {
  GuiBlockMeter meter;
  QElapsedTimer t;
  t.start();
  meter.start();
  action();
  do {
    QApplication::processEvents(QEventLoop::WaitForMoreEvents, 20);
  } while (anyBusy(page) && t.elapsed() < 120000);
  for (int i = 0; i < 3; ++i) QApplication::processEvents();
  meter.stop();
  return Step{double(t.nsecsElapsed()) / 1e6, meter.longestMs(), meter.longestCpuMs()};
}

// The timeline raised first; each step's name and measure.
inline std::vector<std::pair<QString, Step>> timelineSteps(tmui::SessionView *page) {
  std::vector<std::pair<QString, Step>> steps;
  tmui::TimelineView *tl = page->timeline();
  tmui::TimelineCanvas *c = tl->canvas();
  auto step = [&](const char *name, const std::function<void()> &action) {
    steps.emplace_back(QString::fromLatin1(name), measure(page, action));
  };
  auto zoom = [c](int64_t num, int64_t den) {
    const tmon::TimeRange v = c->visibleRange();
    const int64_t mid = v.t0 + v.length() / 2, half = v.length() / 2 * num / den;
    c->setVisibleRange({mid - half, mid + half});
  };
  step("zoom in", [&] { zoom(1, 4); });
  step("zoom out", [&] { zoom(8, 1); });
  step("follow", [&] { c->followWindow(); });
  QString largest;
  int row = -1;
  size_t most = 0;
  for (size_t i = 0; i < c->layout().rows.size(); ++i) {
    const tmui::TimelineRow &r = c->layout().rows[i];
    if (r.aggregate() && r.threads.size() > most) {
      most = r.threads.size();
      largest = r.key;
      row = int(i);
    }
  }
  if (largest.isEmpty()) return steps;
  // Threads per state at the middle of the span: a state lookup per thread.
  step("hover", [&] {
    c->tooltipText(QPoint(c->viewport()->width() * 2 / 3, c->rowTop(row) + 4));
  });
  step("unfold", [&] { tl->toggle(largest); });
  step("scroll", [&] { c->verticalScrollBar()->setValue(c->verticalScrollBar()->maximum() / 2); });
  step("fold", [&] { tl->toggle(largest); });
  return steps;
}

inline void showPage(tmui::SessionView *page) {
  page->resize(1400, 900);
  page->setAttribute(Qt::WA_DontShowOnScreen);
  page->show();
}

}  // namespace scale

#endif
