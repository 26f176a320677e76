// The whole-run timeline above a long capture's window (captureopen.h):
// the capture's summary drawn by paintWholeRun, with the window shown
// marked on it, so the user sees the whole run and where the detail is.
#ifndef THREADMON_UI_WHOLERUNSTRIP_H
#define THREADMON_UI_WHOLERUNSTRIP_H

#include <QWidget>
#include <functional>
#include <memory>

#include "modeltypes.h"

namespace tmon {
class RunSummary;
}

namespace tmui {

class WholeRunStrip : public QWidget {
 public:
  WholeRunStrip(std::shared_ptr<const tmon::RunSummary> summary, tmon::TimeRange window,
                QWidget *parent = nullptr);
  QSize sizeHint() const override;
  // Called with the time (session ns) the user clicked, to show the window
  // ending there; none: the strip only shows.
  void onSeek(std::function<void(int64_t)> seek);

 protected:
  void paintEvent(QPaintEvent *event) override;
  void mousePressEvent(QMouseEvent *event) override;

 private:
  std::shared_ptr<const tmon::RunSummary> summary_;
  tmon::TimeRange window_;
  std::function<void(int64_t)> seek_;
};

}  // namespace tmui

#endif
