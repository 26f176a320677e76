// One session's page: the window selector, a live status line or the
// replay controls, a notice banner, and the views (timeline in the middle,
// the others docked around it).
#ifndef THREADMON_UI_SESSIONVIEW_H
#define THREADMON_UI_SESSIONVIEW_H

#include <QMainWindow>
#include <QPointer>
#include <any>
#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "findings.h"
#include "views.h"

class QComboBox;
class QLabel;

namespace tmon {
class RunSummary;
class SessionModel;
}

namespace tmui {

class DeadlockBanner;
class FindingsView;
class ModelView;
class ReplayControls;
class SyncView;
class TimelineView;
class ViewWindow;
class WholeRunStrip;

using tmon::kViewCount;
using tmon::parseViewKind;
using tmon::ViewKind;
using tmon::viewKindName;

class SessionView : public QMainWindow {
  Q_OBJECT
 public:
  enum class Source { Live, Replay };

  // Takes ownership of model.
  SessionView(tmon::SessionModel *model, Source source, QWidget *parent = nullptr);
  // The same widgets, made while another thread still fills model: nothing
  // here reads it (its signals must be blocked until then: a slot would).
  // modelFilled() reads it once it is filled, as the constructor above does.
  struct BeforeFilled {};
  SessionView(tmon::SessionModel *model, Source source, BeforeFilled);
  void modelFilled();
  ~SessionView() override;

  tmon::SessionModel *model() const { return model_; }
  ViewWindow *viewWindow() const { return window_; }
  // Null once taken out of the page and deleted (screenshots, tests).
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
  // Results computed ahead for its views (ModelView::ahead), each given to
  // the view of its kind: those on screen show theirs at once.
  void takeAhead(std::vector<std::pair<ViewKind, std::any>> computed);
  // A finding's Show: switches to its view and selects its object and span.
  void showFinding(const tmon::Finding &finding);
  void showDeadlock(const tmon::Deadlock &deadlock);
  // A warning line above the views (damaged capture, closed connection).
  void setNotice(const QString &text);
  QString notice() const;
  // The whole run above the views (a long capture of which they show the
  // window): drawn from its summary (the strip returned, for a summary
  // still being built).
  WholeRunStrip *setWholeRun(std::shared_ptr<const tmon::RunSummary> summary,
                             tmon::TimeRange window);
  // Where the window shown ends, in seconds from the capture's start, as
  // seekRequested asks for it; -1 when the page shows the whole capture.
  double shownEndSeconds() const { return shownEndS_; }
  // The live status line (connection state, frames per second, drops).
  void setStatus(const QString &text);
  QString title() const;

 signals:
  void titleChanged();
  // A click on the whole-run strip: show the capture's window ending
  // endSeconds after its start.
  void seekRequested(double endSeconds);

 private:
  void addViews();
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
  // Every view of views.def, by ViewKind; three of them the page talks to.
  std::array<QPointer<ModelView>, kViewCount> views_;
  TimelineView *timeline_ = nullptr;
  SyncView *sync_ = nullptr;
  FindingsView *findings_ = nullptr;
  DeadlockBanner *deadlock_;
  QList<QDockWidget *> docks_;
  double shownEndS_ = -1;
};

}  // namespace tmui

#endif
