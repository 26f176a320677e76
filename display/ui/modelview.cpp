#include "modelview.h"

#include <QDockWidget>
#include <QElapsedTimer>
#include <QTimer>
#include <ctime>

#include "sessionmodel.h"
#include "viewwindow.h"

namespace tmui {

ModelView::ModelView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : QWidget(parent), model_(model), window_(window), throttle_(new QTimer(this)) {
  throttle_->setSingleShot(true);
  connect(throttle_, &QTimer::timeout, this, &ModelView::refreshIfVisible);
  connect(model_, &tmon::SessionModel::changed, this, &ModelView::onModelChanged);
  connect(window_, &ViewWindow::changed, this, &ModelView::refreshIfVisible);
}

qint64 ModelView::threadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void ModelView::onModelChanged() {
  if (!showing() || worker_) {
    dirty_ = true;  // caught up when shown, or once the worker's result is
    return;
  }
  const qint64 wait =
      kCostFactor * lastCostNs_ - (sinceRefresh_.isValid() ? sinceRefresh_.nsecsElapsed() : 0);
  if (wait <= 0) {
    refreshNow();
  } else {
    dirty_ = true;
    if (!throttle_->isActive()) throttle_->start(int(wait / 1000000) + 1);
  }
}

void ModelView::refreshNow() {
  dirty_ = false;
  throttle_->stop();
  sinceRefresh_.start();
  QElapsedTimer t;
  t.start();
  const qint64 cpu0 = threadCpuNs();
  const uint64_t frames = framesNow();
  rebuild();
  lastRebuildMs_ = double(t.nsecsElapsed()) / 1e6;
  if (worker_) return;  // presented when its worker is done
  lastCostNs_ = threadCpuNs() - cpu0;
  shownFrames_ = frames;
  emit presented();
}

uint64_t ModelView::framesNow() const {
  return model_->framesApplied();
}

ModelView::~ModelView() { finishBackgroundWork(); }

bool ModelView::large() const {
  // Or many records: a 10 s window of 100 busy threads (82 MB) costs the
  // GUI thread of a new page 60 ms of findings, on every seek.
  constexpr size_t kLargeModelBytes = 32 << 20;
  return model_->threadCount() > 256 || model_->syncObjectCount() > 2048 ||
         model_->memoryBytes() > kLargeModelBytes;
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

void ModelView::catchUp() {
  if (dirty_ && showing()) refreshNow();
}

void ModelView::takeAhead(std::any result) {
  ahead_ = std::move(result);
  catchUp();
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
