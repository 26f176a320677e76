// Reads a capture on a thread of its own, so that opening a long one, or
// seeking in it, never freezes the window (reading a 10 s window of 100
// busy threads takes about 0.4 s of CPU, a 60 MB capture several seconds).
// finished() comes on the GUI thread with the page, or nullptr and the one
// line saying why nothing could be read.
#ifndef THREADMON_APP_CAPTURELOADER_H
#define THREADMON_APP_CAPTURELOADER_H

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

#include "captureopen.h"

class QThread;
namespace tmon {
class SessionModel;
}

class CaptureLoader : public QObject {
  Q_OBJECT
 public:
  CaptureLoader(const QString &path, double atSeconds, QObject *parent = nullptr);
  // Waits for the read: the thread must not outlive the model it fills.
  ~CaptureLoader() override;

  QString path() const { return path_; }
  bool running() const;
  // No finished() any more; the read of a long capture stops early (so a
  // newer seek does not share the cores with it) and the loader deletes
  // itself once it has.
  void abandon();

 signals:
  // page: owned by the receiver. Emitted once, then the loader deletes itself.
  void finished(tmui::SessionView *page, const QString &error);

 private:
  void onThreadFinished();

  QString path_;
  // The overview open for this capture (a seek's), alive until the page
  // takes it over, so that the read skips its summary.
  std::shared_ptr<OverviewBuild> overview_;
  tmon::CaptureIdentity known_;
  std::unique_ptr<tmon::SessionModel> model_;
  CaptureRead read_;
  QThread *thread_ = nullptr;
  bool abandoned_ = false;
  std::atomic<bool> stop_{false};  // abandoned: the read ends at its next chunk
};

#endif
