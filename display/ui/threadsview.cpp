#include "threadsview.h"

#include "pools.h"
#include "sessionmodel.h"
#include "statepalette.h"

namespace tmui {

namespace {
// The pools' own items (tmon::threadPoolItems), as the timeline pools them.
std::vector<ItemBar> threadBars(const tmon::SessionModel &m, const tmon::TimeRange &r) {
  std::vector<ItemBar> bars;
  for (tmon::PoolItem &it : tmon::threadPoolItems(m, r)) {
    const tmon::ThreadInfo &t = m.thread(it.index);
    ItemBar b;
    b.row.label = QStringLiteral("%1  %2").arg(t.tid).arg(t.name);
    b.row.detail = t.main ? ThreadsView::tr("main thread") : t.startRoutine;
    b.row.marked = t.probe;
    b.row.markText = ThreadsView::tr("threadmon probe");
    b.row.total = it.total;
    b.row.values = it.values;
    b.item = std::move(it);
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
