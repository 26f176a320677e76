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
#include <cstring>
#include <memory>

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
    char *at = reserve(size_t(n));
    if (n > 0) std::memcpy(at, data, size_t(n));
    commit(at + n);
  }
  // Room for n more bytes at the end of the pending output: a writer
  // formats an event there and commits up to where it ended, with no copy
  // of its own (the events' copies were a tenth of a trace export).
  char *reserve(size_t n) {
    if (size_ + n > capacity_) grow(n);
    return pending_.get() + size_;
  }
  void commit(char *end) {
    const size_t n = size_t(end - (pending_.get() + size_));
    bytesIn_ += n;
    size_ += n;
    if (size_ >= kFlushAt) flush(false);
  }
  void write(const QByteArray &b) { write(b.constData(), b.size()); }
  // Flushes and closes; false with error() when any write failed.
  bool close();
  // An export that failed: closes and removes the file open() created, and
  // nothing else (a sink it wrote into, /dev/null or a pipe, stays: root's
  // failed export to /dev/null removed the device, and the next redirect
  // made a plain file of it).
  void discard();
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
  bool created_ = false;  // open() made the file at path_
  QString path_;
  QString error_;
  void grow(size_t n);
  // A plain buffer kept across flushes: QByteArray's append was a fifth of
  // the Chrome export's time.
  std::unique_ptr<char[]> pending_;
  size_t size_ = 0, capacity_ = 0;
  QByteArray memory_;
  uint64_t bytesIn_ = 0;
  struct Deflate;
  std::unique_ptr<Deflate> z_;
};

}  // namespace tmon

#endif
