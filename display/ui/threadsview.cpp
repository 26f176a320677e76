#include "threadsview.h"

#include "sessionmodel.h"
#include "statepalette.h"

namespace tmui {

namespace {
std::vector<ItemBar> threadBars(const tmon::SessionModel &m, const tmon::TimeRange &r) {
  std::vector<ItemBar> bars;
  for (int i = 0; i < m.threadCount(); ++i) {
    const tmon::StateTimes st = m.threadStatesAttributed(i, r);
    if (st.lifetimeNs <= 0) continue;
    const tmon::ThreadInfo &t = m.thread(i);
    ItemBar b;
    b.row.label = QStringLiteral("%1  %2").arg(t.tid).arg(t.name);
    b.row.detail = t.main ? ThreadsView::tr("main thread") : t.startRoutine;
    b.row.marked = t.probe;
    b.row.markText = ThreadsView::tr("threadmon probe");
    b.row.total = double(st.lifetimeNs);
    b.row.values = finalStateValues(st);
    b.item = poolItem(t, i, b.row);
    bars.push_back(std::move(b));
  }
  return bars;
}
}  // namespace

ThreadsView::ThreadsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : BarChartView(model, window,
                   {finalStateCategories(), tr("Threads: time in each state"), tr("threads"),
                    tr("No threads in this window yet"), true, threadBars},
                   parent) {}

}  // namespace tmui
