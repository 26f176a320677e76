// CaptureWriter: records a session as a .tmcap file: the stream header, then
// the frames exactly as received (re-prefixed with length and CRC-32C).
#ifndef THREADMON_CAPTUREWRITER_H
#define THREADMON_CAPTUREWRITER_H

#include <QFile>
#include <QString>

#include <cstdint>

#include "threadmon.pb-c.h"

namespace tmon {

class CaptureWriter {
 public:
  // Creates/truncates path and writes the header; false with error() set.
  bool open(const QString &path);
  bool writeFrame(const uint8_t *payload, uint32_t len);
  bool writeFrame(const Threadmon__Frame &frame);
  bool close();
  bool isOpen() const { return file_.isOpen(); }
  QString error() const { return error_; }
  uint64_t framesWritten() const { return frames_; }

 private:
  bool fail(const QString &what);
  QFile file_;
  QString error_;
  uint64_t frames_ = 0;
};

}  // namespace tmon

#endif
