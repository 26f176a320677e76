// One session's page: the window selector, a live status line or the
// replay controls, a notice banner, and the views (timeline in the middle,
// the others docked around it).
#ifndef THREADMON_UI_SESSIONVIEW_H
#define THREADMON_UI_SESSIONVIEW_H

#include <QMainWindow>
#include <QPointer>

#include "findings.h"

class QComboBox;
class QLabel;

namespace tmon {
class SessionModel;
}

namespace tmui {

class ChartsView;
class CpusView;
class DeadlockBanner;
class FindingsView;
class LwpsView;
class UserThreadsView;
class MappingView;
class MatrixView;
class ModelView;
class ReplayControls;
class SyncView;
class ThreadsView;
class TimelineView;
class ViewWindow;

enum class ViewKind { Threads, Lwps, Cpus, Timeline, Sync, Charts, Findings, Matrix, Users, Mapping };
// "threads", "lwps", ...; false when unknown.
bool parseViewKind(const QString &name, ViewKind *out);
QString viewKindName(ViewKind kind);

class SessionView : public QMainWindow {
  Q_OBJECT
 public:
  enum class Source { Live, Replay };

  // Takes ownership of model.
  SessionView(tmon::SessionModel *model, Source source, QWidget *parent = nullptr);
  ~SessionView() override;

  tmon::SessionModel *model() const { return model_; }
  ViewWindow *viewWindow() const { return window_; }
  ModelView *view(ViewKind kind) const;
  TimelineView *timeline() const { return timeline_; }
  SyncView *syncView() const { return sync_; }
  FindingsView *findingsView() const { return findings_; }
  DeadlockBanner *deadlockBanner() const { return deadlock_; }
  ReplayControls *replay() const { return replay_; }
  // Shows the view (raises its dock).
  void showView(ViewKind kind);
  // The view currently raised in the dock holding `kind` (tests).
  bool isViewRaised(ViewKind kind) const;
  // A finding's Show: switches to its view and selects its object and span.
  void showFinding(const tmon::Finding &finding);
  void showDeadlock(const tmon::Deadlock &deadlock);
  // A warning line above the views (damaged capture, closed connection).
  void setNotice(const QString &text);
  QString notice() const;
  // The live status line (connection state, frames per second, drops).
  void setStatus(const QString &text);
  QString title() const;

 signals:
  void titleChanged();

 private:
  QDockWidget *addViewDock(ModelView *view, const QString &title, Qt::DockWidgetArea area);
  void updateTitleAndBanner();
  void selectSpan(int64_t t0, int64_t t1);

  tmon::SessionModel *model_;
  ViewWindow *window_;
  Source source_;
  QComboBox *windowBox_;
  QLabel *windowLabel_;
  QLabel *status_ = nullptr;
  QLabel *banner_;
  // The banner holds the probe's notices or the input's damage, not the app's.
  bool showingSessionNotes_ = false;
  ReplayControls *replay_ = nullptr;
  ThreadsView *threads_;
  LwpsView *lwps_;
  UserThreadsView *users_;
  MappingView *mapping_;
  CpusView *cpus_;
  TimelineView *timeline_;
  SyncView *sync_;
  ChartsView *charts_;
  FindingsView *findings_;
  MatrixView *matrix_;
  DeadlockBanner *deadlock_;
  QList<QDockWidget *> docks_;
  QList<QPointer<ModelView>> views_;
};

}  // namespace tmui

#endif
