// Threads: one stacked percentage bar per thread over the window (the
// ThreadMon paper's figure 2), the probe's own thread marked; threads pooled
// by start routine and name, a pool one row until clicked.
#ifndef THREADMON_UI_THREADSVIEW_H
#define THREADMON_UI_THREADSVIEW_H

#include "barchartview.h"

namespace tmui {

class ThreadsView : public BarChartView {
  Q_OBJECT
 public:
  ThreadsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
};

}  // namespace tmui

#endif
