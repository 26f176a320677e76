// The item model behind the sync objects view: modules as parent rows, the
// objects found in each as children, with window statistics. Updated in
// place so selection and scrolling survive live refreshes.
//
// A plain item model over arrays, not QStandardItems: a refresh of 10,000
// objects sets no item one by one (each setData of a QStandardItem signals
// the sort proxy and the view); it says once per module which rows changed.
// Texts are formatted once per refresh, so data() only looks them up.
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
  enum Column { Object, Kind, CallSite, Acquisitions, Contentions, ContendedPct, Wait, MaxWait,
                Hold, ColumnCount };
  static constexpr int kSortRole = Qt::UserRole;       // raw numbers for sorting
  static constexpr int kObjectIdRole = Qt::UserRole + 1;  // 0 on module rows

  explicit SyncTree(QObject *parent = nullptr);
  void update(const tmon::SessionModel &model, const tmon::TimeRange &r);
  int objectRows() const { return int(objects_.size()); }

  QModelIndex index(int row, int column, const QModelIndex &parent = QModelIndex()) const override;
  QModelIndex parent(const QModelIndex &child) const override;
  int rowCount(const QModelIndex &parent = QModelIndex()) const override;
  int columnCount(const QModelIndex &parent = QModelIndex()) const override;
  QVariant data(const QModelIndex &index, int role) const override;
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
  };
  const Row *rowAt(const QModelIndex &index) const;

  std::vector<Module> modules_;
  std::vector<Row> objects_;
  QHash<QString, int> moduleIndex_;
  QHash<uint32_t, int> objectIndex_;  // object id -> objects_
  std::vector<int> moduleOf_;         // objects_ -> modules_
};

}  // namespace tmui

#endif
