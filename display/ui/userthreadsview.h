// User threads (M:N): one stacked percentage bar per user thread over the
// window (the ThreadMon paper's figure 2 for user threads): while on an
// LWP, that LWP's state; dispatchable when switched out; beside each bar,
// the LWPs it ran on and for how long (the user thread -> LWP mapping).
#ifndef THREADMON_UI_USERTHREADSVIEW_H
#define THREADMON_UI_USERTHREADSVIEW_H

#include "modelview.h"

namespace tmui {

class StackedBarChart;

class UserThreadsView : public ModelView {
  Q_OBJECT
 public:
  UserThreadsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  int rowCount() const override;

 protected:
  void rebuild() override;

 private:
  StackedBarChart *chart_;
};

}  // namespace tmui

#endif
