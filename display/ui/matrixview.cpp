#include "matrixview.h"

#include <QLabel>
#include <QVBoxLayout>

#include "sessionmodel.h"
#include "viewwindow.h"
#include "waitmatrixtable.h"

namespace tmui {

MatrixView::MatrixView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent), title_(new QLabel(this)), table_(new WaitMatrixTable(this)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  title_->setWordWrap(true);
  layout->addWidget(title_);
  layout->addWidget(table_, 1);
}

int MatrixView::rowCount() const { return table_->waiterCount(); }
int MatrixView::cellCount() const { return table_->cellCount(); }

QString MatrixView::others() const {
  const int rows = table_->otherWaiters(), cols = table_->otherHolders();
  if (!rows && !cols) return QString();
  return tr(" Only the %1 threads that waited most and the %2 waited for most have their own "
            "row and column: the other %3 waiting and %4 waited-for threads are summed in "
            "\"others\".")
      .arg(table_->waiterCount() - rows)
      .arg(table_->holderCount() - cols)
      .arg(rows)
      .arg(cols);
}

void MatrixView::rebuild() {
  const tmon::TimeRange r = window()->range();
  const QString described = window()->describe();
  const tmon::SessionModel *m = model();
  auto compute = [m, r] { return boundMatrix(m->waitMatrix(r)); };
  auto present = [this, described](BoundedMatrix &&matrix) {
    const bool none = matrix.pairs == 0;
    table_->setMatrix(*model(), std::move(matrix));
    title_->setText(none ? tr("Who blocked whom, %1: no thread waited for another in this window.")
                               .arg(described)
                         : tr("Who blocked whom over every object, %1. Rows: the thread that "
                              "waited. Columns: the thread it waited for (the owner when the wait "
                              "began, or the thread whose signal, post or arrival released it). "
                              "Cells: wait time (number of waits).%2")
                               .arg(described, others()));
  };
  // Every wait of every thread: off the GUI thread when large.
  rebuildWith<BoundedMatrix>(compute, present);
}

}  // namespace tmui
