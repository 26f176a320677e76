#include "matrixview.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>
#include <unordered_set>

#include "names.h"
#include "pools.h"

#include "sessionmodel.h"
#include "viewwindow.h"
#include "waitmatrixtable.h"

namespace tmui {

MatrixView::MatrixView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent),
      title_(new QLabel(this)),
      byPool_(new QCheckBox(tr("By pool"), this)),
      table_(new WaitMatrixTable(this)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  title_->setWordWrap(true);
  auto *top = new QHBoxLayout;
  top->addWidget(title_, 1);
  top->addWidget(byPool_, 0, Qt::AlignTop);
  layout->addLayout(top);
  layout->addWidget(table_, 1);
  byPool_->setToolTip(tr("Rows and columns for pools of threads (same start routine and name "
                         "but for its digits) instead of single threads"));
  connect(byPool_, &QCheckBox::clicked, this, &MatrixView::setPooled);
}

void MatrixView::setPooled(bool pooled) {
  chosen_ = true;
  pooled_ = pooled;
  refreshNow();
}

int MatrixView::rowCount() const { return table_->waiterCount(); }
int MatrixView::cellCount() const { return table_->cellCount(); }

QString MatrixView::others() const {
  const int rows = table_->otherWaiters(), cols = table_->otherHolders();
  if (!rows && !cols) return QString();
  return tr(" Only the %1 that waited most and the %2 waited for most have their own "
            "row and column: the other %3 waiting and %4 waited-for are summed in \"others\".")
      .arg(table_->waiterCount() - rows)
      .arg(table_->holderCount() - cols)
      .arg(rows)
      .arg(cols);
}

void MatrixView::rebuild() {
  const tmon::TimeRange r = window()->range();
  const QString described = window()->describe();
  const tmon::SessionModel *live = model();
  using Result = std::pair<BoundedMatrix, bool>;  // and whether by pool
  auto compute = [live, r, chosen = chosen_, pooled = pooled_,
                  older = window()->olderModel()]() -> Result {
    // A range dragged back past a live model's detail: from its spool.
    const std::unique_ptr<tmon::SessionModel> old = older ? older() : nullptr;
    const tmon::SessionModel *m = old ? old.get() : live;
    const std::vector<tmon::WaitPair> pairs = m->waitMatrix(r);
    bool byPool = pooled;
    if (!chosen) {
      // More threads than fit in their own rows: pools x pools.
      std::unordered_set<uint32_t> waiters, holders;
      for (const tmon::WaitPair &p : pairs) {
        waiters.insert(p.waiter);
        holders.insert(p.holder);
      }
      byPool = int(std::max(waiters.size(), holders.size())) > kMatrixMaxThreads;
    }
    if (!byPool)
      return {boundMatrix(pairs, [m](uint32_t tid) { return threadLabel(*m, tid); }), false};
    const tmon::PoolPairs pp = tmon::poolPairs(*m, pairs);
    return {boundMatrix(pp.pairs, [&pp](uint32_t id) { return pp.parties.value(int(id) - 1); }),
            true};
  };
  auto present = [this, described](Result &&result) {
    const bool none = result.first.pairs == 0;
    pooled_ = result.second;
    byPool_->setChecked(pooled_);
    table_->setMatrix(std::move(result.first));
    const QString who = pooled_ ? tr("pool (or thread in none)") : tr("thread");
    title_->setText(none ? tr("Who blocked whom, %1: no thread waited for another in this window.")
                               .arg(described)
                         : tr("Who blocked whom over every object, %1. Rows: the %2 that "
                              "waited. Columns: the %2 it waited for (the owner when the wait "
                              "began, or the thread whose signal, post or arrival released it). "
                              "Cells: wait time (number of waits).%3")
                               .arg(described, who, others()));
  };
  // Every wait of every thread: off the GUI thread when large.
  rebuildWith<Result>(compute, present);
}

}  // namespace tmui
