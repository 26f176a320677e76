// A heat table of who blocked whom: rows are waiting threads, columns the
// threads they waited for (the owner when the wait began, or the releaser for
// conds, semaphores and barriers), cells the wait time.
//
// Bounded whatever the session holds: only the threads that waited most
// (rows) and were waited for most (columns) get a row or column of their own;
// the rest are summed into one "others" row and column, which the table says.
// An item model over the pairs, fixed section sizes: nothing is measured per
// cell (a QTableWidget of 2,000 x 2,000 threads never finished drawing).
#ifndef THREADMON_UI_WAITMATRIXTABLE_H
#define THREADMON_UI_WAITMATRIXTABLE_H

#include <QTableView>
#include <vector>

#include "modeltypes.h"

namespace tmon {
class SessionModel;
}

namespace tmui {

class WaitMatrixModel;

class WaitMatrixTable : public QTableView {
  Q_OBJECT
 public:
  // Threads shown on their own per side; the rest are summed as "others".
  static constexpr int kMaxThreads = 40;

  explicit WaitMatrixTable(QWidget *parent = nullptr);
  void setPairs(const tmon::SessionModel &model, const std::vector<tmon::WaitPair> &pairs);
  // Waiter x holder pairs with any wait or count (folded ones included).
  int cellCount() const { return cells_; }
  // Threads that waited / were waited for, all of them.
  int waiterCount() const;
  int holderCount() const;
  // Of those, how many were summed into the others row / column.
  int otherWaiters() const;
  int otherHolders() const;

 private:
  WaitMatrixModel *model_;
  int cells_ = 0;
};

}  // namespace tmui

#endif
