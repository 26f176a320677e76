// The red banner on a session page while a deadlock holds at "now": names
// the threads, the objects and their call sites, with a Show button. It
// hides itself when the cycle resolves (or the replay is before it).
#ifndef THREADMON_UI_DEADLOCKBANNER_H
#define THREADMON_UI_DEADLOCKBANNER_H

#include <QFrame>

#include "modeltypes.h"

class QLabel;

namespace tmon {
class SessionModel;
}

namespace tmui {

class DeadlockBanner : public QFrame {
  Q_OBJECT
 public:
  explicit DeadlockBanner(QWidget *parent = nullptr);
  // Shows the first deadlock that holds at `now`; hides when none does.
  void update(const tmon::SessionModel &model, int64_t now);
  QString text() const;
  const tmon::Deadlock &deadlock() const { return shown_; }
  // Same as pressing Show.
  void activate();

  // "worker-1 (12) waits for lock_a (mutex_loop!worker), held by worker-2 (13); ..."
  static QString describe(const tmon::SessionModel &model, const tmon::Deadlock &d);

 signals:
  void showRequested(const tmon::Deadlock &deadlock);

 private:
  QLabel *label_;
  tmon::Deadlock shown_;
};

}  // namespace tmui

#endif
