// The item model behind the sync objects view: modules as parent rows, the
// objects found in each as children, with window statistics. Updated in
// place so selection and scrolling survive live refreshes.
#ifndef THREADMON_UI_SYNCTREE_H
#define THREADMON_UI_SYNCTREE_H

#include <QHash>
#include <QStandardItemModel>

#include "modeltypes.h"

namespace tmon {
class SessionModel;
}

namespace tmui {

class SyncTree : public QStandardItemModel {
  Q_OBJECT
 public:
  enum Column { Object, Kind, CallSite, Acquisitions, Contentions, ContendedPct, Wait, MaxWait,
                Hold, ColumnCount };
  static constexpr int kSortRole = Qt::UserRole;       // raw numbers for sorting
  static constexpr int kObjectIdRole = Qt::UserRole + 1;  // 0 on module rows

  explicit SyncTree(QObject *parent = nullptr);
  void update(const tmon::SessionModel &model, const tmon::TimeRange &r);
  int objectRows() const { return int(objects_.size()); }

 private:
  QList<QStandardItem *> makeRow();
  QStandardItem *moduleRow(const QString &module);

  QHash<QString, QStandardItem *> modules_;
  QHash<uint32_t, QStandardItem *> objects_;  // first item of each object row
};

}  // namespace tmui

#endif
