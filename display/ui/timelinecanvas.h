// The timeline painter: one state strip per row over time, the rows laid
// out by TimelineView from the pools (timelinerows.h). A thread's row shows
// in each pixel column the state that filled most of it; a pool's row is
// its threads' state mix (poolmix.h), each column split top to bottom by
// the share of its threads in each state, computed off the GUI thread for
// the span and width it was asked for (drawn where its times fall until
// the next arrives). Only the visible rows are painted, so a repaint costs
// about (visible rows x width) whatever the number of threads or intervals.
#ifndef THREADMON_UI_TIMELINECANVAS_H
#define THREADMON_UI_TIMELINECANVAS_H

#include <QAbstractScrollArea>
#include <QHash>
#include <memory>
#include <vector>

#include "modeltypes.h"
#include "poolmix.h"
#include "timelinerows.h"

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
  // What visibleRange() is for a window while the canvas follows it.
  static tmon::TimeRange followed(const tmon::TimeRange &window);
  void setVisibleRange(const tmon::TimeRange &r);
  void followWindow();
  // Rows drawn (pools, outliers, threads).
  int rowCount() const { return int(layout_.rows.size()); }
  const TimelineLayout &layout() const { return layout_; }
  void setLayout(TimelineLayout layout);
  // The aggregates' state mixes by key (TimelineRow::key).
  using Mixes = QHash<QString, tmon::StateMix>;
  void setMixes(std::shared_ptr<const Mixes> mixes);
  // Pixel columns of the strips: the width a mix is computed for.
  int stripWidth() const { return dataRect().width(); }
  // The row at a viewport y (-1: none), and its top.
  int rowAt(int y) const;
  int rowTop(int row) const;
  // What hovering at a viewport point shows ("" for nothing).
  QString tooltipText(const QPoint &pos) const;
  // Time at a viewport x, and back.
  int64_t timeAt(int x) const;
  double xOf(int64_t t) const;
  void refresh();

 signals:
  // The span shown or the strips' width changed: mixes are for another.
  void spanChanged();
  // An aggregate's label was clicked (its TimelineRow::key).
  void aggregateClicked(const QString &key);

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
  // Thread rows 14-24 px (taller when few fit: TimelineLayout::fitThreads),
  // aggregates kAggregateRows times that; rowTops_ from them.
  void layOutRows();
  int axisHeight() const;
  int labelWidth() const { return 200; }
  QRect dataRect() const;
  void updateScrollRange();
  void zoomAround(int64_t t, double factor);
  void panBy(int64_t dt);
  void paintAxis(QPainter &p, const tmon::TimeRange &v);
  void paintLabel(QPainter &p, const TimelineRow &row, const QRect &r);
  void paintThread(QPainter &p, int index, int top, int h, const tmon::TimeRange &v);
  void paintMix(QPainter &p, const tmon::StateMix &mix, int top, int h, const tmon::TimeRange &v);
  QString threadTooltip(int index, int64_t at) const;
  QString aggregateTooltip(const TimelineRow &row, int64_t at) const;

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
  TimelineLayout layout_;
  std::vector<int> rowTops_;  // rows + 1, from 0
  std::shared_ptr<const Mixes> mixes_;
  int lastWidth_ = 0;
};

}  // namespace tmui

#endif
