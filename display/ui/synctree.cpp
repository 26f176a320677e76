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

double contendedPct(const Stats &s) {
  return s.acq ? 100.0 * double(s.cont) / double(s.acq) : 0.0;
}

// What no wrapper counted is unknown, shown as a dash, never as 0:
// uncounted, the acquisitions, their share contended and the holds (a
// session read from outside); sampled, the longest wait too (a hidden lock).
std::array<QString, 6> numberTexts(const Stats &s, bool uncounted, bool sampled) {
  const QString unknown = QStringLiteral("–");
  uncounted = uncounted || sampled;
  return {uncounted ? unknown : QString::number(s.acq), QString::number(s.cont),
          uncounted ? unknown : QStringLiteral("%1 %").arg(contendedPct(s), 0, 'f', 1),
          formatNs(s.wait), sampled ? unknown : formatNs(s.maxWait),
          uncounted ? unknown : formatNs(s.hold)};
}

// The number columns of a row; true when anything changed.
template <typename Row>
bool fill(Row &row, const Stats &s, std::array<QString, 6> &&texts) {
  const double values[6] = {double(s.acq),  double(s.cont),    contendedPct(s),
                            double(s.wait), double(s.maxWait), double(s.hold)};
  bool changed = false;
  static constexpr int kColumns[6] = {SyncTree::Acquisitions, SyncTree::Contentions,
                                      SyncTree::ContendedPct, SyncTree::Wait,
                                      SyncTree::MaxWait,      SyncTree::Hold};
  for (int k = 0; k < 6; ++k) {
    const int c = kColumns[k];
    if (row.text[size_t(c)] != texts[size_t(k)]) {
      row.text[size_t(c)] = std::move(texts[size_t(k)]);
      changed = true;
    }
    row.sort[size_t(c)] = values[k];
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
  if (o == Qt::Horizontal && role == Qt::ToolTipRole && section == Hold)
    return tr("Time the lock was held, summed over its holders (a rwlock's: for writing, as its "
              "readers hold it together); estimated from a sample of the holds past the first "
              "256");
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char *const kNames[ColumnCount] = {
      QT_TR_NOOP("Module / object"), QT_TR_NOOP("Kind"),        QT_TR_NOOP("Wait time"),
      QT_TR_NOOP("Max wait"),        QT_TR_NOOP("Contentions"), QT_TR_NOOP("Contended"),
      QT_TR_NOOP("Hold time"),       QT_TR_NOOP("Acquisitions"), QT_TR_NOOP("Call site")};
  return section >= 0 && section < ColumnCount ? tr(kNames[section]) : QVariant();
}

// Module rows have internal id 0; an object row's is its module's index + 1.
QModelIndex SyncTree::index(int row, int column, const QModelIndex &parent) const {
  if (column < 0 || column >= ColumnCount || row < 0) return {};
  if (!parent.isValid())
    return row < int(shownModules_.size()) ? createIndex(row, column, quintptr(0)) : QModelIndex();
  if (parent.internalId() != 0) return {};
  const int m = shownModules_[size_t(parent.row())];
  return row < int(modules_[size_t(m)].shown.size()) ? createIndex(row, column, quintptr(m + 1))
                                                     : QModelIndex();
}

QModelIndex SyncTree::parent(const QModelIndex &child) const {
  if (!child.isValid() || child.internalId() == 0) return {};
  return createIndex(modules_[size_t(child.internalId() - 1)].at, 0, quintptr(0));
}

int SyncTree::rowCount(const QModelIndex &parent) const {
  if (!parent.isValid()) return int(shownModules_.size());
  if (parent.internalId() != 0 || parent.column() != 0) return 0;
  return int(modules_[size_t(shownModules_[size_t(parent.row())])].shown.size());
}

int SyncTree::columnCount(const QModelIndex &) const { return ColumnCount; }

Qt::ItemFlags SyncTree::flags(const QModelIndex &index) const {
  Qt::ItemFlags f = QAbstractItemModel::flags(index);
  if (index.isValid() && index.internalId() != 0) f |= Qt::ItemNeverHasChildren;
  return f;
}

const SyncTree::Row *SyncTree::rowAt(const QModelIndex &index) const {
  if (!index.isValid()) return nullptr;
  if (index.internalId() == 0) return &modules_[size_t(shownModules_[size_t(index.row())])].row;
  const Module &m = modules_[size_t(index.internalId() - 1)];
  return &objects_[size_t(m.shown[size_t(index.row())])];
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
      return c != Object && c != Kind && c != CallSite
                 ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter))
                 : QVariant();
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

std::vector<SyncTree::ObjectRow> SyncTree::collect(const tmon::SessionModel &model,
                                                const tmon::TimeRange &r, Grouping grouping) {
  std::vector<ObjectRow> out;
  out.reserve(size_t(model.syncObjectCount()));
  const tmon::TimeRange whole{model.startNs(), model.latestNs()};
  for (int i = 0; i < model.syncObjectCount(); ++i) {
    const tmon::SyncObjectInfo &o = model.syncObject(i);
    ObjectRow row;
    row.id = o.id;
    row.module = o.module;
    // The call site over the whole run: a window's busiest would move objects at every refresh.
    row.group = grouping == Grouping::Module ? o.module : model.objectCallSite(i, whole);
    // Descriptions may be completed later (a SyncObject sent again).
    row.name = o.name();
    row.tip = o.firstContentionStack.isEmpty()
                  ? row.name
                  : tr("First contention:\n%1").arg(o.firstContentionStack.join('\n'));
    if (!o.madeAt.isEmpty()) row.tip = tr("Made at %1\n%2").arg(o.madeAt, row.tip);
    else if (!o.callSite().isEmpty())
      row.tip = tr("Where it was made is unknown; first used at %1\n%2").arg(o.callSite(), row.tip);
    if (o.namedBy() != tmon::SyncObjectInfo::NamedBy::Address)
      row.tip += tr("\nAddress 0x%1").arg(o.address, 0, 16);
    // A lock inside a library (found by sampling futex waits) is what the
    // program never wrote: name it plainly and tint the whole row.
    // A runtime's own futex object (a C++20 semaphore, a Rust Mutex) is the
    // program's: its kind, and what made it.
    row.hidden = o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL && !o.runtimeKind;
    row.kind = o.runtimeKind ? tr("%1 (%2)").arg(tmon::syncKindName(o.runtimeKind), o.runtimeWhat)
               : row.hidden  ? tr("hidden lock")
                             : tmon::syncKindName(o.kind);
    if (row.hidden)
      row.kindTip = tr("A lock inside %1 that the program never created: threads were seen "
                       "blocked in futex() on it. Counts are samples; wait is the estimated time "
                       "lost to it (asleep on it and in system calls for it).")
                        .arg(o.module);
    row.site = model.objectCallSite(i, r);
    const tmon::SyncDelta d = model.syncDelta(i, r);
    row.acq = d.acquisitions;
    row.cont = d.contentions;
    row.wait = d.waitNs;
    row.maxWait = d.maxWaitNs;
    row.hold = d.holdNs;
    row.sampled = o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL;
    row.uncounted = !model.info().acquisitionsKnown();
    row.numbers = numberTexts(Stats{row.acq, row.cont, row.wait, row.maxWait, row.hold},
                              row.uncounted, row.sampled);
    out.push_back(std::move(row));
  }
  return out;
}

void SyncTree::clear() {
  modules_.clear();
  objects_.clear();
  moduleIndex_.clear();
  objectIndex_.clear();
  moduleOf_.clear();
  shownModules_.clear();
}

void SyncTree::setGrouping(Grouping grouping) {
  if (grouping == grouping_) return;
  beginResetModel();
  grouping_ = grouping;
  clear();
  endResetModel();
}

bool SyncTree::apply(std::vector<ObjectRow> &&objects) {
  // An object whose parent changed (first contended since): all anew.
  const bool regroup = std::any_of(objects.begin(), objects.end(), [this](const ObjectRow &o) {
    const int k = objectIndex_.value(o.id, -1);
    return k >= 0 && modules_[size_t(moduleOf_[size_t(k)])].key != o.group;
  });
  if (regroup) {
    beginResetModel();
    clear();
  }
  // New parents and objects first (appended, so existing indexes stay).
  std::vector<std::vector<uint32_t>> added(modules_.size());
  std::vector<QString> newModules;
  for (const ObjectRow &o : objects) {
    if (objectIndex_.contains(o.id)) continue;
    int m = moduleIndex_.value(o.group, -1);
    if (m < 0) {
      m = int(modules_.size() + newModules.size());
      moduleIndex_.insert(o.group, m);
      newModules.push_back(o.group);
      added.emplace_back();
    }
    added[size_t(m)].push_back(o.id);
    objectIndex_.insert(o.id, -1);  // placed below
  }
  auto place = [&](int m) {
    for (uint32_t id : added[size_t(m)]) {
      Row row;
      row.id = id;
      objectIndex_[id] = int(objects_.size());
      modules_[size_t(m)].objects.push_back(int(objects_.size()));
      objects_.push_back(row);
      moduleOf_.push_back(m);
    }
  };
  const bool grows = !newModules.empty() ||
                     std::any_of(added.begin(), added.end(), [](const auto &a) { return !a.empty(); });
  // New rows: a reset (the view keeps the selection by object id).
  if (grows && !regroup) beginResetModel();
  for (int m = 0; m < int(modules_.size()); ++m) place(m);
  for (const QString &key : newModules) {
    Module mod;
    mod.key = key;
    mod.row.text[Object] = !key.isEmpty()                   ? key
                           : grouping_ == Grouping::Module ? tr("(unknown module)")
                                                           : tr("(never contended)");
    mod.row.sort[Object] = mod.row.text[Object];
    modules_.push_back(std::move(mod));
    place(int(modules_.size()) - 1);
  }

  // Then every object's texts and numbers; one change signal per module.
  std::vector<Stats> perModule(modules_.size());
  // A module with an object whose longest wait is known, one whose acquisitions are.
  std::vector<bool> timed(modules_.size()), counted(modules_.size());
  for (ObjectRow &o : objects) {
    const int k = objectIndex_.value(o.id, -1);
    if (k < 0) continue;
    Row &row = objects_[size_t(k)];
    const int m = moduleOf_[size_t(k)];
    bool changed = false;
    if (setText(row, Object, o.name)) {
      changed = true;
      row.tip = std::move(o.tip);
    }
    if (setText(row, Kind, o.kind) || o.hidden != row.hidden) {
      changed = true;
      row.hidden = o.hidden;
      row.kindTip = std::move(o.kindTip);
    }
    changed |= setText(row, CallSite, o.site);
    const Stats s{o.acq, o.cont, o.wait, o.maxWait, o.hold};
    changed |= fill(row, s, std::move(o.numbers));
    (void)changed;
    Stats &ms = perModule[size_t(m)];
    if (!o.sampled) timed[size_t(m)] = true;
    if (!o.sampled && !o.uncounted) counted[size_t(m)] = true;
    ms.acq += s.acq;
    ms.cont += s.cont;
    ms.wait += s.wait;
    ms.maxWait = std::max(ms.maxWait, s.maxWait);
    ms.hold += s.hold;
  }
  for (int m = 0; m < int(modules_.size()); ++m) {
    Module &mod = modules_[size_t(m)];
    fill(mod.row, perModule[size_t(m)],
         numberTexts(perModule[size_t(m)], !counted[size_t(m)], !timed[size_t(m)]));
    setText(mod.row, Kind, tr("%n object(s)", nullptr, int(mod.objects.size())));
    mod.row.sort[Object] = mod.row.text[Object];
  }
  // One re-sort and re-filter for everything, one signal.
  if (grows || regroup) {
    relayout(true);
    endResetModel();
    return true;
  }
  relayout(false);
  return false;
}

bool SyncTree::less(const Row &a, const Row &b) const {
  const QVariant &x = a.sort[size_t(sortColumn_)], &y = b.sort[size_t(sortColumn_)];
  if (x.typeId() == QMetaType::Double && y.typeId() == QMetaType::Double)
    return x.toDouble() < y.toDouble();
  return x.toString() < y.toString();
}

bool SyncTree::matches(const Row &row) const {
  for (const QString &t : row.text)
    if (t.contains(filter_, Qt::CaseInsensitive)) return true;
  return false;
}

void SyncTree::order() {
  shownModules_.clear();
  for (int m = 0; m < int(modules_.size()); ++m) {
    Module &mod = modules_[size_t(m)];
    mod.shown.clear();
    const bool moduleMatches = filter_.isEmpty() || matches(mod.row);
    for (int k : mod.objects)
      if (moduleMatches || matches(objects_[size_t(k)])) mod.shown.push_back(k);
    if (moduleMatches || !mod.shown.empty()) shownModules_.push_back(m);
    if (sortColumn_ >= 0) {
      auto cmp = [this](int a, int b) {
        const Row &x = objects_[size_t(a)], &y = objects_[size_t(b)];
        return sortOrder_ == Qt::AscendingOrder ? less(x, y) : less(y, x);
      };
      std::stable_sort(mod.shown.begin(), mod.shown.end(), cmp);
    }
  }
  if (sortColumn_ >= 0)
    std::stable_sort(shownModules_.begin(), shownModules_.end(), [this](int a, int b) {
      const Row &x = modules_[size_t(a)].row, &y = modules_[size_t(b)].row;
      return sortOrder_ == Qt::AscendingOrder ? less(x, y) : less(y, x);
    });
  for (Module &mod : modules_) mod.at = -1;
  for (int i = 0; i < int(shownModules_.size()); ++i) modules_[size_t(shownModules_[size_t(i)])].at = i;
}

void SyncTree::relayout(bool reset) {
  if (reset) {
    order();
    return;
  }
  emit layoutAboutToBeChanged();
  // Where each persistent index (the selection, the current row) points: by
  // module and object id, so it follows its row to its new place.
  const QModelIndexList before = persistentIndexList();
  // By index into objects_ (-1: a module row, -2: none); the view holds a
  // persistent index per laid-out row, thousands of them.
  struct Where {
    int module;
    int object;
    int column;
  };
  std::vector<Where> where;
  where.reserve(size_t(before.size()));
  for (const QModelIndex &i : before) {
    if (!i.isValid()) {
      where.push_back({-1, -2, 0});
    } else if (i.internalId() == 0) {
      where.push_back({shownModules_[size_t(i.row())], -1, i.column()});
    } else {
      const int m = int(i.internalId() - 1);
      where.push_back({m, modules_[size_t(m)].shown[size_t(i.row())], i.column()});
    }
  }
  order();
  std::vector<int> rowOf(objects_.size(), -1);  // objects_ -> its new row
  for (const Module &mod : modules_)
    for (int r = 0; r < int(mod.shown.size()); ++r) rowOf[size_t(mod.shown[size_t(r)])] = r;
  QModelIndexList after;
  after.reserve(before.size());
  for (const Where &w : where) {
    QModelIndex to;
    if (w.object != -2 && modules_[size_t(w.module)].at >= 0) {
      if (w.object == -1)
        to = createIndex(modules_[size_t(w.module)].at, w.column, quintptr(0));
      else if (rowOf[size_t(w.object)] >= 0)
        to = createIndex(rowOf[size_t(w.object)], w.column, quintptr(w.module + 1));
    }
    after << to;
  }
  changePersistentIndexList(before, after);
  emit layoutChanged();
}

void SyncTree::setFilterText(const QString &text) {
  if (text == filter_) return;
  filter_ = text;
  relayout(false);
}

void SyncTree::sort(int column, Qt::SortOrder order) {
  sortColumn_ = column >= 0 && column < ColumnCount ? column : -1;
  sortOrder_ = order;
  relayout(false);
}

}  // namespace tmui
