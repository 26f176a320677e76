// Keeps every byte of a live stream in a temporary file so that "Record"
// can save the session from its first byte, then keeps the saved file
// growing while the session lasts.
#ifndef THREADMON_NET_STREAMSPOOL_H
#define THREADMON_NET_STREAMSPOOL_H

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QTemporaryFile>
#include <memory>

namespace tmnet {

class StreamSpool {
 public:
  StreamSpool();
  void append(const QByteArray &bytes);
  qint64 size() const { return size_; }
  // Copies everything so far to `path` and appends what follows there too.
  // Returns "" or one line saying what failed.
  QString startRecording(const QString &path);
  void stopRecording();
  // Keeps nothing from now on, and removes what was kept (a session whose
  // flight recorder keeps its last window instead).
  void discard();
  bool recording() const { return record_ != nullptr; }
  QString recordingPath() const { return record_ ? record_->fileName() : QString(); }

 private:
  QTemporaryFile temp_;
  bool tempOk_ = false;
  bool discarded_ = false;
  qint64 size_ = 0;
  std::unique_ptr<QFile> record_;
};

}  // namespace tmnet

#endif
