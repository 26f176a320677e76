// CPUs: how each CPU spent the window (/proc/stat categories) and which of
// the program's threads ran on it (the ThreadMon paper's figure 7).
#ifndef THREADMON_UI_CPUSVIEW_H
#define THREADMON_UI_CPUSVIEW_H

#include "modelview.h"

namespace tmui {

class StackedBarChart;

class CpusView : public ModelView {
  Q_OBJECT
 public:
  CpusView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  int rowCount() const override;

 protected:
  void rebuild() override;

 private:
  StackedBarChart *chart_;
};

}  // namespace tmui

#endif
