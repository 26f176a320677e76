#include "synctree.h"

#include <QFont>

#include "names.h"
#include "sessionmodel.h"
#include "statepalette.h"
#include "threadmon.pb-c.h"

namespace tmui {

namespace {
struct Stats {
  uint64_t acq = 0, cont = 0, wait = 0, maxWait = 0, hold = 0;
};

// The number columns of a row; true when anything changed.
template <typename Row>
bool fill(Row &row, const Stats &s) {
  const double pct = s.acq ? 100.0 * double(s.cont) / double(s.acq) : 0.0;
  const std::pair<double, QString> cols[] = {
      {double(s.acq), QString::number(s.acq)},
      {double(s.cont), QString::number(s.cont)},
      {pct, QStringLiteral("%1 %").arg(pct, 0, 'f', 1)},
      {double(s.wait), formatNs(s.wait)},
      {double(s.maxWait), formatNs(s.maxWait)},
      {double(s.hold), formatNs(s.hold)}};
  bool changed = false;
  for (int k = 0; k < 6; ++k) {
    const int c = SyncTree::Acquisitions + k;
    if (row.text[size_t(c)] != cols[k].second) {
      row.text[size_t(c)] = cols[k].second;
      changed = true;
    }
    row.sort[size_t(c)] = cols[k].first;
  }
  return changed;
}

template <typename Row>
bool setText(Row &row, int col, const QString &text) {
  row.sort[size_t(col)] = text;
  if (row.text[size_t(col)] == text) return false;
  row.text[size_t(col)] = text;
  return true;
}
}  // namespace

SyncTree::SyncTree(QObject *parent) : QAbstractItemModel(parent) {}

QVariant SyncTree::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char *const kNames[ColumnCount] = {
      QT_TR_NOOP("Module / object"), QT_TR_NOOP("Kind"),      QT_TR_NOOP("Call site"),
      QT_TR_NOOP("Acquisitions"),    QT_TR_NOOP("Contentions"), QT_TR_NOOP("Contended"),
      QT_TR_NOOP("Wait time"),       QT_TR_NOOP("Max wait"),  QT_TR_NOOP("Hold time")};
  return section >= 0 && section < ColumnCount ? tr(kNames[section]) : QVariant();
}

// Module rows have internal id 0; an object row's is its module's index + 1.
QModelIndex SyncTree::index(int row, int column, const QModelIndex &parent) const {
  if (column < 0 || column >= ColumnCount || row < 0) return {};
  if (!parent.isValid())
    return row < int(modules_.size()) ? createIndex(row, column, quintptr(0)) : QModelIndex();
  if (parent.internalId() != 0) return {};
  const Module &m = modules_[size_t(parent.row())];
  return row < int(m.objects.size()) ? createIndex(row, column, quintptr(parent.row() + 1))
                                     : QModelIndex();
}

QModelIndex SyncTree::parent(const QModelIndex &child) const {
  if (!child.isValid() || child.internalId() == 0) return {};
  return createIndex(int(child.internalId() - 1), 0, quintptr(0));
}

int SyncTree::rowCount(const QModelIndex &parent) const {
  if (!parent.isValid()) return int(modules_.size());
  if (parent.internalId() != 0 || parent.column() != 0) return 0;
  return int(modules_[size_t(parent.row())].objects.size());
}

int SyncTree::columnCount(const QModelIndex &) const { return ColumnCount; }

const SyncTree::Row *SyncTree::rowAt(const QModelIndex &index) const {
  if (!index.isValid()) return nullptr;
  if (index.internalId() == 0) return &modules_[size_t(index.row())].row;
  const Module &m = modules_[size_t(index.internalId() - 1)];
  return &objects_[size_t(m.objects[size_t(index.row())])];
}

QVariant SyncTree::data(const QModelIndex &index, int role) const {
  const Row *row = rowAt(index);
  if (!row) return {};
  const int c = index.column();
  switch (role) {
    case Qt::DisplayRole: return row->text[size_t(c)];
    case kSortRole: return row->sort[size_t(c)];
    case kObjectIdRole: return c == Object ? QVariant(row->id) : QVariant();
    case Qt::TextAlignmentRole:
      return c >= Acquisitions ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    case Qt::ToolTipRole:
      return c == Object ? QVariant(row->tip) : c == Kind ? QVariant(row->kindTip) : QVariant();
    case Qt::BackgroundRole: return row->hidden ? QVariant(hiddenLockTint()) : QVariant();
    case Qt::FontRole:
      if (row->id == 0 && c == Object) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      return {};
    default: return {};
  }
}

void SyncTree::update(const tmon::SessionModel &model, const tmon::TimeRange &r) {
  // New modules and objects first (appended, so existing indexes stay).
  std::vector<std::vector<std::pair<uint32_t, int>>> added(modules_.size());
  std::vector<QString> newModules;
  for (int i = 0; i < model.syncObjectCount(); ++i) {
    const tmon::SyncObjectInfo &o = model.syncObject(i);
    if (objectIndex_.contains(o.id)) continue;
    int m = moduleIndex_.value(o.module, -1);
    if (m < 0) {
      m = int(modules_.size() + newModules.size());
      moduleIndex_.insert(o.module, m);
      newModules.push_back(o.module);
      added.emplace_back();
    }
    added[size_t(m)].push_back({o.id, i});
    objectIndex_.insert(o.id, -1);  // placed below
  }
  auto place = [&](int m) {
    for (const auto &[id, i] : added[size_t(m)]) {
      Row row;
      row.id = id;
      objectIndex_[id] = int(objects_.size());
      modules_[size_t(m)].objects.push_back(int(objects_.size()));
      objects_.push_back(row);
      moduleOf_.push_back(m);
    }
  };
  for (int m = 0; m < int(modules_.size()); ++m) {
    const int n = int(added[size_t(m)].size());
    if (!n) continue;
    const int first = int(modules_[size_t(m)].objects.size());
    beginInsertRows(createIndex(m, 0, quintptr(0)), first, first + n - 1);
    place(m);
    endInsertRows();
  }
  if (!newModules.empty()) {
    const int first = int(modules_.size());
    beginInsertRows(QModelIndex(), first, first + int(newModules.size()) - 1);
    for (const QString &key : newModules) {
      Module mod;
      mod.key = key;
      mod.row.text[Object] = key.isEmpty() ? tr("(unknown module)") : key;
      mod.row.sort[Object] = mod.row.text[Object];
      modules_.push_back(std::move(mod));
      place(int(modules_.size()) - 1);
    }
    endInsertRows();
  }

  // Then every object's texts and numbers; one change signal per module.
  std::vector<Stats> perModule(modules_.size());
  std::vector<char> moduleChanged(modules_.size(), 0);
  for (int i = 0; i < model.syncObjectCount(); ++i) {
    const tmon::SyncObjectInfo &o = model.syncObject(i);
    const int k = objectIndex_.value(o.id, -1);
    if (k < 0) continue;
    Row &row = objects_[size_t(k)];
    const int m = moduleOf_[size_t(k)];
    bool changed = false;
    // Descriptions may be completed later (a SyncObject sent again).
    const QString name =
        o.symbol.isEmpty() ? QStringLiteral("0x%1").arg(o.address, 0, 16) : o.symbolText();
    if (setText(row, Object, name))
      row.tip = o.firstContentionStack.isEmpty()
                    ? name
                    : tr("First contention:\n%1").arg(o.firstContentionStack.join('\n'));
    // A lock inside a library (found by sampling futex waits) is what the
    // program never wrote: name it plainly and tint the whole row.
    // A runtime's own futex object (a C++20 semaphore, a Rust Mutex) is the
    // program's: its kind, and what made it.
    const bool hidden = o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL && !o.runtimeKind;
    const QString kind = o.runtimeKind ? tr("%1 (%2)").arg(tmon::syncKindName(o.runtimeKind), o.runtimeWhat)
                         : hidden      ? tr("hidden lock")
                                       : tmon::syncKindName(o.kind);
    if (setText(row, Kind, kind) || hidden != row.hidden) {
      changed = true;
      row.hidden = hidden;
      row.kindTip =
          hidden ? tr("A lock inside %1 that the program never created: threads were seen "
                      "blocked in futex() on it. Counts are samples; wait is the estimated time "
                      "lost to it (asleep on it and in system calls for it).")
                       .arg(o.module)
                 : QString();
    }
    changed |= setText(row, CallSite, model.objectCallSite(i, r));
    const tmon::SyncDelta d = model.syncDelta(i, r);
    const Stats s{d.acquisitions, d.contentions, d.waitNs, d.maxWaitNs, d.holdNs};
    changed |= fill(row, s);
    if (changed) moduleChanged[size_t(m)] = 1;
    Stats &ms = perModule[size_t(m)];
    ms.acq += s.acq;
    ms.cont += s.cont;
    ms.wait += s.wait;
    ms.maxWait = std::max(ms.maxWait, s.maxWait);
    ms.hold += s.hold;
  }
  for (int m = 0; m < int(modules_.size()); ++m) {
    Module &mod = modules_[size_t(m)];
    bool changed = fill(mod.row, perModule[size_t(m)]);
    changed |= setText(mod.row, Kind, tr("%n object(s)", nullptr, int(mod.objects.size())));
    mod.row.sort[Object] = mod.row.text[Object];
    const QModelIndex parent = createIndex(m, 0, quintptr(0));
    if (changed) emit dataChanged(parent, parent.siblingAtColumn(ColumnCount - 1));
    if (moduleChanged[size_t(m)] && !mod.objects.empty())
      emit dataChanged(index(0, 0, parent), index(int(mod.objects.size()) - 1, ColumnCount - 1, parent));
  }
}

}  // namespace tmui
