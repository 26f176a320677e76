#include "wholerunpainter.h"

#include <QPainter>
#include <algorithm>

#include "runsummary.h"
#include "statepalette.h"

namespace tmui {

namespace {

constexpr int kAxisPx = 20, kTotalsPx = 24, kLabelPx = 64;

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

}  // namespace

QRect wholeRunPlot(const QRect &area) {
  return QRect(area.left() + kLabelPx, area.top() + kAxisPx, area.width() - kLabelPx,
               area.height() - kAxisPx - kTotalsPx);
}

WholeRunLayout paintWholeRun(QPainter *p, const QRect &area, const tmon::RunSummary &sum) {
  p->fillRect(area, Qt::white);
  const std::vector<uint32_t> tids = sum.tids();
  const int64_t span = sum.endNs() - sum.startNs();
  const QRect plot = wholeRunPlot(area);
  if (tids.empty() || span <= 0 || plot.width() <= 0 || plot.height() <= 0) return {};
  const auto columnRange = [&](int c) {
    return tmon::TimeRange{sum.startNs() + span * c / plot.width(),
                           sum.startNs() + span * (c + 1) / plot.width()};
  };
  // Minutes along the top (a label every tenth of the run, whole minutes).
  p->setPen(Qt::black);
  const int64_t stepMin = std::max<int64_t>(1, span / 60'000'000'000 / 10);
  for (int64_t m = 0; m * 60'000'000'000 <= span; m += stepMin) {
    const int x = plot.left() + int(plot.width() * m * 60'000'000'000 / span);
    p->drawLine(x, plot.top() - 4, x, plot.top());
    p->drawText(x + 2, area.top() + kAxisPx - 6, QStringLiteral("%1 min").arg(m));
  }
  const int rowPx = std::max(1, plot.height() / int(tids.size()));
  tmon::StateTimes total;
  for (size_t i = 0; i < tids.size(); i++) {
    const int y = plot.top() + int(i) * rowPx;
    if (y + rowPx > plot.bottom() + 1) break;
    for (int c = 0; c < plot.width(); c++)
      stackColumn(p, plot.left() + c, y, std::max(1, rowPx - (rowPx > 3 ? 1 : 0)),
                  sum.states(tids[i], columnRange(c)));
    if (rowPx >= 10) p->drawText(area.left() + 2, y + rowPx - 1, QString::number(tids[i]));
    const tmon::StateTimes all = sum.states(tids[i], tmon::TimeRange{sum.startNs(), sum.endNs()});
    for (size_t s = 0; s < all.ns.size(); s++) total.ns[s] += all.ns[s];
    total.lifetimeNs += all.lifetimeNs;
  }
  if (rowPx < 10)
    p->drawText(area.left() + 2, plot.top() + 12, QStringLiteral("%1 threads").arg(tids.size()));
  // The run's totals: every thread's life split by state, as one bar.
  const QRect bar(plot.left(), plot.bottom() + 6, plot.width(), kTotalsPx - 10);
  int x = bar.left();
  for (int s = 0; s < tmon::kFinalStateCount && total.lifetimeNs > 0; s++) {
    const int w = int(int64_t(bar.width()) * total.ns[size_t(s)] / total.lifetimeNs);
    p->fillRect(x, bar.top(), w, bar.height(), stateColor(tmon::FinalState(s)));
    x += w;
  }
  p->drawText(area.left() + 2, bar.bottom(), QStringLiteral("totals"));
  return {plot};
}

}  // namespace tmui
