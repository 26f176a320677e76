#include "synctree.h"

#include "names.h"
#include "sessionmodel.h"
#include "statepalette.h"
#include "threadmon.pb-c.h"

namespace tmui {

namespace {
struct Stats {
  uint64_t acq = 0, cont = 0, wait = 0, maxWait = 0, hold = 0;
};

void setNumber(QStandardItem *item, double sortValue, const QString &text) {
  item->setData(text, Qt::DisplayRole);
  item->setData(sortValue, SyncTree::kSortRole);
}

void fill(QStandardItem *first, const Stats &s) {
  QStandardItem *parent = first->parent();
  auto at = [&](int col) {
    return parent ? parent->child(first->row(), col) : first->model()->item(first->row(), col);
  };
  setNumber(at(SyncTree::Acquisitions), double(s.acq), QString::number(s.acq));
  setNumber(at(SyncTree::Contentions), double(s.cont), QString::number(s.cont));
  const double pct = s.acq ? 100.0 * double(s.cont) / double(s.acq) : 0.0;
  setNumber(at(SyncTree::ContendedPct), pct, QStringLiteral("%1 %").arg(pct, 0, 'f', 1));
  setNumber(at(SyncTree::Wait), double(s.wait), formatNs(s.wait));
  setNumber(at(SyncTree::MaxWait), double(s.maxWait), formatNs(s.maxWait));
  setNumber(at(SyncTree::Hold), double(s.hold), formatNs(s.hold));
}
}  // namespace

SyncTree::SyncTree(QObject *parent) : QStandardItemModel(0, ColumnCount, parent) {
  setHorizontalHeaderLabels({tr("Module / object"), tr("Kind"), tr("Call site"),
                             tr("Acquisitions"), tr("Contentions"), tr("Contended"),
                             tr("Wait time"), tr("Max wait"), tr("Hold time")});
  setSortRole(kSortRole);
}

QList<QStandardItem *> SyncTree::makeRow() {
  QList<QStandardItem *> row;
  for (int c = 0; c < ColumnCount; ++c) {
    auto *item = new QStandardItem;
    item->setEditable(false);
    if (c >= Acquisitions) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    row << item;
  }
  return row;
}

QStandardItem *SyncTree::moduleRow(const QString &module) {
  auto it = modules_.find(module);
  if (it != modules_.end()) return *it;
  QList<QStandardItem *> row = makeRow();
  const QString name = module.isEmpty() ? tr("(unknown module)") : module;
  row[Object]->setText(name);
  row[Object]->setData(name, kSortRole);
  row[Object]->setData(0u, kObjectIdRole);
  QFont bold = row[Object]->font();
  bold.setBold(true);
  row[Object]->setFont(bold);
  appendRow(row);
  modules_.insert(module, row[Object]);
  return row[Object];
}

void SyncTree::update(const tmon::SessionModel &model, const tmon::TimeRange &r) {
  QHash<QString, Stats> perModule;
  for (int i = 0; i < model.syncObjectCount(); ++i) {
    const tmon::SyncObjectInfo &o = model.syncObject(i);
    QStandardItem *first = objects_.value(o.id);
    if (!first) {
      QStandardItem *parent = moduleRow(o.module);
      QList<QStandardItem *> row = makeRow();
      parent->appendRow(row);
      first = row[Object];
      first->setData(o.id, kObjectIdRole);
      objects_.insert(o.id, first);
    }
    // Descriptions may be completed later (a SyncObject sent again).
    QStandardItem *parent = first->parent();
    const int row = first->row();
    const QString name =
        o.symbol.isEmpty() ? QStringLiteral("0x%1").arg(o.address, 0, 16) : o.symbolText();
    first->setText(name);
    first->setData(name, kSortRole);
    first->setToolTip(o.firstContentionStack.isEmpty()
                          ? name
                          : tr("First contention:\n%1").arg(o.firstContentionStack.join('\n')));
    // A lock inside a library (found by sampling futex waits) is what the
    // program never wrote: name it plainly and tint the whole row.
    // A runtime's own futex object (a C++20 semaphore, a Rust Mutex) is the
    // program's: its kind, and what made it.
    const bool hidden = o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL && !o.runtimeKind;
    const QString kind = o.runtimeKind ? tr("%1 (%2)").arg(tmon::syncKindName(o.runtimeKind), o.runtimeWhat)
                         : hidden      ? tr("hidden lock")
                                       : tmon::syncKindName(o.kind);
    parent->child(row, Kind)->setText(kind);
    parent->child(row, Kind)->setData(kind, kSortRole);
    parent->child(row, Kind)->setToolTip(
        hidden ? tr("A lock inside %1 that the program never created: threads were seen "
                    "blocked in futex() on it. Counts are samples; wait is the estimated time "
                    "lost to it (asleep on it and in system calls for it).")
                     .arg(o.module)
               : QString());
    if (hidden)
      for (int c = 0; c < ColumnCount; ++c) parent->child(row, c)->setBackground(hiddenLockTint());
    const QString site = model.objectCallSite(i, r);
    parent->child(row, CallSite)->setText(site);
    parent->child(row, CallSite)->setData(site, kSortRole);
    const tmon::SyncDelta d = model.syncDelta(i, r);
    const Stats s{d.acquisitions, d.contentions, d.waitNs, d.maxWaitNs, d.holdNs};
    fill(first, s);
    Stats &m = perModule[o.module];
    m.acq += s.acq;
    m.cont += s.cont;
    m.wait += s.wait;
    m.maxWait = std::max(m.maxWait, s.maxWait);
    m.hold += s.hold;
  }
  for (auto it = modules_.begin(); it != modules_.end(); ++it) {
    fill(*it, perModule.value(it.key()));
    item((*it)->row(), Kind)->setText(tr("%n object(s)", nullptr, (*it)->rowCount()));
  }
}

}  // namespace tmui
