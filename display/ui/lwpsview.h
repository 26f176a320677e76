// LWPs: kernel microstates of each kernel thread over the window (the
// ThreadMon paper's figure 3): user, system, run-queue wait, sleep, with
// faults and context switches beside each bar.
#ifndef THREADMON_UI_LWPSVIEW_H
#define THREADMON_UI_LWPSVIEW_H

#include "modelview.h"

namespace tmui {

class StackedBarChart;

class LwpsView : public ModelView {
  Q_OBJECT
 public:
  LwpsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  int rowCount() const override;

 protected:
  void rebuild() override;

 private:
  StackedBarChart *chart_;
};

}  // namespace tmui

#endif
