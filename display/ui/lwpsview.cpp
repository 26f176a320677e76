#include "lwpsview.h"

#include <QVBoxLayout>

#include "sessionmodel.h"
#include "stackedbarchart.h"
#include "statepalette.h"
#include "viewwindow.h"

namespace tmui {

LwpsView::LwpsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent), chart_(new StackedBarChart(this)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(chart_);
  std::vector<BarCategory> cats;
  for (int c = 0; c < kLwpCategoryCount; ++c)
    cats.push_back({lwpLabel(LwpCategory(c)), lwpColor(LwpCategory(c))});
  chart_->setCategories(cats);
  chart_->setEmptyText(tr("No kernel samples in this window yet"));
}

int LwpsView::rowCount() const { return chart_->rowCount(); }

void LwpsView::rebuild() {
  const tmon::TimeRange r = window()->range();
  const QString described = window()->describe();
  const tmon::SessionModel *m = model();
  auto compute = [m, r] {
    std::vector<BarRow> rows;
    for (int i = 0; i < m->threadCount(); ++i) {
      const tmon::StateTimes st = m->threadStates(i, r);
      if (st.lifetimeNs <= 0) continue;
      const tmon::ThreadInfo &t = m->thread(i);
      const tmon::LwpDelta d = m->lwpDelta(i, r);
      BarRow row;
      row.label = QStringLiteral("LWP %1  %2").arg(t.tid).arg(t.name);
      row.detail = tr("%1 voluntary, %2 involuntary switches").arg(d.volCtxsw).arg(d.involCtxsw);
      row.marked = t.probe;
      row.markText = tr("probe");
      row.values = {double(d.userNs), double(d.systemNs), double(d.runqueueNs),
                    double(std::max<int64_t>(0, d.sleepNs))};
      row.note = tr("faults %1 minor, %2 major").arg(d.minflt).arg(d.majflt);
      rows.push_back(std::move(row));
    }
    return rows;
  };
  auto present = [this, described](std::vector<BarRow> &&rows) {
    chart_->setTitle(tr("LWPs: kernel microstates, %1 (%2 LWPs)").arg(described).arg(rows.size()));
    chart_->setRows(std::move(rows));
  };
  // Thousands of threads: the model's sums run off the GUI thread.
  rebuildWith<std::vector<BarRow>>(compute, present);
}

}  // namespace tmui
