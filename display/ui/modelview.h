// Base of the session views: redraws from the model when the data or the
// window change, but only while visible (hidden tabs catch up when shown).
// A show only schedules the catch-up: when a page first shows, every docked
// view gets a show event before the dock layout hides the tabs behind the
// raised ones, and those must not rebuild (the sync objects and the matrix
// of thousands of threads once froze the window that way). A docked view
// behind another tab stays "visible" to Qt: the page says when its tab is
// raised (setTabRaised), and a view behind a tab waits like a hidden one.
#ifndef THREADMON_UI_MODELVIEW_H
#define THREADMON_UI_MODELVIEW_H

#include <QWidget>

namespace tmon {
class SessionModel;
}

namespace tmui {

class ViewWindow;

class ModelView : public QWidget {
  Q_OBJECT
 public:
  ModelView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  // Rebuilds now, visible or not (tests, screenshots).
  void refreshNow();
  // Rows currently shown (threads, LWPs, CPUs, objects, series).
  virtual int rowCount() const = 0;
  // How long the last rebuild took (tests, benchmarks); 0 before the first.
  double lastRebuildMs() const { return lastRebuildMs_; }
  // Its dock's tab is raised (QDockWidget::visibilityChanged); ignored when
  // the view is not in a dock.
  void setTabRaised(bool raised);
  // On screen: visible, and not behind another tab.
  bool showing() const;

 protected:
  virtual void rebuild() = 0;
  void showEvent(QShowEvent *event) override;
  tmon::SessionModel *model() const { return model_; }
  ViewWindow *window() const { return window_; }

 private:
  void refreshIfVisible();
  void scheduleCatchUp();
  tmon::SessionModel *model_;
  ViewWindow *window_;
  bool dirty_ = true;
  bool catchUpPending_ = false;
  bool tabRaised_ = true;
  double lastRebuildMs_ = 0;
};

}  // namespace tmui

#endif
