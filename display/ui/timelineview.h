// Timeline: the state strips (TimelineCanvas) with their legend and a line
// saying how to zoom, pan and select.
#ifndef THREADMON_UI_TIMELINEVIEW_H
#define THREADMON_UI_TIMELINEVIEW_H

#include "modelview.h"

namespace tmui {

class TimelineCanvas;

class TimelineView : public ModelView {
  Q_OBJECT
 public:
  TimelineView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  int rowCount() const override;
  TimelineCanvas *canvas() const { return canvas_; }

 protected:
  void rebuild() override;

 private:
  TimelineCanvas *canvas_;
};

}  // namespace tmui

#endif
