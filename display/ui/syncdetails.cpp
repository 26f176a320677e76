#include "syncdetails.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include "names.h"
#include "sessionmodel.h"
#include "threadmon.pb-c.h"
#include "waitmatrixtable.h"

namespace tmui {

namespace {
QTableWidget *makeTable(const QStringList &headers, QWidget *parent) {
  auto *t = new QTableWidget(0, int(headers.size()), parent);
  t->setHorizontalHeaderLabels(headers);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionMode(QAbstractItemView::NoSelection);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->horizontalHeader()->setStretchLastSection(true);
  return t;
}

QTableWidgetItem *cell(const QString &text, bool number = false) {
  auto *item = new QTableWidgetItem(text);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}
}  // namespace

SyncDetails::SyncDetails(QWidget *parent)
    : QWidget(parent),
      title_(new QLabel(this)),
      sitesLabel_(new QLabel(tr("<b>Call sites</b> (the program's own frame first)"), this)),
      sites_(makeTable({tr("Contentions"), tr("Wait"), tr("Call site")}, this)),
      matrixLabel_(new QLabel(this)),
      matrix_(new WaitMatrixTable(this)),
      waiters_(makeTable({tr("Thread"), tr("Samples"), tr("Asleep on it"), tr("System time for it")},
                         this)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 0, 0, 0);
  title_->setWordWrap(true);
  matrixLabel_->setWordWrap(true);
  layout->addWidget(title_);
  layout->addWidget(sitesLabel_);
  layout->addWidget(sites_, 1);
  layout->addWidget(matrixLabel_);
  layout->addWidget(matrix_, 1);
  layout->addWidget(waiters_, 1);
  layout->addStretch(0);  // keeps the title at the top when the tables are hidden
  showNothing();
}

int SyncDetails::callSiteRows() const { return sites_->rowCount(); }
int SyncDetails::matrixCells() const { return matrix_->isHidden() ? 0 : matrix_->cellCount(); }
int SyncDetails::waiterRows() const { return waiters_->isHidden() ? 0 : waiters_->rowCount(); }

void SyncDetails::showNothing() {
  id_ = 0;
  title_->setText(tr("Select an object to see where it was contended and who blocked whom."));
  for (QWidget *w : {static_cast<QWidget *>(sitesLabel_), static_cast<QWidget *>(sites_),
                     static_cast<QWidget *>(matrixLabel_), static_cast<QWidget *>(matrix_),
                     static_cast<QWidget *>(waiters_)})
    w->hide();
  sites_->setRowCount(0);
}

void SyncDetails::showObject(const tmon::SessionModel &model, uint32_t id,
                             const tmon::TimeRange &r) {
  id_ = id;
  const int index = id ? model.indexOfSyncObject(id) : -1;
  if (index < 0) {
    showNothing();
    return;
  }
  sitesLabel_->show();
  sites_->show();
  matrixLabel_->show();
  const tmon::SyncObjectInfo &o = model.syncObject(index);
  const bool hidden = o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL && !o.runtimeKind;
  if (o.runtimeKind) {
    title_->setText(tr("<b>%1</b> in %2: a <b>%3</b>, found by sampling the futex its waiters "
                       "sleep on (no pthread call shows it).")
                        .arg(objectLabel(model, id).toHtmlEscaped(), o.module.toHtmlEscaped(),
                             o.runtimeWhat.toHtmlEscaped()));
  } else {
    title_->setText(
        hidden ? tr("<b>%1</b> in %2: a <b>hidden lock</b> inside the library, which "
                    "the program never created. Threads were seen blocked on it.")
                     .arg(objectLabel(model, id).toHtmlEscaped(), o.module.toHtmlEscaped())
               : tr("<b>%1</b> (%2) in %3")
                     .arg(objectLabel(model, id).toHtmlEscaped(), tmon::syncKindName(o.kind),
                          o.module.toHtmlEscaped()));
  }

  const std::vector<tmon::CallSite> sites = model.callSites(id, r);
  sites_->setRowCount(int(sites.size()));
  for (int i = 0; i < int(sites.size()); ++i) {
    const tmon::CallSite &s = sites[size_t(i)];
    sites_->setItem(i, 0, cell(QString::number(s.contentions), true));
    sites_->setItem(i, 1, cell(formatNs(s.waitNs), true));
    // The program's own function leads, whatever order the frames came in.
    const QString own = model.programFrame(s.frames);
    QTableWidgetItem *frames = cell(
        s.frames.isEmpty() ? tr("stack %1").arg(s.stackId)
                           : QStringLiteral("%1   (%2)").arg(own, s.frames.join(QStringLiteral(" ← "))));
    frames->setToolTip(s.frames.join('\n'));
    sites_->setItem(i, 2, frames);
  }
  sites_->setVisible(!sites.empty());
  sitesLabel_->setText(sites.empty() ? tr("<b>Call sites</b>: none recorded in this window")
                                     : tr("<b>Call sites</b> (the program's own frame first)"));

  if (hidden) {
    // The interposer never sees who holds a library's lock: list the sampled waiters.
    matrix_->hide();
    const std::vector<tmon::InternalWaiter> w = model.internalWaiters(id, r);
    matrixLabel_->setText(w.empty() ? tr("<b>Threads seen waiting</b>: none in this window")
                                    : tr("<b>Threads losing time to it</b> (estimated from the "
                                         "ticks that found them asleep on it; who held it is not "
                                         "visible)"));
    waiters_->setVisible(!w.empty());
    waiters_->setRowCount(int(w.size()));
    for (int i = 0; i < int(w.size()); ++i) {
      waiters_->setItem(i, 0, cell(threadLabel(model, w[size_t(i)].tid)));
      waiters_->setItem(i, 1, cell(QString::number(w[size_t(i)].samples), true));
      waiters_->setItem(i, 2, cell(formatNs(w[size_t(i)].waitNs), true));
      waiters_->setItem(i, 3, cell(formatNs(w[size_t(i)].kernelNs), true));
    }
    return;
  }
  waiters_->hide();
  const std::vector<tmon::WaitPair> pairs = model.waitMatrix(r, id);
  matrix_->setPairs(model, pairs);
  matrix_->setVisible(!pairs.empty());
  matrixLabel_->setText(pairs.empty() ? tr("<b>Who blocked whom</b>: no waits in this window")
                                      : tr("<b>Who blocked whom</b>: rows waited, columns held "
                                           "it (or released them), cells wait time"));
}

}  // namespace tmui
