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

#include <QStringList>
#include <QTableView>
#include <functional>
#include <vector>

#include "modeltypes.h"

namespace tmon {
class SessionModel;
}

namespace tmui {

class WaitMatrixModel;

// Threads shown on their own per side; the rest are summed as "others".
constexpr int kMatrixMaxThreads = 40;

// The pairs folded to at most kMatrixMaxThreads + 1 rows and columns. Pure:
// computed on a worker thread when there are many.
//
// Holder 0 is nobody known: a wait still open at the range's end (a thread
// idle on a condition, waiting for work), one that timed out, or on holders
// the probe does not name (a rwlock's readers). Idle threads' waits are the longest of most servers
// (memcached's housekeepers: 10 s each in 10 s, beside its workers' 50-80 ms
// on each other), so they get a column of their own, last, outside the
// heat's scale, and rows rank by the waits someone is known to have caused.
struct BoundedMatrix {
  struct Cell {
    uint64_t waitNs = 0, count = 0;
  };
  std::vector<uint32_t> rowTids, colTids;  // the threads (or parties) with a row / column of their own
  QStringList rowNames, colNames;          // theirs, then the others'

  int otherRows = 0, otherCols = 0;        // summed into the last row / column
  int unknownCol = -1;                     // the waits of nobody known (the last column)
  int rows = 0, cols = 0;
  std::vector<Cell> cells;                 // rows x cols
  int pairs = 0;                           // waiter x holder pairs with any wait
};
// `name` names a waiter or holder id (a thread's tid, or a pool's party id).
BoundedMatrix boundMatrix(const std::vector<tmon::WaitPair> &pairs,
                          const std::function<QString(uint32_t)> &name);

class WaitMatrixTable : public QTableView {
  Q_OBJECT
 public:
  static constexpr int kMaxThreads = kMatrixMaxThreads;

  explicit WaitMatrixTable(QWidget *parent = nullptr);
  void setPairs(const tmon::SessionModel &model, const std::vector<tmon::WaitPair> &pairs);
  void setMatrix(BoundedMatrix &&matrix);
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
