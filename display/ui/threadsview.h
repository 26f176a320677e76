// Threads: one stacked percentage bar per thread over the window (the
// ThreadMon paper's figure 2), the probe's own thread marked.
#ifndef THREADMON_UI_THREADSVIEW_H
#define THREADMON_UI_THREADSVIEW_H

#include "modelview.h"

namespace tmui {

class StackedBarChart;

class ThreadsView : public ModelView {
  Q_OBJECT
 public:
  ThreadsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  int rowCount() const override;

 protected:
  void rebuild() override;

 private:
  StackedBarChart *chart_;
};

}  // namespace tmui

#endif
