// ExportOutput: where an export's bytes go. A new file is created
// exclusively (O_EXCL | O_NOFOLLOW: never through a link another user
// planted, never over a file without being asked), or standard output for
// "-"; optionally gzip-framed through zlib (pprof's profiles are gzip'd
// protobuf; qCompress is zlib framing, which pprof refuses). Buffered, so
// the sinks can write an event at a time.
#ifndef THREADMON_EXPORTOUTPUT_H
#define THREADMON_EXPORTOUTPUT_H

#include <QByteArray>
#include <QString>
#include <memory>
#include <string>

namespace tmon {

class ExportOutput {
 public:
  ExportOutput();
  ~ExportOutput();
  ExportOutput(const ExportOutput &) = delete;
  ExportOutput &operator=(const ExportOutput &) = delete;

  // replace: an existing file is removed first (then created exclusively).
  bool open(const QString &path, bool gzip, bool replace);
  // Into memory (tests, the display's preview); data() after close().
  void openBuffer(bool gzip);
  void write(const char *data, qsizetype n) {
    bytesIn_ += uint64_t(n);
    pending_.append(data, size_t(n));
    if (pending_.size() >= kFlushAt) flush(false);
  }
  void write(const QByteArray &b) { write(b.constData(), b.size()); }
  // Flushes and closes; false with error() when any write failed.
  bool close();
  QString error() const { return error_; }
  const QByteArray &buffer() const { return memory_; }
  uint64_t bytesIn() const { return bytesIn_; }

 private:
  static constexpr size_t kFlushAt = 1 << 20;
  void startDeflate();
  void flush(bool finish);
  void sink(const char *data, size_t n);
  int fd_ = -1;
  bool toMemory_ = false;
  bool ownFd_ = false;
  QString path_;
  QString error_;
  // std::string: its append is a memcpy and clear() keeps the capacity;
  // QByteArray's append was a fifth of the Chrome export's time.
  std::string pending_;
  QByteArray memory_;
  uint64_t bytesIn_ = 0;
  struct Deflate;
  std::unique_ptr<Deflate> z_;
};

}  // namespace tmon

#endif
