// The sync view's details pane for the selected object: where it was
// contended (call sites with contentions and wait) and who blocked whom on
// it (a waiter x holder heat table), or for a hidden lock the threads seen
// waiting on it.
#ifndef THREADMON_UI_SYNCDETAILS_H
#define THREADMON_UI_SYNCDETAILS_H

#include <QWidget>

#include "modeltypes.h"

class QLabel;
class QTableWidget;

namespace tmon {
class SessionModel;
}

namespace tmui {

class WaitMatrixTable;

class SyncDetails : public QWidget {
 public:
  explicit SyncDetails(QWidget *parent = nullptr);
  // Shows object `id` over r (0: nothing selected).
  void showObject(const tmon::SessionModel &model, uint32_t id, const tmon::TimeRange &r);
  uint32_t object() const { return id_; }
  int callSiteRows() const;
  int matrixCells() const;
  int waiterRows() const;  // hidden locks: threads seen waiting

 private:
  void showNothing();
  uint32_t id_ = 0;
  QLabel *title_;
  QLabel *sitesLabel_;
  QTableWidget *sites_;
  QLabel *matrixLabel_;
  WaitMatrixTable *matrix_;
  QTableWidget *waiters_;
};

}  // namespace tmui

#endif
