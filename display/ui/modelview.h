// Base of the session views: redraws from the model when the data or the
// window change, but only while visible (hidden tabs catch up when shown).
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

 protected:
  virtual void rebuild() = 0;
  void showEvent(QShowEvent *event) override;
  tmon::SessionModel *model() const { return model_; }
  ViewWindow *window() const { return window_; }

 private:
  void refreshIfVisible();
  tmon::SessionModel *model_;
  ViewWindow *window_;
  bool dirty_ = true;
};

}  // namespace tmui

#endif
