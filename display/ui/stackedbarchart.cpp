#include "stackedbarchart.h"

#include "statepalette.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>
#include <algorithm>

namespace tmui {

std::vector<BarCategory> finalStateCategories() {
  std::vector<BarCategory> cats;
  for (int s = 0; s < tmon::kFinalStateCount; ++s)
    cats.push_back({stateLabel(tmon::FinalState(s)), stateColor(tmon::FinalState(s))});
  return cats;
}

std::vector<double> finalStateValues(const tmon::StateTimes &st) {
  std::vector<double> v;
  for (int s = 0; s < tmon::kFinalStateCount; ++s) v.push_back(double(st.ns[size_t(s)]));
  return v;
}

namespace {
constexpr int kPad = 6;
constexpr int kSwatch = 11;

double rowTotal(const BarRow &r) {
  if (r.total > 0) return r.total;
  double s = 0;
  for (double v : r.values) s += v;
  return s;
}

// Legend entries flow left to right and wrap; returns the height used.
int layoutLegend(const std::vector<BarCategory> &cats, const QFontMetrics &fm, int width,
                 std::vector<QPoint> *at) {
  int x = kPad, y = 0;
  const int lineH = fm.height() + 4;
  for (const BarCategory &c : cats) {
    const int w = kSwatch + 4 + fm.horizontalAdvance(c.label) + 14;
    if (x + w > width && x > kPad) {
      x = kPad;
      y += lineH;
    }
    if (at) at->push_back(QPoint(x, y));
    x += w;
  }
  return cats.empty() ? 0 : y + lineH;
}
}  // namespace

StackedBarChart::StackedBarChart(QWidget *parent) : QAbstractScrollArea(parent) {
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  viewport()->setBackgroundRole(QPalette::Base);
  viewport()->setAutoFillBackground(true);
  viewport()->setMouseTracking(true);
}

void StackedBarChart::setTitle(const QString &title) {
  title_ = title;
  viewport()->update();
}

void StackedBarChart::setCategories(const std::vector<BarCategory> &cats) {
  cats_ = cats;
  updateScrollRange();
  viewport()->update();
}

void StackedBarChart::setRows(std::vector<BarRow> rows) {
  rows_ = std::move(rows);
  catUsed_.assign(cats_.size(), false);
  for (const BarRow &r : rows_)
    for (size_t c = 0; c < r.values.size() && c < cats_.size(); ++c)
      if (r.values[c] > 0) catUsed_[c] = true;
  measureColumns();
  updateScrollRange();
  viewport()->update();
}

QSize StackedBarChart::sizeHint() const { return QSize(900, 600); }

int StackedBarChart::rowHeight() const { return fontMetrics().height() * 2 + 8; }

int StackedBarChart::headerHeight() const {
  QFont bold = font();
  bold.setBold(true);
  const int titleH = QFontMetrics(bold).height() + kPad;
  return kPad + titleH +
         layoutLegend(cats_, fontMetrics(), viewport()->width(), nullptr) + kPad +
         fontMetrics().height() + 4;
}

int StackedBarChart::labelWidth() const {
  return std::min(std::max(80, rawLabelWidth_) + 2 * kPad, viewport()->width() * 2 / 5);
}

int StackedBarChart::noteWidth() const {
  return rawNoteWidth_ ? std::min(rawNoteWidth_ + 2 * kPad, viewport()->width() / 3) : kPad;
}

void StackedBarChart::measureColumns() {
  // Measuring every row's text is what made thousands of rows slow (twice
  // per painted row): measure the longest few by characters, once per setRows.
  constexpr size_t kMeasured = 48;
  QFont small = font();
  small.setPointSizeF(font().pointSizeF() * 0.85);
  const QFontMetrics fm = fontMetrics(), sfm(small);
  auto widest = [&](auto text, const QFontMetrics &m) {
    std::vector<std::pair<qsizetype, size_t>> len;
    len.reserve(rows_.size());
    for (size_t i = 0; i < rows_.size(); ++i) len.push_back({text(rows_[i]).size(), i});
    const size_t n = std::min(kMeasured, len.size());
    std::partial_sort(len.begin(), len.begin() + qsizetype(n), len.end(),
                      [](const auto &a, const auto &b) { return a.first > b.first; });
    int w = 0;
    for (size_t k = 0; k < n; ++k) w = std::max(w, m.horizontalAdvance(text(rows_[len[k].second])));
    return w;
  };
  rawLabelWidth_ = std::max(
      widest([](const BarRow &r) { return r.label + QStringLiteral("  ") + r.markText; }, fm),
      widest([](const BarRow &r) { return r.detail; }, sfm));
  rawNoteWidth_ = widest([](const BarRow &r) { return r.note; }, fm);
}

QRect StackedBarChart::barRect(int rowTop) const {
  const int left = labelWidth();
  const int right = viewport()->width() - noteWidth();
  return QRect(left, rowTop + 4, std::max(10, right - left), rowHeight() - 8);
}

void StackedBarChart::updateScrollRange() {
  const int visible = viewport()->height() - headerHeight();
  const int total = int(rows_.size()) * rowHeight();
  verticalScrollBar()->setRange(0, std::max(0, total - visible));
  verticalScrollBar()->setPageStep(std::max(1, visible));
  verticalScrollBar()->setSingleStep(rowHeight());
}

void StackedBarChart::resizeEvent(QResizeEvent *event) {
  QAbstractScrollArea::resizeEvent(event);
  updateScrollRange();
}

int StackedBarChart::rowAt(int y) const {
  const int off = y - headerHeight() + verticalScrollBar()->value();
  if (y < headerHeight() || off < 0) return -1;
  const int i = off / rowHeight();
  return i < int(rows_.size()) ? i : -1;
}

void StackedBarChart::mousePressEvent(QMouseEvent *event) {
  const int i = rowAt(event->position().toPoint().y());
  if (i >= 0 && event->button() == Qt::LeftButton) emit rowClicked(i);
  QAbstractScrollArea::mousePressEvent(event);
}

bool StackedBarChart::viewportEvent(QEvent *event) {
  if (event->type() != QEvent::ToolTip) return QAbstractScrollArea::viewportEvent(event);
  auto *help = static_cast<QHelpEvent *>(event);
  const int i = rowAt(help->pos().y());
  if (i < 0) {
    QToolTip::hideText();
    return true;
  }
  const BarRow &r = rows_[size_t(i)];
  const double total = rowTotal(r);
  QString text = QStringLiteral("<b>%1</b>").arg(r.label.toHtmlEscaped());
  if (!r.detail.isEmpty()) text += QStringLiteral("<br><i>%1</i>").arg(r.detail.toHtmlEscaped());
  for (size_t c = 0; c < r.values.size() && c < cats_.size(); ++c)
    if (r.values[c] > 0 && total > 0)
      text += QStringLiteral("<br><span style='color:%1'>■</span> %2: %3 %")
                  .arg(cats_[c].color.name(), cats_[c].label.toHtmlEscaped())
                  .arg(100.0 * r.values[c] / total, 0, 'f', 1);
  if (!r.note.isEmpty()) text += QStringLiteral("<br>%1").arg(r.note.toHtmlEscaped());
  QToolTip::showText(help->globalPos(), text, viewport());
  return true;
}

void StackedBarChart::paintEvent(QPaintEvent *) {
  QPainter p(viewport());
  const QFontMetrics fm = fontMetrics();
  const int width = viewport()->width();
  const QColor text = palette().color(QPalette::Text);
  const QColor faint = palette().color(QPalette::PlaceholderText);

  // Title.
  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.setPen(text);
  int y = kPad;
  p.drawText(QRect(kPad, y, width - 2 * kPad, QFontMetrics(bold).height()), Qt::AlignLeft,
             title_);
  y += QFontMetrics(bold).height() + kPad;
  p.setFont(font());

  // Legend: every category always, in the bars' order, so colours never move;
  // the ones absent from this window are drawn faint.
  std::vector<QPoint> at;
  const int legendH = layoutLegend(cats_, fm, width, &at);
  for (size_t c = 0; c < cats_.size(); ++c) {
    const QPoint o = at[c] + QPoint(0, y);
    const bool used = c < catUsed_.size() && catUsed_[c];
    p.fillRect(QRect(o.x(), o.y() + (fm.height() - kSwatch) / 2, kSwatch, kSwatch),
               used ? cats_[c].color : cats_[c].color.lighter(150));
    p.setPen(used ? text : faint);
    p.drawText(o.x() + kSwatch + 4, o.y() + fm.ascent(), cats_[c].label);
  }
  y += legendH + kPad;

  // Percentage axis over the bar column.
  const QRect axis = barRect(y - 4);
  p.setPen(faint);
  // A narrow bar column labels every other line: "75 %" and "100 %" would
  // overlap (the last label is pushed left to end at the column's edge).
  int labelStep = 25;
  const int labelW = fm.horizontalAdvance(QStringLiteral("100 %"));
  while (labelStep < 100 && axis.width() * labelStep / 100 < labelW * 3 / 2 + 8) labelStep *= 2;
  for (int pct = 0; pct <= 100; pct += labelStep) {
    const int x = axis.left() + axis.width() * pct / 100;
    const QString label = QStringLiteral("%1 %").arg(pct);
    const int w = fm.horizontalAdvance(label);
    const int tx = std::clamp(x - w / 2, axis.left(), axis.right() - w);
    p.drawText(tx, y + fm.ascent(), label);
  }
  const int top = headerHeight();
  p.setClipRect(QRect(0, top, width, viewport()->height() - top));
  for (int pct = 0; pct <= 100; pct += 25) {
    const int x = axis.left() + axis.width() * pct / 100;
    p.drawLine(x, top, x, viewport()->height());
  }

  if (rows_.empty()) {
    p.setPen(faint);
    p.drawText(QRect(0, top, width, viewport()->height() - top), Qt::AlignCenter, emptyText_);
    return;
  }

  QFont small = font();
  small.setPointSizeF(font().pointSizeF() * 0.85);
  const QFontMetrics sfm(small);
  const int rh = rowHeight();
  const int scroll = verticalScrollBar()->value();
  const int first = scroll / rh;
  const int last = std::min(int(rows_.size()) - 1, (scroll + viewport()->height() - top) / rh);
  const int lw = labelWidth();
  const int nw = noteWidth();
  for (int i = first; i <= last; ++i) {
    const BarRow &r = rows_[size_t(i)];
    const int rowTop = top + i * rh - scroll;
    if (i % 2) p.fillRect(QRect(0, rowTop, width, rh), palette().color(QPalette::AlternateBase));
    // Label column.
    p.setPen(text);
    const int lx = kPad + r.indent * fm.horizontalAdvance(QStringLiteral("MM"));
    const QString label = fm.elidedText(r.label, Qt::ElideRight, lw - kPad - lx);
    p.drawText(lx, rowTop + 3 + fm.ascent(), label);
    bool badgeShown = false;
    if (r.marked) {
      const int mx = lx + fm.horizontalAdvance(label) + 6;
      const QRect badge(mx, rowTop + 3, fm.horizontalAdvance(r.markText) + 8, fm.height());
      badgeShown = badge.right() < lw;
      if (badgeShown) {
        p.fillRect(badge, QColor(0x55, 0x55, 0x55));
        p.setPen(Qt::white);
        p.drawText(badge, Qt::AlignCenter, r.markText);
      }
    }
    p.setFont(small);
    p.setPen(faint);
    // No room for the badge: the mark leads the second line instead.
    const QString detail = r.marked && !badgeShown
                               ? QStringLiteral("[%1] %2").arg(r.markText, r.detail)
                               : r.detail;
    p.drawText(lx, rowTop + 3 + fm.height() + sfm.ascent(),
               sfm.elidedText(detail, Qt::ElideMiddle, lw - kPad - lx));
    p.setFont(font());
    // The bar.
    const QRect bar = barRect(rowTop);
    const double total = rowTotal(r);
    p.fillRect(bar, palette().color(QPalette::Window));
    if (total > 0) {
      double acc = 0;
      for (size_t c = 0; c < r.values.size() && c < cats_.size(); ++c) {
        if (r.values[c] <= 0) continue;
        const int x0 = bar.left() + int(bar.width() * acc / total + 0.5);
        acc += r.values[c];
        const int x1 = bar.left() + int(bar.width() * std::min(acc, total) / total + 0.5);
        if (x1 <= x0) continue;
        const QRect seg(x0, bar.top(), x1 - x0, bar.height());
        p.fillRect(seg, cats_[c].color);
        const QString pct = QStringLiteral("%1%").arg(int(100.0 * r.values[c] / total + 0.5));
        if (seg.width() > fm.horizontalAdvance(pct) + 6) {
          p.setPen(cats_[c].color.lightnessF() > 0.55 ? Qt::black : Qt::white);
          p.drawText(seg, Qt::AlignCenter, pct);
        }
      }
    } else {
      p.setPen(faint);
      p.drawText(bar, Qt::AlignCenter, tr("no data in this window"));
    }
    p.setPen(palette().color(QPalette::Mid));
    p.drawRect(bar.adjusted(0, 0, -1, -1));
    // Note column.
    if (!r.note.isEmpty()) {
      p.setPen(text);
      p.drawText(QRect(bar.right() + kPad, rowTop, nw - kPad, rh),
                 Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap, r.note);
    }
  }
}

}  // namespace tmui
