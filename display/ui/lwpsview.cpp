#include "lwpsview.h"

#include "sessionmodel.h"
#include "statepalette.h"

namespace tmui {

namespace {
std::vector<BarCategory> lwpCategories() {
  std::vector<BarCategory> cats;
  for (int c = 0; c < kLwpCategoryCount; ++c)
    cats.push_back({lwpLabel(LwpCategory(c)), lwpColor(LwpCategory(c))});
  return cats;
}

std::vector<ItemBar> lwpBars(const tmon::SessionModel &m, const tmon::TimeRange &r) {
  std::vector<ItemBar> bars;
  for (int i = 0; i < m.threadCount(); ++i) {
    const tmon::StateTimes st = m.threadStates(i, r);
    if (st.lifetimeNs <= 0) continue;
    const tmon::ThreadInfo &t = m.thread(i);
    const tmon::LwpDelta d = m.lwpDelta(i, r);
    ItemBar b;
    b.row.label = QStringLiteral("LWP %1  %2").arg(t.tid).arg(t.name);
    b.row.detail = LwpsView::tr("%1 voluntary, %2 involuntary switches").arg(d.volCtxsw).arg(d.involCtxsw);
    b.row.marked = t.probe;
    b.row.markText = LwpsView::tr("probe");
    b.row.values = {double(d.userNs), double(d.systemNs), double(d.runqueueNs),
                    double(std::max<int64_t>(0, d.sleepNs))};
    b.row.note = LwpsView::tr("faults %1 minor, %2 major").arg(d.minflt).arg(d.majflt);
    b.item = poolItem(t, i, b.row);
    bars.push_back(std::move(b));
  }
  return bars;
}
}  // namespace

LwpsView::LwpsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : BarChartView(model, window,
                   {lwpCategories(), tr("LWPs: kernel microstates"), tr("LWPs"),
                    tr("No kernel samples in this window yet"), true, lwpBars},
                   parent) {}

}  // namespace tmui
