#include "wholerunstrip.h"

#include <QMouseEvent>
#include <QPainter>
#include <algorithm>

#include "runsummary.h"
#include "wholerunpainter.h"

namespace tmui {

namespace {
bool same(const tmon::TimeRange &a, const tmon::TimeRange &b) {
  return a.t0 == b.t0 && a.t1 == b.t1;
}
bool same(const std::vector<tmon::TimeRange> &a, const std::vector<tmon::TimeRange> &b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const tmon::TimeRange &x, const tmon::TimeRange &y) { return same(x, y); });
}
}  // namespace

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

tmon::TimeRange WholeRunStrip::run() const {
  return run_.t1 > run_.t0 ? run_ : tmon::TimeRange{summary_->startNs(), summary_->endNs()};
}

void WholeRunStrip::setBuilding(tmon::TimeRange run, std::vector<tmon::TimeRange> pending,
                                const QString &status) {
  run_ = run;
  pending_ = std::move(pending);
  status_ = status;
  drawn_ = QImage();
  update();
}

void WholeRunStrip::chunkBuilt(tmon::TimeRange chunk, const QString &status) {
  status_ = status;
  const auto done = std::find_if(pending_.begin(), pending_.end(),
                                 [&](const tmon::TimeRange &r) { return same(r, chunk); });
  if (done != pending_.end()) pending_.erase(done);
  if (!drawn_.isNull() && summary_->tids().size() == drawnThreads_) {
    {
      QPainter p(&drawn_);  // a copy of its own when shared (Qt's copy on write)
      paintWholeRunPart(&p, drawn_.rect(), *summary_, run(), chunk);
    }
    keepShared();
  } else {
    drawn_ = QImage();
  }
  update();
}

void WholeRunStrip::resizeEvent(QResizeEvent *event) {
  drawn_ = QImage();
  QWidget::resizeEvent(event);
}

void WholeRunStrip::paintEvent(QPaintEvent *) {
  if (drawn_.isNull() && width() > 0 && height() > 0) {
    const tmon::TimeRange r = run();
    if (shared_ && shared_->image.size() == size() && shared_->threads == summary_->tids().size() &&
        same(shared_->run, r) && same(shared_->pending, pending_)) {
      drawn_ = shared_->image;
      drawnThreads_ = shared_->threads;
    } else {
      drawn_ = QImage(size(), QImage::Format_RGB32);
      {
        QPainter d(&drawn_);
        paintWholeRun(&d, drawn_.rect(), *summary_, r);
      }
      drawnThreads_ = summary_->tids().size();
      ++wholePaints_;
      keepShared();
    }
  }
  QPainter p(this);
  p.drawImage(0, 0, drawn_);
  const tmon::TimeRange r = run();
  const QRect plot = wholeRunPlot(rect());
  if (plot.width() <= 0 || r.length() <= 0) return;
  // What is not summed yet: hatched, with the build's progress over it.
  for (const tmon::TimeRange &chunk : pending_) {
    const auto [c0, c1] = wholeRunColumns(plot, r, chunk);
    if (c1 >= c0)
      p.fillRect(plot.left() + c0, plot.top(), c1 - c0 + 1, plot.height(),
                 QBrush(QColor(160, 160, 160), Qt::BDiagPattern));
  }
  if (!status_.isEmpty()) {
    // At the right, over what the build has yet to reach (the rows' label
    // at the left stays readable).
    const QRect line(plot.left() + 4, plot.top() + 4, plot.width() - 8, fontMetrics().height() + 4);
    const QRect text =
        fontMetrics().boundingRect(line, Qt::AlignRight, status_).adjusted(-3, -1, 3, 1);
    p.fillRect(text, QColor(255, 255, 255, 220));
    p.setPen(Qt::black);
    p.drawText(line, Qt::AlignRight, status_);
  }
  const auto xOf = [&](int64_t t) {
    return plot.left() + int(int64_t(plot.width()) * (t - r.t0) / r.length());
  };
  const int x0 = xOf(window_.t0), x1 = std::max(xOf(window_.t1), x0 + 2);
  p.setPen(QPen(Qt::black, 2));
  p.setBrush(Qt::NoBrush);
  p.drawRect(QRect(x0, plot.top() - 1, x1 - x0, plot.height() + 2));
}

void WholeRunStrip::keepShared() {
  if (shared_) *shared_ = Drawing{drawn_, drawnThreads_, run(), pending_};
}

void WholeRunStrip::onSeek(std::function<void(int64_t)> seek) {
  seek_ = std::move(seek);
  setCursor(Qt::PointingHandCursor);
  setToolTip(toolTip() + tr(". Click a time to show the part around it."));
}

void WholeRunStrip::mousePressEvent(QMouseEvent *event) {
  const int x = int(event->position().x());
  const QRect plot = wholeRunPlot(rect());
  const tmon::TimeRange r = run();
  if (!seek_ || event->button() != Qt::LeftButton || plot.width() <= 0 || r.length() <= 0 ||
      x < plot.left() || x > plot.right())
    return QWidget::mousePressEvent(event);
  const int64_t clicked = r.t0 + r.length() * (x - plot.left()) / plot.width();
  // The window is centred on the click (openCapture clamps it to the run).
  seek_(clicked + (window_.t1 - window_.t0) / 2);
}

}  // namespace tmui
