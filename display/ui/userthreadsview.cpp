#include "userthreadsview.h"

#include <QStringList>
#include <QVBoxLayout>

#include "sessionmodel.h"
#include "stackedbarchart.h"
#include "statepalette.h"
#include "viewwindow.h"

namespace tmui {

namespace {
constexpr int kLwpsNamed = 4;  // LWPs named beside a bar; the rest counted
}

UserThreadsView::UserThreadsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent), chart_(new StackedBarChart(this)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(chart_);
  std::vector<BarCategory> cats = finalStateCategories();
  cats.push_back({dispatchableLabel(), dispatchableColor()});
  chart_->setCategories(cats);
  chart_->setEmptyText(
      tr("No user threads: the program made no context with makecontext in this window"));
}

int UserThreadsView::rowCount() const { return chart_->rowCount(); }

void UserThreadsView::rebuild() {
  const tmon::TimeRange r = window()->range();
  std::vector<BarRow> rows;
  for (int i = 0; i < model()->userThreadCount(); ++i) {
    const tmon::UserThreadStates st = model()->userThreadStates(i, r);
    if (st.lifetimeNs <= 0) continue;
    const tmon::UserThreadInfo &u = model()->userThread(i);
    BarRow row;
    row.label = QStringLiteral("u%1  %2").arg(u.id).arg(tmon::userThreadName(u));
    row.detail = u.function;
    QStringList on;
    for (size_t k = 0; k < st.lwpNs.size() && k < size_t(kLwpsNamed); ++k)
      on << tr("LWP %1 %2 s").arg(st.lwpNs[k].first).arg(double(st.lwpNs[k].second) / 1e9, 0, 'f', 3);
    if (st.lwpNs.size() > size_t(kLwpsNamed)) on << tr("+%1 more").arg(st.lwpNs.size() - kLwpsNamed);
    row.note = on.isEmpty() ? tr("never on an LWP") : on.join(QStringLiteral(", "));
    row.total = double(st.lifetimeNs);
    row.values = finalStateValues(st.onLwp);
    row.values.push_back(double(st.dispatchableNs));
    rows.push_back(std::move(row));
  }
  chart_->setTitle(tr("User threads: on an LWP (in its state) or dispatchable, %1 (%2 user threads)")
                       .arg(window()->describe())
                       .arg(rows.size()));
  chart_->setRows(std::move(rows));
}

}  // namespace tmui
