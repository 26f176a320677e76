// CPUs: how each CPU spent the window (/proc/stat categories) and which of
// the program's threads ran on it (the ThreadMon paper's figure 7).
#ifndef THREADMON_UI_CPUSVIEW_H
#define THREADMON_UI_CPUSVIEW_H

#include "barchartview.h"

namespace tmui {

class CpusView : public BarChartView {
  Q_OBJECT
 public:
  CpusView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
};

}  // namespace tmui

#endif
