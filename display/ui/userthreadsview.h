// User threads (M:N): one stacked percentage bar per user thread over the
// window (the ThreadMon paper's figure 2 for user threads): while on an
// LWP, that LWP's state; dispatchable when switched out; beside each bar,
// the LWPs it ran on and for how long (the user thread -> LWP mapping);
// pooled by function.
#ifndef THREADMON_UI_USERTHREADSVIEW_H
#define THREADMON_UI_USERTHREADSVIEW_H

#include "barchartview.h"

namespace tmui {

class UserThreadsView : public BarChartView {
  Q_OBJECT
 public:
  UserThreadsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
};

}  // namespace tmui

#endif
