#include "wholerunpainter.h"

#include <QPainter>
#include <algorithm>

#include "runsummary.h"
#include "statepalette.h"

namespace tmui {

namespace {

constexpr int kAxisPx = 20, kTotalsPx = 24, kLabelPx = 64;
// The thinnest row of one thread whose columns are stacked (stackColumn's
// 4 px and the gap under it); rows of several threads are taller, so that
// their states read as bands rather than stripes.
constexpr int kMinRowPx = 5, kSharedRowPx = 16;

// Stacks st's states in the column x of [y, y + h): each its share of the
// thread's life there, in the states' order (on CPU at the bottom); in a
// row under 4 px, the colour of the state that took most of it (their
// colours mixed by shares gave one grey for every mix).
void stackColumn(QPainter *p, int x, int y, int h, const tmon::StateTimes &st) {
  if (st.lifetimeNs <= 0) return;
  if (h < 4) {  // too thin to stack: the state that took most of the span
    const auto top = std::max_element(st.ns.begin(), st.ns.end());
    p->fillRect(x, y, 1, h, stateColor(tmon::FinalState(top - st.ns.begin())));
    return;
  }
  int64_t below = 0;
  for (int s = 0; s < tmon::kFinalStateCount; s++) {
    const int64_t ns = st.ns[size_t(s)];
    if (ns <= 0) continue;
    const int y0 = y + h - int(h * (below + ns) / st.lifetimeNs);
    const int y1 = y + h - int(h * below / st.lifetimeNs);
    below += ns;
    if (y1 > y0) p->fillRect(x, y0, 1, y1 - y0, stateColor(tmon::FinalState(s)));
  }
}

// What both painters need: the rows, and the run across the plot. Threads
// too many for a row each of kMinRowPx share rows, in tid order, each
// column stacked by their summed states: a row of one thread under 4 px
// shows only the state that took most of each column, and 100 workers
// asleep 72% of the time drew as all asleep.
struct Rows {
  Rows(const QRect &area, const tmon::RunSummary &sum, tmon::TimeRange r)
      : tids(sum.tids()), plot(wholeRunPlot(area)) {
    run = r.t1 > r.t0 ? r : tmon::TimeRange{sum.startNs(), sum.endNs()};
    const int n = int(tids.size());
    if (n == 0 || plot.height() <= 0) return;
    if (n > plot.height() / kMinRowPx) {
      const int fit = std::max(1, plot.height() / kSharedRowPx);
      perRow = (n + fit - 1) / fit;
    }
    rowCount = (n + perRow - 1) / perRow;
    rowPx = std::max(1, plot.height() / rowCount);
  }
  bool empty() const {
    return tids.empty() || run.length() <= 0 || plot.width() <= 0 || plot.height() <= 0;
  }
  tmon::TimeRange column(int c) const {
    return tmon::TimeRange{run.t0 + run.length() * c / plot.width(),
                           run.t0 + run.length() * (c + 1) / plot.width()};
  }
  // Rows that fit (in a plot under kMinRowPx high, not all of them).
  size_t shown() const {
    return rowPx ? std::min(size_t(rowCount), size_t(plot.height() / rowPx)) : 0;
  }
  // Columns [c0, c1] of every row shown.
  void paintColumns(QPainter *p, const tmon::RunSummary &sum, int c0, int c1) const {
    p->fillRect(plot.left() + c0, plot.top(), c1 - c0 + 1, int(shown()) * rowPx, Qt::white);
    // A thread's rows apart; rows of several threads are one band.
    const int gap = perRow == 1 && rowPx > 3 ? 1 : 0;
    for (size_t i = 0; i < shown(); i++) {
      const int y = plot.top() + int(i) * rowPx;
      const size_t first = i * size_t(perRow), end = std::min(tids.size(), first + size_t(perRow));
      for (int c = c0; c <= c1; c++) {
        tmon::StateTimes st;
        for (size_t k = first; k < end; k++) {
          const tmon::StateTimes one = sum.states(tids[k], column(c));
          for (size_t s = 0; s < st.ns.size(); s++) st.ns[s] += one.ns[s];
          st.lifetimeNs += one.lifetimeNs;
        }
        stackColumn(p, plot.left() + c, y, rowPx - gap, st);
      }
    }
  }
  // Each row's tid when they are tall enough, else how many threads.
  void paintLabels(QPainter *p, const QRect &area) const {
    p->setPen(Qt::black);
    if (rowPx >= 10 && perRow == 1)
      for (size_t i = 0; i < shown(); i++)
        p->drawText(area.left() + 2, plot.top() + int(i + 1) * rowPx - 1, QString::number(tids[i]));
    else if (perRow == 1)
      p->drawText(area.left() + 2, plot.top() + 12, QStringLiteral("%1 threads").arg(tids.size()));
    else
      p->drawText(QRect(area.left() + 2, plot.top(), kLabelPx - 4, 40), Qt::TextWordWrap,
                  QStringLiteral("%1 threads, %2 a row").arg(tids.size()).arg(perRow));
  }
  // The run's totals: every thread's life split by state, as one bar.
  void paintTotals(QPainter *p, const QRect &area, const tmon::RunSummary &sum) const {
    tmon::StateTimes total;
    for (uint32_t tid : tids) {
      const tmon::StateTimes all = sum.states(tid, run);
      for (size_t s = 0; s < all.ns.size(); s++) total.ns[s] += all.ns[s];
      total.lifetimeNs += all.lifetimeNs;
    }
    const QRect bar(plot.left(), plot.bottom() + 6, plot.width(), kTotalsPx - 10);
    p->fillRect(bar, Qt::white);
    // The label's place too: a strip built a chunk at a time paints the
    // totals after each, and the label drawn over itself darkened.
    p->fillRect(QRect(area.left(), plot.bottom() + 1, bar.left() - area.left(),
                      area.bottom() - plot.bottom()),
                Qt::white);
    int x = bar.left();
    for (int s = 0; s < tmon::kFinalStateCount && total.lifetimeNs > 0; s++) {
      const int w = int(int64_t(bar.width()) * total.ns[size_t(s)] / total.lifetimeNs);
      p->fillRect(x, bar.top(), w, bar.height(), stateColor(tmon::FinalState(s)));
      x += w;
    }
    p->setPen(Qt::black);
    p->drawText(area.left() + 2, bar.bottom(), QStringLiteral("totals"));
  }

  std::vector<uint32_t> tids;
  QRect plot;
  tmon::TimeRange run;
  int perRow = 1;    // threads a row
  int rowCount = 0;  // rows they take
  int rowPx = 0;
};

}  // namespace

QRect wholeRunPlot(const QRect &area) {
  return QRect(area.left() + kLabelPx, area.top() + kAxisPx, area.width() - kLabelPx,
               area.height() - kAxisPx - kTotalsPx);
}

std::pair<int, int> wholeRunColumns(const QRect &plot, tmon::TimeRange run, tmon::TimeRange part) {
  const int64_t span = run.length();
  if (span <= 0 || plot.width() <= 0) return {0, -1};
  const auto col = [&](int64_t t) {
    return int(std::clamp<int64_t>((t - run.t0) * plot.width() / span, 0, plot.width() - 1));
  };
  // A column shows [t0 + span * c / w, t0 + span * (c + 1) / w): the one
  // holding part's last nanosecond is the last touched.
  return {col(part.t0), col(std::max(part.t0, part.t1 - 1))};
}

WholeRunLayout paintWholeRun(QPainter *p, const QRect &area, const tmon::RunSummary &sum,
                             tmon::TimeRange run) {
  p->fillRect(area, Qt::white);
  const Rows rows(area, sum, run);
  if (rows.empty()) return {};
  const QRect &plot = rows.plot;
  const int64_t span = rows.run.length();
  // Minutes along the top (a label every tenth of the run, whole minutes).
  p->setPen(Qt::black);
  const int64_t stepMin = std::max<int64_t>(1, span / 60'000'000'000 / 10);
  for (int64_t m = 0; m * 60'000'000'000 <= span; m += stepMin) {
    const int x = plot.left() + int(plot.width() * m * 60'000'000'000 / span);
    p->drawLine(x, plot.top() - 4, x, plot.top());
    p->drawText(x + 2, area.top() + kAxisPx - 6, QStringLiteral("%1 min").arg(m));
  }
  rows.paintColumns(p, sum, 0, plot.width() - 1);
  rows.paintLabels(p, area);
  rows.paintTotals(p, area, sum);
  return {plot};
}

void paintWholeRunPart(QPainter *p, const QRect &area, const tmon::RunSummary &sum,
                       tmon::TimeRange run, tmon::TimeRange part) {
  const Rows rows(area, sum, run);
  if (rows.empty()) return;
  const auto [c0, c1] = wholeRunColumns(rows.plot, rows.run, part);
  if (c1 >= c0) {
    rows.paintColumns(p, sum, c0, c1);
    // A label running into the plot was painted over there: drawn again
    // there only (twice over itself, its antialiased edges would darken).
    p->save();
    p->setClipRect(QRect(rows.plot.left() + c0, rows.plot.top(), c1 - c0 + 1, rows.plot.height()));
    rows.paintLabels(p, area);
    p->restore();
  }
  rows.paintTotals(p, area, sum);
}

}  // namespace tmui
