// Measuring the display at scale, shared by test-ui-scale and tm-bench-display.
//
// GuiBlockMeter: the longest time the GUI thread went without coming back to
// its event loop. A zero-interval timer fires once per loop iteration; the
// largest gap between two firings is the longest block (whatever ran in
// between: a view's rebuild, a paint, a layout, decoding frames). On a
// loaded machine a gap also holds the time the thread waited for a CPU, so
// the meter also keeps the most CPU time the thread used within one gap:
// the work itself.
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
#include <ctime>
#include <functional>

namespace scale {

class GuiBlockMeter {
 public:
  GuiBlockMeter() {
    beat_.setInterval(0);
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
    longestNs_ = std::max(longestNs_, now - last_);
    longestCpuNs_ = std::max(longestCpuNs_, cpu - lastCpu_);
    last_ = now;
    lastCpu_ = cpu;
  }
  QTimer beat_;
  QElapsedTimer clock_;
  qint64 last_ = 0, longestNs_ = 0, lastCpu_ = 0, longestCpuNs_ = 0;
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
