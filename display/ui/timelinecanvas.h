// The timeline painter: one state strip per thread over time. Only the
// visible rows are painted, and each pixel column shows the state that
// filled most of it, so a 1,000-thread, minutes-long session costs about
// (visible rows x width) per frame whatever the number of intervals.
#ifndef THREADMON_UI_TIMELINECANVAS_H
#define THREADMON_UI_TIMELINECANVAS_H

#include <QAbstractScrollArea>
#include <vector>

#include "modeltypes.h"

namespace tmon {
class SessionModel;
}

namespace tmui {

class ViewWindow;

class TimelineCanvas : public QAbstractScrollArea {
  Q_OBJECT
 public:
  TimelineCanvas(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);

  // Intervals blocked on this sync object are outlined (0: none).
  void setHighlightedObject(uint32_t objectId);
  uint32_t highlightedObject() const { return highlight_; }
  // The visible span; zooming or panning stops following the window.
  tmon::TimeRange visibleRange() const;
  void setVisibleRange(const tmon::TimeRange &r);
  void followWindow();
  int rowCount() const;
  // Time at a viewport x, and back.
  int64_t timeAt(int x) const;
  double xOf(int64_t t) const;
  void refresh();

 protected:
  void paintEvent(QPaintEvent *event) override;
  void resizeEvent(QResizeEvent *event) override;
  bool viewportEvent(QEvent *event) override;
  void mousePressEvent(QMouseEvent *event) override;
  void mouseMoveEvent(QMouseEvent *event) override;
  void mouseReleaseEvent(QMouseEvent *event) override;
  void wheelEvent(QWheelEvent *event) override;
  void keyPressEvent(QKeyEvent *event) override;

 private:
  // Taller rows when few threads fit, down to 14 px for many.
  int rowHeight() const;
  int axisHeight() const;
  int labelWidth() const { return 190; }
  QRect dataRect() const;
  int rowAt(int y) const;
  void updateScrollRange();
  void zoomAround(int64_t t, double factor);
  void panBy(int64_t dt);
  void paintAxis(QPainter &p, const tmon::TimeRange &v);
  void paintRow(QPainter &p, int index, int top, const tmon::TimeRange &v);
  QString tooltipAt(const QPoint &pos) const;

  tmon::SessionModel *model_;
  ViewWindow *window_;
  uint32_t highlight_ = 0;
  bool following_ = true;
  tmon::TimeRange view_;
  // Mouse interaction.
  enum class Drag { None, Select, Pan };
  Drag drag_ = Drag::None;
  int dragStartX_ = 0;
  int dragNowX_ = 0;
  tmon::TimeRange dragStartView_;
  int cursorX_ = -1;
  bool selecting_ = false;
  // Per-column accumulation reused between rows (width x states).
  std::vector<float> columns_;
};

}  // namespace tmui

#endif
