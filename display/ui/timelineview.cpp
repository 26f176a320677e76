#include "timelineview.h"

#include <QLabel>
#include <QVBoxLayout>

#include "statelegend.h"
#include "timelinecanvas.h"

namespace tmui {

TimelineView::TimelineView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent), canvas_(new TimelineCanvas(model, window, this)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(new StateLegend(this));
  layout->addWidget(canvas_, 1);
  auto *hint = new QLabel(tr("Drag: select a window · Ctrl+wheel or +/−: zoom · "
                             "Shift+drag, Shift+wheel or ←/→: pan · 0: follow the window · "
                             "hover: state, object and duration"),
                          this);
  hint->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(hint);
}

int TimelineView::rowCount() const { return canvas_->rowCount(); }

void TimelineView::rebuild() { canvas_->refresh(); }

}  // namespace tmui
