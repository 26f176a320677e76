#include "modelview.h"

#include <QDockWidget>
#include <QElapsedTimer>
#include <QTimer>

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
  QElapsedTimer t;
  t.start();
  rebuild();
  lastRebuildMs_ = double(t.nsecsElapsed()) / 1e6;
}

ModelView::~ModelView() { finishBackgroundWork(); }

bool ModelView::large() const {
  return model_->threadCount() > 256 || model_->syncObjectCount() > 2048;
}

void ModelView::workerDone(uint64_t) {
  worker_->wait();
  delete worker_;
  worker_ = nullptr;
  model_->endBackgroundRead();
}

void ModelView::holdModel() { model_->beginBackgroundRead(); }

void ModelView::finishBackgroundWork() {
  if (!worker_) return;
  ++workerSerial_;  // its queued "finished" is dropped
  workerDone(workerSerial_);
  again_ = false;
}

void ModelView::setTabRaised(bool raised) {
  tabRaised_ = raised;
  if (raised && dirty_) scheduleCatchUp();
}

bool ModelView::showing() const {
  return isVisible() && (tabRaised_ || !qobject_cast<const QDockWidget *>(parentWidget()));
}

void ModelView::refreshIfVisible() {
  if (showing())
    refreshNow();
  else
    dirty_ = true;
}

void ModelView::showEvent(QShowEvent *event) {
  QWidget::showEvent(event);
  if (dirty_) scheduleCatchUp();
}

void ModelView::scheduleCatchUp() {
  if (catchUpPending_) return;
  catchUpPending_ = true;
  QTimer::singleShot(0, this, [this] {
    catchUpPending_ = false;
    if (dirty_ && showing()) refreshNow();
  });
}

}  // namespace tmui
