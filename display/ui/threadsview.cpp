#include "threadsview.h"

#include <QVBoxLayout>

#include "sessionmodel.h"
#include "stackedbarchart.h"
#include "statepalette.h"
#include "viewwindow.h"

namespace tmui {

ThreadsView::ThreadsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent), chart_(new StackedBarChart(this)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(chart_);
  chart_->setCategories(finalStateCategories());
  chart_->setEmptyText(tr("No threads in this window yet"));
}

int ThreadsView::rowCount() const { return chart_->rowCount(); }

void ThreadsView::rebuild() {
  const tmon::TimeRange r = window()->range();
  const QString described = window()->describe();
  const tmon::SessionModel *m = model();
  auto compute = [m, r] {
    std::vector<BarRow> rows;
    for (int i = 0; i < m->threadCount(); ++i) {
      const tmon::StateTimes st = m->threadStatesAttributed(i, r);
      if (st.lifetimeNs <= 0) continue;
      const tmon::ThreadInfo &t = m->thread(i);
      BarRow row;
      row.label = QStringLiteral("%1  %2").arg(t.tid).arg(t.name);
      row.detail = t.main ? tr("main thread") : t.startRoutine;
      row.marked = t.probe;
      row.markText = tr("threadmon probe");
      row.total = double(st.lifetimeNs);
      row.values = finalStateValues(st);
      rows.push_back(std::move(row));
    }
    return rows;
  };
  auto present = [this, described](std::vector<BarRow> &&rows) {
    chart_->setTitle(tr("Threads: time in each state, %1 (%2 threads)").arg(described).arg(rows.size()));
    chart_->setRows(std::move(rows));
  };
  // Thousands of threads: the model's sums run off the GUI thread.
  rebuildWith<std::vector<BarRow>>(compute, present);
}

}  // namespace tmui
