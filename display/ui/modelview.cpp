#include "modelview.h"

#include "sessionmodel.h"
#include "viewwindow.h"

namespace tmui {

ModelView::ModelView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : QWidget(parent), model_(model), window_(window) {
  connect(model_, &tmon::SessionModel::changed, this, &ModelView::refreshIfVisible);
  connect(window_, &ViewWindow::changed, this, &ModelView::refreshIfVisible);
}

void ModelView::refreshNow() {
  dirty_ = false;
  rebuild();
}

void ModelView::refreshIfVisible() {
  if (isVisible())
    refreshNow();
  else
    dirty_ = true;
}

void ModelView::showEvent(QShowEvent *event) {
  QWidget::showEvent(event);
  if (dirty_) refreshNow();
}

}  // namespace tmui
