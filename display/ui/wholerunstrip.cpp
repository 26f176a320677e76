#include "wholerunstrip.h"

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

}  // namespace tmui
