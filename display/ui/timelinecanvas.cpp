#include "timelinecanvas.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QLocale>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <array>
#include <cmath>

#include "sessionmodel.h"
#include "statepalette.h"
#include "viewwindow.h"

namespace tmui {

namespace {
constexpr int kStates = tmon::kFinalStateCount;
constexpr int64_t kMinSpanNs = 10000;  // 10 us: deeper zoom shows nothing new
// An aggregate's row is this many thread rows high (more, up to the max,
// when the screen has room): tall enough for its label's two lines and for
// a share of a few percent to show.
constexpr int kAggregateRows = 3;
constexpr int kAggregateRowsMax = 5;
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
  // Always there: a scroll bar that came and went with an unfolded pool
  // would change the strips' width, and so every pool's mix.
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
  viewport()->setMouseTracking(true);
  viewport()->setBackgroundRole(QPalette::Base);
  viewport()->setAutoFillBackground(true);
  setFocusPolicy(Qt::StrongFocus);
}

void TimelineCanvas::setHighlightedObject(uint32_t objectId) {
  highlight_ = objectId;
  viewport()->update();
}

tmon::TimeRange TimelineCanvas::followed(const tmon::TimeRange &window) { return sane(window); }

tmon::TimeRange TimelineCanvas::visibleRange() const {
  return following_ ? sane(window_->range()) : view_;
}

void TimelineCanvas::setVisibleRange(const tmon::TimeRange &r) {
  view_ = sane(r);
  following_ = false;
  viewport()->update();
  emit spanChanged();
}

void TimelineCanvas::followWindow() {
  following_ = true;
  viewport()->update();
  emit spanChanged();
}

void TimelineCanvas::setLayout(TimelineLayout layout) {
  layout_ = std::move(layout);
  refresh();
}

void TimelineCanvas::setMixes(std::shared_ptr<const Mixes> mixes) {
  mixes_ = std::move(mixes);
  viewport()->update();
}

void TimelineCanvas::layOutRows() {
  const int units = std::max(1, layout_.fitThreads + kAggregateRows * layout_.fitAggregates);
  const int free = viewport()->height() - axisHeight();
  const int h = std::clamp(free / units, 14, 24);
  // Aggregates share what the rows leave free, up to kAggregateRowsMax.
  const int hAggregate =
      layout_.fitAggregates == 0
          ? kAggregateRows * h
          : std::clamp((free - h * layout_.fitThreads) / layout_.fitAggregates,
                       kAggregateRows * h, kAggregateRowsMax * h);
  rowTops_.assign(1, 0);
  for (const TimelineRow &r : layout_.rows)
    rowTops_.push_back(rowTops_.back() + (r.aggregate() ? hAggregate : h));
}

int TimelineCanvas::rowTop(int row) const {
  return axisHeight() + rowTops_[size_t(row)] - verticalScrollBar()->value();
}

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
  if (y < axisHeight() || rowTops_.size() < 2) return -1;
  const int at = y - axisHeight() + verticalScrollBar()->value();
  const auto it = std::upper_bound(rowTops_.begin(), rowTops_.end(), at);
  const int i = int(it - rowTops_.begin()) - 1;
  return i >= 0 && i < rowCount() ? i : -1;
}

void TimelineCanvas::updateScrollRange() {
  layOutRows();
  const int visible = viewport()->height() - axisHeight();
  verticalScrollBar()->setRange(0, std::max(0, rowTops_.back() - visible));
  verticalScrollBar()->setPageStep(std::max(1, visible));
  verticalScrollBar()->setSingleStep(rowTops_.size() > 1 ? rowTops_[1] : 14);
}

void TimelineCanvas::resizeEvent(QResizeEvent *event) {
  QAbstractScrollArea::resizeEvent(event);
  updateScrollRange();
  if (stripWidth() != lastWidth_) {
    lastWidth_ = stripWidth();
    emit spanChanged();
  }
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
             layout_.pools ? tr("%1 threads, %2 %3")
                                 .arg(QLocale().toString(layout_.shown))
                                 .arg(layout_.pools)
                                 .arg(layout_.pools == 1 ? tr("pool") : tr("pools"))
                           : tr("%1 threads").arg(layout_.shown));
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

// Sums how much of each pixel column every state covers (StateMix), then
// paints runs of columns whose dominant state is the same as one rectangle.
void TimelineCanvas::paintThread(QPainter &p, int index, int top, int h,
                                 const tmon::TimeRange &v) {
  const QRect d = dataRect();
  const int w = d.width();
  tmon::StateMix mix(v, w);
  mix.add(model_->intervals(index, v));
  int runStart = 0, runState = -1;
  auto flush = [&](int end) {
    if (runState >= 0 && end > runStart)
      p.fillRect(QRect(d.left() + runStart, top + 1, end - runStart, h - 3),
                 stateColor(tmon::FinalState(runState)));
  };
  for (int c = 0; c < w; ++c) {
    const float *col = mix.column(c);
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

// Each column of the mix split top to bottom by the share of the threads in
// each state, in the palette's order; the part no thread was alive for left
// empty. Columns of equal splits are painted as one rectangle per state. A
// mix made for another span (a zoom before its new mix arrives) is drawn
// where its times fall.
void TimelineCanvas::paintMix(QPainter &p, const tmon::StateMix &mix, int top, int h,
                              const tmon::TimeRange &v) {
  if (mix.columns <= 0 || mix.threads <= 0) return;
  const QRect d = dataRect();
  const int inner = h - 3;
  const double nsPerCol = double(mix.range.length()) / mix.columns;
  using Cuts = std::array<int, kStates + 1>;  // y offsets: state s spans cuts[s]..cuts[s+1]
  Cuts run{}, cuts{};
  int runX0 = 0, runX1 = 0;
  bool open = false;
  auto flush = [&] {
    if (!open) return;
    for (int s = 0; s < kStates; ++s)
      if (run[size_t(s) + 1] > run[size_t(s)])
        p.fillRect(QRect(runX0, top + 1 + run[size_t(s)], runX1 - runX0,
                         run[size_t(s) + 1] - run[size_t(s)]),
                   stateColor(tmon::FinalState(s)));
    open = false;
  };
  // Folded states (full rings), hatched over the top of the column by the
  // share of the pool's threads whose order there is not what happened.
  // Drawn after the states, which are filled a run behind.
  std::vector<QRect> bands;
  int band = 0, bandX0 = 0, bandX1 = 0;
  auto flushBand = [&] {
    if (band > 0) bands.emplace_back(bandX0, top + 1, bandX1 - bandX0, band);
    band = 0;
  };
  const int first = std::max(0, int((double(v.t0) - double(mix.range.t0)) / nsPerCol) - 1);
  for (int c = first; c < mix.columns; ++c) {
    const double t0 = double(mix.range.t0) + c * nsPerCol;
    if (t0 > double(v.t1)) break;
    const int x0 = std::max(d.left(), int(std::lround(xOf(int64_t(t0)))));
    const int x1 = std::min(d.right() + 1, int(std::lround(xOf(int64_t(t0 + nsPerCol)))));
    if (x1 <= x0) continue;
    const float share = std::min(1.f, mix.folded[size_t(c)] / float(mix.threads));
    const int b = share > 0 ? std::max(2, int(std::lround(share * inner))) : 0;
    if (b != band || x0 > bandX1) {
      flushBand();
      band = b;
      bandX0 = x0;
    }
    bandX1 = x1;
    const float *col = mix.column(c);
    double sum = 0;
    cuts[0] = 0;
    for (int s = 0; s < kStates; ++s) {
      sum += col[s];
      cuts[size_t(s) + 1] = int(std::lround(std::min(1.0, sum / mix.threads) * inner));
    }
    if (open && cuts == run && x0 <= runX1) {
      runX1 = x1;
      continue;
    }
    flush();
    run = cuts;
    runX0 = x0;
    runX1 = x1;
    open = true;
  }
  flush();
  flushBand();
  for (const QRect &r : bands) p.fillRect(r, QBrush(gapColor(), Qt::BDiagPattern));
}

void TimelineCanvas::paintLabel(QPainter &p, const TimelineRow &row, const QRect &r) {
  const QFontMetrics fm = fontMetrics();
  const int x = 6 + 12 * row.indent;
  const int w = r.width() - x - 4;
  if (!row.aggregate()) {
    const tmon::ThreadInfo &t = model_->thread(row.thread);
    QFont f = font();
    f.setItalic(t.probe);
    p.setFont(f);
    p.setPen(palette().color(t.probe ? QPalette::PlaceholderText : QPalette::Text));
    QString label = t.probe ? tr("%1 %2 (probe)").arg(t.tid).arg(t.name)
                            : QStringLiteral("%1 %2").arg(t.tid).arg(t.name);
    if (row.outlier) label += tr(" (outlier)");
    p.drawText(QRect(r.left() + x, r.top(), w, r.height()), Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(label, Qt::ElideRight, w));
    p.setFont(font());
    return;
  }
  // "▸ worker-#" on the first line, "1,500 threads · worker_main" under it.
  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(palette().color(QPalette::Text));
  const QString head = (row.open ? QStringLiteral("▾ ") : QStringLiteral("▸ ")) + row.label;
  const int line = fm.height();
  const int y = r.top() + std::max(0, (r.height() - 2 * line) / 2);
  p.drawText(QRect(r.left() + x, y, w, line), Qt::AlignLeft | Qt::AlignVCenter,
             QFontMetrics(bold).elidedText(head, Qt::ElideRight, w));
  p.setFont(font());
  p.setPen(palette().color(QPalette::PlaceholderText));
  p.drawText(QRect(r.left() + x + 12, y + line, w - 12, line), Qt::AlignLeft | Qt::AlignVCenter,
             fm.elidedText(row.detail, Qt::ElideRight, w - 12));
}

void TimelineCanvas::paintEvent(QPaintEvent *) {
  QPainter p(viewport());
  const tmon::TimeRange v = visibleRange();
  const QRect d = dataRect();
  paintAxis(p, v);
  const int n = rowCount();
  const int first = std::max(0, rowAt(d.top()));
  const int last = n == 0 ? -1 : rowAt(d.bottom()) < 0 ? n - 1 : rowAt(d.bottom());
  p.setClipRect(QRect(0, d.top(), viewport()->width(), d.height()));
  for (int i = first; i <= last; ++i) {
    const TimelineRow &row = layout_.rows[size_t(i)];
    const int top = rowTop(i), h = rowTop(i + 1) - top;
    if (i % 2)
      p.fillRect(QRect(0, top, viewport()->width(), h), palette().color(QPalette::AlternateBase));
    paintLabel(p, row, QRect(0, top, labelWidth(), h));
    if (row.aggregate()) {
      if (mixes_) {
        const auto mix = mixes_->constFind(row.key);
        if (mix != mixes_->constEnd()) paintMix(p, *mix, top, h, v);
      }
      continue;
    }
    if (row.thread < 0 || row.thread >= model_->threadCount()) continue;
    paintThread(p, row.thread, top, h, v);
    // Gaps whose states are folded totals (the ring was full): hatched, so
    // the order drawn inside is not read as what happened.
    for (const tmon::TimeRange &g : model_->eventGapSpans(row.thread, v)) {
      const int x0 = int(xOf(std::max(g.t0, v.t0)));
      const int x1 = std::max(x0 + 2, int(xOf(std::min(g.t1, v.t1))));
      p.fillRect(QRect(x0, top + 1, x1 - x0, h - 3), QBrush(gapColor(), Qt::BDiagPattern));
    }
  }
  // Intervals blocked on the selected object, outlined over the strips (a
  // folded thread's on its pool's row).
  if (highlight_ != 0) {
    p.setPen(QPen(highlightColor(), 2));
    p.setBrush(Qt::NoBrush);
    for (const tmon::BlockedInterval &b : model_->blockedOn(highlight_, v)) {
      if (b.thread < 0 || size_t(b.thread) >= layout_.rowOfThread.size()) continue;
      const int row = layout_.rowOfThread[size_t(b.thread)];
      if (row < first || row > last) continue;
      const int top = rowTop(row);
      const int x0 = int(xOf(b.start));
      const int x1 = std::max(x0 + 2, int(xOf(b.end)));
      p.drawRect(QRect(x0, top, x1 - x0, rowTop(row + 1) - top - 1));
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
    p.drawText(d, Qt::AlignCenter, model_->threadCount() ? tr("No threads in this window")
                                                          : tr("No threads yet"));
  }
}

QString TimelineCanvas::tooltipText(const QPoint &pos) const {
  const int row = rowAt(pos.y());
  if (row < 0) return QString();
  const TimelineRow &r = layout_.rows[size_t(row)];
  if (pos.x() < dataRect().left())
    return r.aggregate() ? (r.open ? tr("Click to fold these threads into one row")
                                   : tr("Click to list these threads one per row"))
                         : QString();
  const int64_t at = timeAt(pos.x());
  if (r.aggregate()) return aggregateTooltip(r, at);
  if (r.thread < 0 || r.thread >= model_->threadCount()) return QString();
  return threadTooltip(r.thread, at);
}

// How many of the aggregate's threads were in each state at that instant.
QString TimelineCanvas::aggregateTooltip(const TimelineRow &row, int64_t at) const {
  const tmon::StateCounts n = tmon::statesAt(*model_, row.threads, at);
  const QLocale locale;
  QString text = QStringLiteral("<b>%1</b> · %2<br>")
                     .arg(row.label.toHtmlEscaped(), row.detail.toHtmlEscaped());
  const QString when = QString::number((double(at) - double(model_->startNs())) / 1e9, 'f', 4);
  const QString count = locale.toString(qlonglong(row.threads.size()));
  text += row.outliers ? tr("%1 threads (its outliers aside) at %2 s:").arg(count, when)
                       : tr("%1 threads at %2 s:").arg(count, when);
  for (int s = 0; s < kStates; ++s)
    if (n[size_t(s)] > 0)
      text += QStringLiteral("<br><span style='color:%1'>■</span> %2 %3")
                  .arg(stateColor(tmon::FinalState(s)).name(), locale.toString(n[size_t(s)]),
                       stateLabel(tmon::FinalState(s)).toHtmlEscaped());
  if (n[kStates] > 0) text += tr("<br>%1 not alive or no data").arg(locale.toString(n[kStates]));
  return text;
}

QString TimelineCanvas::threadTooltip(int index, int64_t at) const {
  const tmon::ThreadInfo &t = model_->thread(index);
  tmon::StateInterval iv;
  QString text = QStringLiteral("<b>%1 %2</b>").arg(t.tid).arg(t.name.toHtmlEscaped());
  if (!model_->stateAt(index, at, &iv)) return text + tr("<br>not alive or no data here");
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
    const QString text = tooltipText(help->pos());
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
  if (x < dataRect().left()) {
    const int row = rowAt(int(event->position().y()));
    if (event->button() == Qt::LeftButton && row >= 0 && layout_.rows[size_t(row)].aggregate())
      emit aggregateClicked(layout_.rows[size_t(row)].key);
    return;
  }
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
