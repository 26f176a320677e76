#include "timelinecanvas.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

#include "sessionmodel.h"
#include "statepalette.h"
#include "viewwindow.h"

namespace tmui {

namespace {
constexpr int kStates = tmon::kFinalStateCount;
constexpr int64_t kMinSpanNs = 10000;  // 10 us: deeper zoom shows nothing new
// The canvas shows times within +-2^60 ns (36 years around the clock's
// zero): past any session (the model drops times past 2^58), and far enough
// from int64's ends that no zoom, pan or axis arithmetic can overflow.
constexpr int64_t kTimeLimit = int64_t(1) << 60;

tmon::TimeRange sane(tmon::TimeRange r) {
  r.t0 = std::clamp(r.t0, -kTimeLimit, kTimeLimit - kMinSpanNs);
  r.t1 = std::clamp(r.t1, r.t0 + kMinSpanNs, kTimeLimit);
  return r;
}

// A time or a span computed in floating point, as int64 ns it can hold.
int64_t toNs(double ns) {
  return int64_t(std::clamp(ns, -2.0 * double(kTimeLimit), 2.0 * double(kTimeLimit)));
}

QString formatDuration(int64_t ns) {
  if (ns < 10000) return QStringLiteral("%1 µs").arg(double(ns) / 1e3, 0, 'f', 1);
  if (ns < 10000000) return QStringLiteral("%1 ms").arg(double(ns) / 1e6, 0, 'f', 2);
  return QStringLiteral("%1 s").arg(double(ns) / 1e9, 0, 'f', 3);
}

// A 1-2-5 step giving at least minPx between ticks.
int64_t tickStep(int64_t span, int width, int minPx) {
  const double wanted = double(span) * minPx / std::max(1, width);
  double step = 1;
  while (step < wanted) {
    if (step * 2 >= wanted) {
      step *= 2;
      break;
    }
    if (step * 5 >= wanted) {
      step *= 5;
      break;
    }
    step *= 10;
  }
  // A step as wide as the span is enough (two ticks at most), and an int64.
  return int64_t(std::clamp(step, 1.0, double(std::max<int64_t>(1, span))));
}
}  // namespace

TimelineCanvas::TimelineCanvas(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : QAbstractScrollArea(parent), model_(model), window_(window) {
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  viewport()->setMouseTracking(true);
  viewport()->setBackgroundRole(QPalette::Base);
  viewport()->setAutoFillBackground(true);
  setFocusPolicy(Qt::StrongFocus);
}

void TimelineCanvas::setHighlightedObject(uint32_t objectId) {
  highlight_ = objectId;
  viewport()->update();
}

tmon::TimeRange TimelineCanvas::visibleRange() const {
  return following_ ? sane(window_->range()) : view_;
}

void TimelineCanvas::setVisibleRange(const tmon::TimeRange &r) {
  view_ = sane(r);
  following_ = false;
  viewport()->update();
}

void TimelineCanvas::followWindow() {
  following_ = true;
  viewport()->update();
}

int TimelineCanvas::rowHeight() const {
  const int n = std::max(1, model_->threadCount());
  return std::clamp((viewport()->height() - axisHeight()) / n, 14, 24);
}

int TimelineCanvas::rowCount() const { return model_->threadCount(); }

void TimelineCanvas::refresh() {
  updateScrollRange();
  viewport()->update();
}

int TimelineCanvas::axisHeight() const { return fontMetrics().height() + 10; }

QRect TimelineCanvas::dataRect() const {
  return QRect(labelWidth(), axisHeight(), std::max(1, viewport()->width() - labelWidth()),
               std::max(1, viewport()->height() - axisHeight()));
}

int64_t TimelineCanvas::timeAt(int x) const {
  const tmon::TimeRange v = visibleRange();
  const QRect d = dataRect();
  return v.t0 + toNs(double(x - d.left()) * double(v.length()) / d.width());
}

double TimelineCanvas::xOf(int64_t t) const {
  const tmon::TimeRange v = visibleRange();
  const QRect d = dataRect();
  const double x = double(t) - double(v.t0);  // t may be any time, v.t0 is sane
  // Far off-screen is far enough: painters slow down on huge coordinates.
  return std::clamp(d.left() + x * d.width() / double(v.length()), -1e6, 1e6);
}

int TimelineCanvas::rowAt(int y) const {
  if (y < axisHeight()) return -1;
  const int i = (y - axisHeight() + verticalScrollBar()->value()) / rowHeight();
  return i < model_->threadCount() ? i : -1;
}

void TimelineCanvas::updateScrollRange() {
  const int visible = viewport()->height() - axisHeight();
  verticalScrollBar()->setRange(0, std::max(0, model_->threadCount() * rowHeight() - visible));
  verticalScrollBar()->setPageStep(std::max(1, visible));
  verticalScrollBar()->setSingleStep(rowHeight());
}

void TimelineCanvas::resizeEvent(QResizeEvent *event) {
  QAbstractScrollArea::resizeEvent(event);
  updateScrollRange();
}

void TimelineCanvas::zoomAround(int64_t t, double factor) {
  const tmon::TimeRange v = visibleRange();
  const int64_t span = std::max(kMinSpanNs, toNs(double(v.length()) * factor));
  const double frac = (double(t) - double(v.t0)) / double(v.length());
  const int64_t t0 = toNs(double(t) - frac * double(span));
  setVisibleRange({t0, t0 + span});
}

void TimelineCanvas::panBy(int64_t dt) {
  const tmon::TimeRange v = visibleRange();
  dt = std::clamp(dt, -2 * kTimeLimit, 2 * kTimeLimit);
  setVisibleRange({v.t0 + dt, v.t1 + dt});
}

void TimelineCanvas::paintAxis(QPainter &p, const tmon::TimeRange &v) {
  const QRect d = dataRect();
  const QFontMetrics fm = fontMetrics();
  p.fillRect(QRect(0, 0, viewport()->width(), axisHeight()), palette().color(QPalette::Window));
  p.setPen(palette().color(QPalette::Text));
  p.drawText(QRect(6, 0, labelWidth() - 12, axisHeight()), Qt::AlignLeft | Qt::AlignVCenter,
             tr("Thread  \u2193 / time \u2192"));
  const int64_t step = tickStep(v.length(), d.width(), 90);
  const int64_t origin = model_->startNs();
  const int decimals = step >= 1000000000 ? 0 : step >= 100000000 ? 1 : step >= 10000000 ? 2
                       : step >= 1000000 ? 3 : 6;
  int64_t first = v.t0 - origin;
  first = (first >= 0 ? (first + step - 1) / step : first / step) * step;
  for (int64_t rel = first; origin + rel <= v.t1; rel += step) {
    const int x = int(xOf(origin + rel));
    p.setPen(palette().color(QPalette::Mid));
    p.drawLine(x, axisHeight() - 4, x, viewport()->height());
    p.setPen(palette().color(QPalette::Text));
    const QString label = QStringLiteral("%1 s").arg(double(rel) / 1e9, 0, 'f', decimals);
    p.drawText(x + 3, fm.ascent() + 3, label);
  }
}

// Accumulates how much of each pixel column every state covers, then paints
// runs of columns whose dominant state is the same as one rectangle.
void TimelineCanvas::paintRow(QPainter &p, int index, int top, const tmon::TimeRange &v) {
  const QRect d = dataRect();
  const int w = d.width();
  columns_.assign(size_t(w) * kStates, 0.f);
  const double pxPerNs = double(w) / double(std::max<int64_t>(1, v.length()));
  for (const tmon::StateInterval &iv : model_->intervals(index, v)) {
    const double x0 = std::max(0.0, double(iv.start - v.t0) * pxPerNs);
    const double x1 = std::min(double(w), double(iv.end - v.t0) * pxPerNs);
    const int s = int(iv.state);
    for (int c = int(x0); c < w && c < x1; ++c) {
      const double cover = std::min(x1, c + 1.0) - std::max(x0, double(c));
      if (cover > 0) columns_[size_t(c) * kStates + size_t(s)] += float(cover);
    }
  }
  const int h = rowHeight() - 3;
  int runStart = 0, runState = -1;
  auto flush = [&](int end) {
    if (runState >= 0 && end > runStart)
      p.fillRect(QRect(d.left() + runStart, top + 1, end - runStart, h),
                 stateColor(tmon::FinalState(runState)));
  };
  for (int c = 0; c < w; ++c) {
    const float *col = &columns_[size_t(c) * kStates];
    int best = -1;
    float bestCover = 0.05f, total = 0;  // under 5 % of a pixel: leave it empty
    for (int s = 0; s < kStates; ++s) {
      total += col[s];
      if (col[s] > bestCover) {
        bestCover = col[s];
        best = s;
      }
    }
    if (best < 0 && total > 0.5f) best = int(std::max_element(col, col + kStates) - col);
    if (best != runState) {
      flush(c);
      runStart = c;
      runState = best;
    }
  }
  flush(w);
}

void TimelineCanvas::paintEvent(QPaintEvent *) {
  QPainter p(viewport());
  const tmon::TimeRange v = visibleRange();
  const QRect d = dataRect();
  paintAxis(p, v);
  const int rh = rowHeight();
  const int scroll = verticalScrollBar()->value();
  const int n = model_->threadCount();
  const int first = scroll / rh;
  const int last = std::min(n - 1, (scroll + d.height()) / rh);
  const QFontMetrics fm = fontMetrics();
  p.setClipRect(QRect(0, d.top(), viewport()->width(), d.height()));
  for (int i = first; i <= last; ++i) {
    const int top = d.top() + i * rh - scroll;
    const tmon::ThreadInfo &t = model_->thread(i);
    if (i % 2) p.fillRect(QRect(0, top, viewport()->width(), rh), palette().color(QPalette::AlternateBase));
    QFont f = font();
    f.setItalic(t.probe);
    p.setFont(f);
    p.setPen(t.probe ? palette().color(QPalette::PlaceholderText) : palette().color(QPalette::Text));
    const QString label = t.probe ? tr("%1 %2 (probe)").arg(t.tid).arg(t.name)
                                  : QStringLiteral("%1 %2").arg(t.tid).arg(t.name);
    p.drawText(QRect(6, top, labelWidth() - 10, rh), Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(label, Qt::ElideRight, labelWidth() - 10));
    paintRow(p, i, top, v);
    // Gaps whose states are folded totals (the ring was full): hatched, so
    // the order drawn inside is not read as what happened.
    for (const tmon::TimeRange &g : model_->eventGapSpans(i, v)) {
      const int x0 = int(xOf(std::max(g.t0, v.t0)));
      const int x1 = std::max(x0 + 2, int(xOf(std::min(g.t1, v.t1))));
      p.fillRect(QRect(x0, top + 1, x1 - x0, rh - 3), QBrush(gapColor(), Qt::BDiagPattern));
    }
  }
  p.setFont(font());
  // Intervals blocked on the selected object, outlined over the strips.
  if (highlight_ != 0) {
    p.setPen(QPen(highlightColor(), 2));
    p.setBrush(Qt::NoBrush);
    for (const tmon::BlockedInterval &b : model_->blockedOn(highlight_, v)) {
      if (b.thread < first || b.thread > last) continue;
      const int top = d.top() + b.thread * rh - scroll;
      const int x0 = int(xOf(b.start));
      const int x1 = std::max(x0 + 2, int(xOf(b.end)));
      p.drawRect(QRect(x0, top, x1 - x0, rh - 1));
    }
  }
  p.setClipRect(QRect(d.left(), 0, d.width(), viewport()->height()));
  // The selected window when it is a dragged range, and the drag in progress.
  const QColor sel(0x33, 0x66, 0xcc, 50);
  if (window_->mode() == ViewWindow::Mode::Range && !following_) {
    const tmon::TimeRange r = window_->range();
    p.fillRect(QRectF(xOf(r.t0), 0, xOf(r.t1) - xOf(r.t0), viewport()->height()), sel);
  }
  if (drag_ == Drag::Select)
    p.fillRect(QRect(std::min(dragStartX_, dragNowX_), 0, std::abs(dragNowX_ - dragStartX_),
                     viewport()->height()),
               sel);
  // "Now": the newest data live, the playhead in a replay.
  const double nowX = xOf(window_->now());
  if (nowX >= d.left() && nowX <= d.right()) {
    p.setPen(QPen(QColor(0xcc, 0x00, 0x00), 1, Qt::DashLine));
    p.drawLine(QPointF(nowX, 0), QPointF(nowX, viewport()->height()));
  }
  if (cursorX_ >= d.left()) {
    p.setPen(QPen(palette().color(QPalette::Text), 1, Qt::DotLine));
    p.drawLine(cursorX_, axisHeight(), cursorX_, viewport()->height());
  }
  if (n == 0) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(d, Qt::AlignCenter, tr("No threads yet"));
  }
}

QString TimelineCanvas::tooltipAt(const QPoint &pos) const {
  const int row = rowAt(pos.y());
  if (row < 0 || pos.x() < dataRect().left()) return QString();
  const tmon::ThreadInfo &t = model_->thread(row);
  const int64_t at = timeAt(pos.x());
  tmon::StateInterval iv;
  QString text = QStringLiteral("<b>%1 %2</b>").arg(t.tid).arg(t.name.toHtmlEscaped());
  if (!model_->stateAt(row, at, &iv)) return text + tr("<br>not alive or no data here");
  text += QStringLiteral("<br><span style='color:%1'>■</span> %2")
              .arg(stateColor(iv.state).name(), stateLabel(iv.state));
  if (iv.object != 0) {
    const int oi = model_->indexOfSyncObject(iv.object);
    if (oi >= 0) {
      const tmon::SyncObjectInfo &o = model_->syncObject(oi);
      text += tr(" on %1 %2").arg(tmon::syncKindName(o.kind),
                                  (o.symbol.isEmpty() ? QStringLiteral("0x%1").arg(o.address, 0, 16)
                                                      : o.symbolText()).toHtmlEscaped());
    } else {
      text += tr(" on object %1").arg(iv.object);
    }
  }
  if (iv.cpu >= 0) text += tr(" (CPU %1)").arg(iv.cpu);
  const double origin = double(model_->startNs());
  text += tr("<br>%1 s to %2 s, %3")
              .arg((double(iv.start) - origin) / 1e9, 0, 'f', 4)
              .arg((double(iv.end) - origin) / 1e9, 0, 'f', 4)
              .arg(formatDuration(iv.end - iv.start));
  return text;
}

bool TimelineCanvas::viewportEvent(QEvent *event) {
  if (event->type() == QEvent::ToolTip) {
    auto *help = static_cast<QHelpEvent *>(event);
    const QString text = tooltipAt(help->pos());
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), text, viewport());
    return true;
  }
  if (event->type() == QEvent::Leave) {
    cursorX_ = -1;
    viewport()->update();
  }
  return QAbstractScrollArea::viewportEvent(event);
}

void TimelineCanvas::mousePressEvent(QMouseEvent *event) {
  const int x = int(event->position().x());
  if (x < dataRect().left()) return;
  const bool pan = event->button() == Qt::MiddleButton ||
                   (event->button() == Qt::LeftButton && (event->modifiers() & Qt::ShiftModifier));
  drag_ = pan ? Drag::Pan : event->button() == Qt::LeftButton ? Drag::Select : Drag::None;
  dragStartX_ = dragNowX_ = x;
  dragStartView_ = visibleRange();
}

void TimelineCanvas::mouseMoveEvent(QMouseEvent *event) {
  const int x = int(event->position().x());
  cursorX_ = x;
  if (drag_ == Drag::Pan) {
    const int64_t dt =
        toNs(double(dragStartX_ - x) * double(dragStartView_.length()) / dataRect().width());
    setVisibleRange({dragStartView_.t0 + dt, dragStartView_.t1 + dt});
  }
  dragNowX_ = std::clamp(x, dataRect().left(), dataRect().right());
  viewport()->update();
}

void TimelineCanvas::mouseReleaseEvent(QMouseEvent *) {
  if (drag_ == Drag::Select && std::abs(dragNowX_ - dragStartX_) >= 3) {
    const int64_t a = timeAt(std::min(dragStartX_, dragNowX_));
    const int64_t b = timeAt(std::max(dragStartX_, dragNowX_));
    // Keep the current zoom: the selection is drawn shaded on top of it.
    const tmon::TimeRange keep = visibleRange();
    drag_ = Drag::None;
    window_->setRange({a, b});
    setVisibleRange(keep);
  }
  drag_ = Drag::None;
  viewport()->update();
}

void TimelineCanvas::wheelEvent(QWheelEvent *event) {
  if (event->modifiers() & Qt::ControlModifier) {
    const double steps = event->angleDelta().y() / 120.0;
    zoomAround(timeAt(int(event->position().x())), std::pow(0.8, steps));
    event->accept();
    return;
  }
  if (event->modifiers() & Qt::ShiftModifier) {
    panBy(toNs(-event->angleDelta().y() / 120.0 * double(visibleRange().length()) / 10));
    event->accept();
    return;
  }
  QAbstractScrollArea::wheelEvent(event);
}

void TimelineCanvas::keyPressEvent(QKeyEvent *event) {
  const tmon::TimeRange v = visibleRange();
  const int64_t mid = v.t0 + v.length() / 2;
  switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomAround(mid, 0.5); return;
    case Qt::Key_Minus: zoomAround(mid, 2.0); return;
    case Qt::Key_Left: panBy(-v.length() / 8); return;
    case Qt::Key_Right: panBy(v.length() / 8); return;
    case Qt::Key_0: followWindow(); return;
    default: QAbstractScrollArea::keyPressEvent(event);
  }
}

}  // namespace tmui
