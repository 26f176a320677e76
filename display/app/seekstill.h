// What a long capture's tab shows while a seek reads another window: a
// still, dimmed picture of the page it left, with a line saying what is
// read. The page itself is gone by then: two windows of an hour's capture
// held at once passed the display's memory goal (docs/benchmarks.md).
#ifndef THREADMON_SEEKSTILL_H
#define THREADMON_SEEKSTILL_H

#include <QPixmap>
#include <QWidget>

class SeekStill : public QWidget {
 public:
  SeekStill(const QPixmap &page, const QString &title, QWidget *parent = nullptr);
  // The picture of page as its window shows it: copied from the window's
  // backing store (about a millisecond) where that is an image holding the
  // page, else painted anew (QWidget::grab: the whole page's paint, 9-10 ms
  // of the GUI thread for the hour's, before the seek's read can start).
  static QPixmap pictureOf(QWidget *page);
  void setText(const QString &text);
  QString text() const { return text_; }
  QString title() const { return title_; }

 protected:
  void paintEvent(QPaintEvent *event) override;

 private:
  QPixmap page_;
  QString title_;
  QString text_;
};

#endif
