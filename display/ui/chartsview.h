// Charts: CPU utilisation, runnable threads and contention over the window,
// one Qt Charts line chart each, sharing the time axis (seconds since the
// session started).
#ifndef THREADMON_UI_CHARTSVIEW_H
#define THREADMON_UI_CHARTSVIEW_H

#include <QList>
#include <QPointF>

#include "modelview.h"

class QChart;
class QLineSeries;
class QValueAxis;

namespace tmui {

class ChartsView : public ModelView {
  Q_OBJECT
 public:
  ChartsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  int rowCount() const override { return int(charts_.size()); }
  // Points in series i, its y axis ticks and plot height in pixels (tests).
  int pointCount(int i) const;
  int yTickCount(int i) const;
  double plotHeight(int i) const;
  // The time axis's label step in seconds and its labels' format (tests).
  double xTickInterval(int i) const;
  QString xLabelFormat(int i) const;

 protected:
  void rebuild() override;
  void resizeEvent(QResizeEvent *e) override;

 private:
  struct Chart {
    QChart *chart;
    QLineSeries *series;
    QValueAxis *x;
    QValueAxis *y;
    int niceTicks = 5;  // the y axis ticks applyNiceNumbers chose
  };
  Chart addChart(const QString &title, const QString &yLabel, const QColor &color);
  void setPoints(Chart &c, const QList<QPointF> &points, double t0, double t1, double yMin);
  static void fitTicks(Chart &c);

  std::vector<Chart> charts_;
};

}  // namespace tmui

#endif
