#include "userthreadsview.h"

#include <QStringList>

#include "sessionmodel.h"
#include "statepalette.h"

namespace tmui {

namespace {
constexpr int kLwpsNamed = 4;  // LWPs named beside a bar; the rest counted

std::vector<BarCategory> userCategories() {
  std::vector<BarCategory> cats = finalStateCategories();
  cats.push_back({dispatchableLabel(), dispatchableColor()});
  return cats;
}

std::vector<ItemBar> userBars(const tmon::SessionModel &m, const tmon::TimeRange &r) {
  std::vector<ItemBar> bars;
  for (int i = 0; i < m.userThreadCount(); ++i) {
    const tmon::UserThreadStates st = m.userThreadStates(i, r);
    if (st.lifetimeNs <= 0) continue;
    const tmon::UserThreadInfo &u = m.userThread(i);
    ItemBar b;
    BarRow &row = b.row;
    row.label = QStringLiteral("u%1  %2").arg(u.id).arg(tmon::userThreadName(u));
    row.detail = u.function;
    QStringList on;
    for (size_t k = 0; k < st.lwpNs.size() && k < size_t(kLwpsNamed); ++k)
      on << UserThreadsView::tr("LWP %1 %2 s")
                .arg(st.lwpNs[k].first)
                .arg(double(st.lwpNs[k].second) / 1e9, 0, 'f', 3);
    if (st.lwpNs.size() > size_t(kLwpsNamed))
      on << UserThreadsView::tr("+%1 more").arg(st.lwpNs.size() - kLwpsNamed);
    row.note = on.isEmpty() ? UserThreadsView::tr("never on an LWP") : on.join(QStringLiteral(", "));
    row.total = double(st.lifetimeNs);
    row.values = finalStateValues(st.onLwp);
    row.values.push_back(double(st.dispatchableNs));
    b.item.index = i;
    b.item.id = u.id;
    b.item.name = tmon::userThreadName(u);
    b.item.routine = u.function;
    b.item.values = row.values;
    b.item.total = row.total;
    bars.push_back(std::move(b));
  }
  return bars;
}
}  // namespace

UserThreadsView::UserThreadsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : BarChartView(model, window,
                   {userCategories(), tr("User threads: on an LWP (in its state) or dispatchable"),
                    tr("user threads"),
                    tr("No user threads: the program made no context with makecontext in this window"),
                    true, userBars},
                   parent) {}

}  // namespace tmui
