// The whole-run timeline above a long capture's window (captureopen.h):
// the capture's summary drawn by paintWholeRun, with the window shown
// marked on it, so the user sees the whole run and where the detail is.
// A summary still being built from the detail (the capture has no Summary
// records) fills in a chunk at a time: the spans not yet summed are hatched
// and a line says how far the build is. The drawing is kept in an image,
// and a chunk repaints only its own columns (a whole repaint of an hour of
// 100 threads takes tens of ms). The pages of one capture share that image
// (shareDrawing): a seek's new page shows the strip without painting it.
#ifndef THREADMON_UI_WHOLERUNSTRIP_H
#define THREADMON_UI_WHOLERUNSTRIP_H

#include <QImage>
#include <QWidget>
#include <functional>
#include <memory>
#include <vector>

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

  // The summary is being built: run is the whole run's span, pending the
  // chunks not summed yet, status the line shown over it.
  void setBuilding(tmon::TimeRange run, std::vector<tmon::TimeRange> pending,
                   const QString &status);
  // A chunk was added to the summary (or, status only, the build ended).
  void chunkBuilt(tmon::TimeRange chunk, const QString &status);
  QString status() const { return status_; }
  const tmon::RunSummary &summary() const { return *summary_; }
  tmon::TimeRange window() const { return window_; }
  bool building() const { return !pending_.empty(); }
  size_t pendingChunks() const { return pending_.size(); }
  // Keeps what feeds the strip alive as long as it (a build shared by the
  // pages of one capture).
  void keep(std::shared_ptr<void> owner) { owner_ = std::move(owner); }
  // The last drawing of the same summary by any strip sharing it; taken
  // when it was drawn at this strip's size, run and build state.
  struct Drawing {
    QImage image;
    size_t threads = 0;
    tmon::TimeRange run{};
    std::vector<tmon::TimeRange> pending;
  };
  void shareDrawing(std::shared_ptr<Drawing> drawing) { shared_ = std::move(drawing); }
  // Painted whole by this strip, not taken from a shared drawing (tests).
  int wholePaints() const { return wholePaints_; }

 protected:
  void paintEvent(QPaintEvent *event) override;
  void resizeEvent(QResizeEvent *event) override;
  void mousePressEvent(QMouseEvent *event) override;

 private:
  tmon::TimeRange run() const;

  std::shared_ptr<const tmon::RunSummary> summary_;
  tmon::TimeRange window_;
  tmon::TimeRange run_{};  // empty: the summary's own span
  std::vector<tmon::TimeRange> pending_;
  QString status_;
  std::function<void(int64_t)> seek_;
  QImage drawn_;             // the summary as painted; null: paint it whole
  size_t drawnThreads_ = 0;  // a new thread moves the rows: paint it whole
  std::shared_ptr<void> owner_;
  std::shared_ptr<Drawing> shared_;
  int wholePaints_ = 0;
  void keepShared();
};

}  // namespace tmui

#endif
