// Measuring the display at scale, shared by test-ui-scale and tm-bench-display.
//
// GuiBlockMeter: the longest time the GUI thread went without coming back to
// its event loop. A zero-interval timer fires once per loop iteration; the
// largest gap between two firings is the longest block (whatever ran in
// between: a view's rebuild, a paint, a layout, decoding frames).
//
// settle(): one user action's whole cost: run it, then every event it posted
// (show, layout, paint) until the loop is idle. Done in one go, so it bounds
// every block the action causes from above.
#ifndef THREADMON_TESTS_GUIBLOCK_H
#define THREADMON_TESTS_GUIBLOCK_H

#include <QApplication>
#include <QElapsedTimer>
#include <QTimer>
#include <algorithm>
#include <functional>

namespace scale {

class GuiBlockMeter {
 public:
  GuiBlockMeter() {
    beat_.setInterval(0);
    QObject::connect(&beat_, &QTimer::timeout, [this] { beat(); });
  }
  void start() {
    longestNs_ = 0;
    clock_.start();
    last_ = 0;
    beat_.start();
  }
  void stop() {
    beat();
    beat_.stop();
  }
  double longestMs() const { return double(longestNs_) / 1e6; }

 private:
  void beat() {
    const qint64 now = clock_.nsecsElapsed();
    longestNs_ = std::max(longestNs_, now - last_);
    last_ = now;
  }
  QTimer beat_;
  QElapsedTimer clock_;
  qint64 last_ = 0, longestNs_ = 0;
};

// Milliseconds to run action and everything it caused.
inline double settle(const std::function<void()> &action) {
  QElapsedTimer t;
  t.start();
  action();
  for (int i = 0; i < 3; ++i) QApplication::processEvents();
  return double(t.nsecsElapsed()) / 1e6;
}

}  // namespace scale

#endif
