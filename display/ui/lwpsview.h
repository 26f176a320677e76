// LWPs: kernel microstates of each kernel thread over the window (the
// ThreadMon paper's figure 3): user, system, run-queue wait, sleep, with
// faults and context switches beside each bar; pooled as the threads.
#ifndef THREADMON_UI_LWPSVIEW_H
#define THREADMON_UI_LWPSVIEW_H

#include "barchartview.h"

namespace tmui {

class LwpsView : public BarChartView {
  Q_OBJECT
 public:
  LwpsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
};

}  // namespace tmui

#endif
