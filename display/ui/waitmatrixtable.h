// A small heat table of who blocked whom: rows are waiting threads, columns
// the threads they waited for (the owner when the wait began, or the
// releaser for conds, semaphores and barriers), cells the wait time.
#ifndef THREADMON_UI_WAITMATRIXTABLE_H
#define THREADMON_UI_WAITMATRIXTABLE_H

#include <QTableWidget>
#include <vector>

#include "modeltypes.h"

namespace tmon {
class SessionModel;
}

namespace tmui {

class WaitMatrixTable : public QTableWidget {
 public:
  explicit WaitMatrixTable(QWidget *parent = nullptr);
  void setPairs(const tmon::SessionModel &model, const std::vector<tmon::WaitPair> &pairs);
  // Cells with any wait or count.
  int cellCount() const { return cells_; }

 private:
  int cells_ = 0;
};

}  // namespace tmui

#endif
