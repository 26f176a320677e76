#include "cpusview.h"

#include <QStringList>

#include "sessionmodel.h"
#include "statepalette.h"

namespace tmui {

namespace {
std::vector<BarCategory> cpuCategories() {
  std::vector<BarCategory> cats;
  for (int c = 0; c < kCpuCategoryCount; ++c)
    cats.push_back({cpuLabel(CpuCategory(c)), cpuColor(CpuCategory(c))});
  return cats;
}

// Which threads ran on each CPU visits every thread per CPU: off the GUI
// thread when large.
std::vector<ItemBar> cpuBars(const tmon::SessionModel &m, const tmon::TimeRange &r) {
  std::vector<ItemBar> bars;
  for (int cpu = 0; cpu < m.cpuCount(); ++cpu) {
    const tmon::CpuDelta d = m.cpuDelta(cpu, r);
    ItemBar b;
    BarRow &row = b.row;
    row.label = CpusView::tr("CPU %1").arg(cpu);
    // Same order as CpuCategory.
    row.values = {double(d.user),  double(d.nice),  double(d.system), double(d.irq),
                  double(d.softirq), double(d.steal), double(d.iowait), double(d.idle)};
    const std::vector<tmon::ThreadCpuTime> ran = m.cpuThreads(cpu, r);
    QStringList who;
    int64_t ours = 0;
    for (const tmon::ThreadCpuTime &t : ran) ours += t.ns;
    for (size_t k = 0; k < ran.size() && k < 4; ++k) {
      const tmon::ThreadInfo &t = m.thread(ran[k].thread);
      who << QStringLiteral("%1 %2 %3%")
                 .arg(t.tid)
                 .arg(t.name)
                 .arg(r.length() > 0 ? 100.0 * double(ran[k].ns) / double(r.length()) : 0.0, 0,
                      'f', 0);
    }
    if (ran.size() > 4) who << CpusView::tr("+%1 more").arg(ran.size() - 4);
    row.detail = CpusView::tr("this program: %1 %")
                     .arg(r.length() > 0 ? 100.0 * double(ours) / double(r.length()) : 0.0, 0,
                          'f', 0);
    row.note = who.isEmpty() ? CpusView::tr("none of the program's threads ran here")
                             : who.join(QStringLiteral(", "));
    bars.push_back(std::move(b));
  }
  return bars;
}
}  // namespace

CpusView::CpusView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : BarChartView(model, window,
                   {cpuCategories(), tr("CPUs: time per category and threads that ran"), QString(),
                    tr("No CPU samples in this window yet"), false, cpuBars},
                   parent) {}

}  // namespace tmui
