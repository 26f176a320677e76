#include "captureloader.h"

#include <QThread>

#include "sessionmodel.h"
#include "sessionview.h"

CaptureLoader::CaptureLoader(const QString &path, double atSeconds, QObject *parent)
    : QObject(parent),
      path_(path),
      overview_(OverviewBuild::of(path)),
      model_(new tmon::SessionModel) {
  // The model stays on this thread; the reader only fills it, timers off.
  model_->setFilledOffThread(true);
  tmon::SessionModel *model = model_.get();
  if (overview_) known_ = overview_->identity();
  const tmon::CaptureIdentity *known = overview_ ? &known_ : nullptr;
  thread_ = QThread::create([this, path, atSeconds, model, known] {
    read_ = readCapture(path, atSeconds, model, known, &stop_);
  });
  thread_->setObjectName(QStringLiteral("capture reader"));
  connect(thread_, &QThread::finished, this, &CaptureLoader::onThreadFinished);
  thread_->start();
}

CaptureLoader::~CaptureLoader() {
  if (thread_) {
    thread_->wait();
    delete thread_;
  }
}

bool CaptureLoader::running() const { return thread_ && thread_->isRunning(); }

void CaptureLoader::abandon() {
  abandoned_ = true;
  stop_ = true;
  if (!running()) deleteLater();
}

void CaptureLoader::onThreadFinished() {
  delete thread_;
  thread_ = nullptr;
  if (!abandoned_) {
    model_->setFilledOffThread(false);
    QString error;
    tmui::SessionView *page = pageForCapture(path_, model_.release(), read_, &error);
    emit finished(page, error);
  }
  deleteLater();
}
