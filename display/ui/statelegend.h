// A one-line legend of the thread state colours, for views that draw
// states without their own legend (the timeline).
#ifndef THREADMON_UI_STATELEGEND_H
#define THREADMON_UI_STATELEGEND_H

#include <QWidget>

namespace tmui {

class StateLegend : public QWidget {
  Q_OBJECT
 public:
  explicit StateLegend(QWidget *parent = nullptr);
  QSize sizeHint() const override;
  int heightForWidth(int width) const override;
  bool hasHeightForWidth() const override { return true; }

 protected:
  void paintEvent(QPaintEvent *event) override;

 private:
  int layout(int width, bool paint, class QPainter *p) const;
};

}  // namespace tmui

#endif
