#include "wholerunstrip.h"

#include <QMouseEvent>
#include <QPainter>

#include "runsummary.h"
#include "wholerunpainter.h"

namespace tmui {

WholeRunStrip::WholeRunStrip(std::shared_ptr<const tmon::RunSummary> summary,
                             tmon::TimeRange window, QWidget *parent)
    : QWidget(parent), summary_(std::move(summary)), window_(window) {
  setToolTip(
      tr("The whole run, from the capture's summary: each row a thread, each column its "
         "states' shares; the outlined span is the part shown in detail below"));
}

QSize WholeRunStrip::sizeHint() const {
  return QSize(800, 180);
}

void WholeRunStrip::paintEvent(QPaintEvent *) {
  QPainter p(this);
  const WholeRunLayout l = paintWholeRun(&p, rect(), *summary_);
  if (l.plot.width() <= 0) return;
  const int64_t span = summary_->endNs() - summary_->startNs();
  const auto xOf = [&](int64_t t) {
    return l.plot.left() + int(int64_t(l.plot.width()) * (t - summary_->startNs()) / span);
  };
  const int x0 = xOf(window_.t0), x1 = std::max(xOf(window_.t1), x0 + 2);
  p.setPen(QPen(Qt::black, 2));
  p.setBrush(Qt::NoBrush);
  p.drawRect(QRect(x0, l.plot.top() - 1, x1 - x0, l.plot.height() + 2));
}

void WholeRunStrip::onSeek(std::function<void(int64_t)> seek) {
  seek_ = std::move(seek);
  setCursor(Qt::PointingHandCursor);
  setToolTip(toolTip() + tr(". Click a time to show the part around it."));
}

void WholeRunStrip::mousePressEvent(QMouseEvent *event) {
  const int x = int(event->position().x());
  const QRect plot = wholeRunPlot(rect());
  const int64_t span = summary_->endNs() - summary_->startNs();
  if (!seek_ || event->button() != Qt::LeftButton || plot.width() <= 0 || span <= 0 ||
      x < plot.left() || x > plot.right())
    return QWidget::mousePressEvent(event);
  const int64_t clicked = summary_->startNs() + span * (x - plot.left()) / plot.width();
  // The window is centred on the click (openCapture clamps it to the run).
  seek_(clicked + (window_.t1 - window_.t0) / 2);
}

}  // namespace tmui
