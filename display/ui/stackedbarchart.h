// Horizontal 100 % stacked bars, one row per thread, LWP or CPU, with a
// legend and a percentage axis. Painted by hand so that thousands of rows
// scroll smoothly: only the visible rows are drawn.
#ifndef THREADMON_UI_STACKEDBARCHART_H
#define THREADMON_UI_STACKEDBARCHART_H

#include <QAbstractScrollArea>
#include <QColor>
#include <QString>
#include <vector>

#include "modeltypes.h"

namespace tmui {

struct BarCategory {
  QString label;
  QColor color;
};

struct BarRow {
  QString label;   // first line, e.g. "1234 worker-3"
  QString detail;  // second line in small type, e.g. the start routine
  QString note;    // right of the bar, e.g. counts
  std::vector<double> values;  // one per category, any unit
  double total = 0;            // 100 %; when 0 the sum of values is
  bool marked = false;         // drawn with a marker (the probe's own thread, a pool)
  QString markText;            // what the marker says
  int indent = 0;              // label inset, in levels (a pool's members)
};

// The final states as categories, in state order, and a StateTimes as the
// values of a row in that order: the threads' and user threads' bars.
std::vector<BarCategory> finalStateCategories();
std::vector<double> finalStateValues(const tmon::StateTimes &st);

class StackedBarChart : public QAbstractScrollArea {
  Q_OBJECT
 public:
  explicit StackedBarChart(QWidget *parent = nullptr);

  void setTitle(const QString &title);
  void setCategories(const std::vector<BarCategory> &cats);
  void setRows(std::vector<BarRow> rows);
  void setEmptyText(const QString &text) { emptyText_ = text; }
  int rowCount() const { return int(rows_.size()); }
  const BarRow &row(int i) const { return rows_[size_t(i)]; }
  QSize sizeHint() const override;

 signals:
  void rowClicked(int row);

 protected:
  void paintEvent(QPaintEvent *event) override;
  void mousePressEvent(QMouseEvent *event) override;
  void resizeEvent(QResizeEvent *event) override;
  bool viewportEvent(QEvent *event) override;

 private:
  int headerHeight() const;
  int rowHeight() const;
  int labelWidth() const;
  int noteWidth() const;
  void measureColumns();
  void updateScrollRange();
  int rowAt(int y) const;
  QRect barRect(int rowTop) const;

  QString title_;
  QString emptyText_;
  std::vector<BarCategory> cats_;
  std::vector<BarRow> rows_;
  std::vector<bool> catUsed_;
  int rawLabelWidth_ = 0, rawNoteWidth_ = 0;  // widest label / note text (measureColumns)
};

}  // namespace tmui

#endif
