#include "cpusview.h"

#include <QVBoxLayout>

#include "sessionmodel.h"
#include "stackedbarchart.h"
#include "statepalette.h"
#include "viewwindow.h"

namespace tmui {

CpusView::CpusView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent), chart_(new StackedBarChart(this)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(chart_);
  std::vector<BarCategory> cats;
  for (int c = 0; c < kCpuCategoryCount; ++c)
    cats.push_back({cpuLabel(CpuCategory(c)), cpuColor(CpuCategory(c))});
  chart_->setCategories(cats);
  chart_->setEmptyText(tr("No CPU samples in this window yet"));
}

int CpusView::rowCount() const { return chart_->rowCount(); }

void CpusView::rebuild() {
  const tmon::TimeRange r = window()->range();
  const QString described = window()->describe();
  const tmon::SessionModel *m = model();
  auto compute = [m, r] {
    std::vector<BarRow> rows;
    for (int cpu = 0; cpu < m->cpuCount(); ++cpu) {
      const tmon::CpuDelta d = m->cpuDelta(cpu, r);
      BarRow row;
      row.label = tr("CPU %1").arg(cpu);
      // Same order as CpuCategory.
      row.values = {double(d.user),  double(d.nice),  double(d.system), double(d.irq),
                    double(d.softirq), double(d.steal), double(d.iowait), double(d.idle)};
      const std::vector<tmon::ThreadCpuTime> ran = m->cpuThreads(cpu, r);
      QStringList who;
      int64_t ours = 0;
      for (const tmon::ThreadCpuTime &t : ran) ours += t.ns;
      for (size_t k = 0; k < ran.size() && k < 4; ++k) {
        const tmon::ThreadInfo &t = m->thread(ran[k].thread);
        who << QStringLiteral("%1 %2 %3%")
                   .arg(t.tid)
                   .arg(t.name)
                   .arg(r.length() > 0 ? 100.0 * double(ran[k].ns) / double(r.length()) : 0.0, 0,
                        'f', 0);
      }
      if (ran.size() > 4) who << tr("+%1 more").arg(ran.size() - 4);
      row.detail = tr("this program: %1 %")
                       .arg(r.length() > 0 ? 100.0 * double(ours) / double(r.length()) : 0.0, 0,
                            'f', 0);
      row.note = who.isEmpty() ? tr("none of the program's threads ran here") : who.join(QStringLiteral(", "));
      rows.push_back(std::move(row));
    }
    return rows;
  };
  auto present = [this, described](std::vector<BarRow> &&rows) {
    chart_->setTitle(tr("CPUs: time per category and threads that ran, %1").arg(described));
    chart_->setRows(std::move(rows));
  };
  // Which threads ran on each CPU visits every thread per CPU: off the GUI thread when large.
  rebuildWith<std::vector<BarRow>>(compute, present);
}

}  // namespace tmui
