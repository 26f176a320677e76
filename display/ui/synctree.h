// The item model behind the sync objects view: modules as parent rows, the
// objects found in each as children, with window statistics. Updated in
// place so selection and scrolling survive live refreshes.
//
// A plain item model over arrays, not QStandardItems, that sorts and
// filters itself: a refresh of 10,000 objects sets no item one by one and
// goes through no QSortFilterProxyModel (whose per-row bookkeeping of a
// dataChanged over thousands of rows took 200 ms); it re-sorts once and
// says so with one layoutChanged. Texts are formatted on the worker thread
// that collects the rows, so data() only looks them up.
#ifndef THREADMON_UI_SYNCTREE_H
#define THREADMON_UI_SYNCTREE_H

#include <QAbstractItemModel>
#include <QHash>
#include <array>
#include <vector>

#include "modeltypes.h"

namespace tmon {
class SessionModel;
}

namespace tmui {

class SyncTree : public QAbstractItemModel {
  Q_OBJECT
 public:
  // What a user looks for first (the wait) next to the name; the call site,
  // long and often empty, last.
  enum Column { Object, Kind, Wait, MaxWait, Contentions, ContendedPct, Hold, Acquisitions,
                CallSite, ColumnCount };
  static constexpr int kSortRole = Qt::UserRole;       // raw numbers for sorting
  static constexpr int kObjectIdRole = Qt::UserRole + 1;  // 0 on module rows

  // The parent rows: the module an object is in, or the program's own
  // call site of it over the whole run (SessionModel::objectCallSite: its
  // first contention's when known; steadier than the window's busiest, so
  // objects rarely move between parents).
  enum class Grouping { Module, CallSite };

  // One object's row over a window, as read from the model.
  struct ObjectRow {
    uint32_t id = 0;
    QString group;  // its parent row's key
    QString module, name, tip, kind, kindTip, site;
    bool hidden = false;
    bool sampled = false;  // seen only by sampling futex waits: no counts, max or hold
    bool uncounted = false;  // read from outside (attach): no acquisitions nor holds
    uint64_t acq = 0, cont = 0, wait = 0, maxWait = 0, hold = 0;
    std::array<QString, 6> numbers;  // acquisitions, contentions, %, wait, max wait, hold
  };
  explicit SyncTree(QObject *parent = nullptr);
  // Reads every object's row (pure: a worker thread may run it).
  static std::vector<ObjectRow> collect(const tmon::SessionModel &model, const tmon::TimeRange &r,
                                        Grouping grouping = Grouping::Module);
  // Shows them: new objects inserted, changed rows signalled once per
  // parent; true when that reset the model (new rows, or an object moved).
  bool apply(std::vector<ObjectRow> &&objects);
  void update(const tmon::SessionModel &model, const tmon::TimeRange &r) {
    apply(collect(model, r, grouping_));
  }
  Grouping grouping() const { return grouping_; }
  // Empties the tree for rows collected with `grouping`.
  void setGrouping(Grouping grouping);
  int objectRows() const { return int(objects_.size()); }

  // Rows whose texts (any column), or whose module's, contain text.
  void setFilterText(const QString &text);
  void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

  QModelIndex index(int row, int column, const QModelIndex &parent = QModelIndex()) const override;
  QModelIndex parent(const QModelIndex &child) const override;
  int rowCount(const QModelIndex &parent = QModelIndex()) const override;
  int columnCount(const QModelIndex &parent = QModelIndex()) const override;
  QVariant data(const QModelIndex &index, int role) const override;
  // Objects never have children: without the flag QTreeView::expandAll()
  // records every row as expanded, a persistent index each (10,000 of them
  // to move on every re-sort).
  Qt::ItemFlags flags(const QModelIndex &index) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  struct Row {
    std::array<QString, ColumnCount> text;
    std::array<QVariant, ColumnCount> sort;
    QString tip, kindTip;
    uint32_t id = 0;  // 0: a module row
    bool hidden = false;
  };
  struct Module {
    QString key;
    Row row;
    std::vector<int> objects;  // into objects_, in the order they were found
    std::vector<int> shown;    // of those, the ones the filter keeps, sorted
    int at = -1;               // its row among the shown modules (-1: filtered out)
  };
  const Row *rowAt(const QModelIndex &index) const;
  bool less(const Row &a, const Row &b) const;
  bool matches(const Row &row) const;
  // Recomputes what is shown and its order; with persistent indexes (the
  // selection) moved along unless the model is being reset.
  void relayout(bool reset);
  void order();

  std::vector<Module> modules_;
  std::vector<Row> objects_;
  QHash<QString, int> moduleIndex_;
  QHash<uint32_t, int> objectIndex_;  // object id -> objects_
  std::vector<int> moduleOf_;         // objects_ -> modules_
  std::vector<int> shownModules_;     // into modules_, sorted
  int sortColumn_ = -1;
  Qt::SortOrder sortOrder_ = Qt::AscendingOrder;
  QString filter_;
  Grouping grouping_ = Grouping::Module;
  void clear();  // no signals: inside a reset
};

}  // namespace tmui

#endif
