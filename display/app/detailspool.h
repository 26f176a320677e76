// DetailSpool: a live session's frames as a capture (format 2: zstd blocks)
// in a temporary file, so that the detail its model lets go after
// LiveSession::kDetailNs (SessionModel::keepDetailFor) can be read back for
// any window (CaptureWindow, by one scan: the spool has no index until it
// is closed). Written on the connection's decoder thread, read on the GUI
// thread; a mutex keeps the two apart only while the reader flushes and
// opens it.
#ifndef THREADMON_APP_DETAILSPOOL_H
#define THREADMON_APP_DETAILSPOOL_H

#include <QString>
#include <QTemporaryFile>
#include <cstdint>
#include <memory>
#include <mutex>

#include "capturereader.h"
#include "capturewindow.h"
#include "capturewriter.h"

namespace tmon {
class SessionModel;
}

class DetailSpool {
 public:
  DetailSpool();
  // "" when the spool is being written, else why not (no temporary file).
  QString error() const { return error_; }
  // Where readers open it (/proc/self/fd/N: the file has no name).
  QString path() const { return path_; }
  // One checked frame (the decoder thread).
  void take(const uint8_t *payload, uint32_t len);
  // Loads [t0, t1] into model, which should be fresh (CaptureWindow::load).
  tmon::CaptureLoadResult load(int64_t t0, int64_t t1, tmon::SessionModel *model);
  uint64_t bytesWritten();
  // Record session: a capture at path with the session so far (the
  // spool's blocks as they are) and what follows, closed with its index
  // at stopRecording() or the end: $TMPDIR holds no second copy of the
  // stream. "" or one line saying what failed.
  QString startRecording(const QString &path);
  void stopRecording();
  bool recording();
  QString recordingPath();
  // Writes the frames gathered so far as a block (a recording's file then
  // holds them should the display die).
  void flush();

 private:
  QTemporaryFile temp_;
  QString path_;
  QString error_;
  std::mutex mutex_;
  tmon::CaptureWriter writer_;  // guarded by mutex_
  // Reopened only when a window reaches past what it indexed; views'
  // worker threads load from it (loadMutex_).
  std::mutex loadMutex_;
  std::unique_ptr<tmon::CaptureWindow> window_;
};

#endif
