#include "exportoutput.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tmon {

struct ExportOutput::Deflate {
  z_stream s{};
};

namespace {

bool ownSink(const struct stat &st) {
  return st.st_uid == geteuid() || st.st_uid == 0;
}

// Opens the pipe or device lstat saw, and only that one: replaced between
// the look and the open, it is closed unwritten.
int openSameSink(const QByteArray &p, const struct stat &seen) {
  const int fd = ::open(p.constData(), O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && (::fstat(fd, &st) != 0 || st.st_dev != seen.st_dev || st.st_ino != seen.st_ino)) {
    ::close(fd);
    errno = EEXIST;
    return -1;
  }
  return fd;
}

}  // namespace

ExportOutput::ExportOutput() = default;

ExportOutput::~ExportOutput() {
  if (z_) deflateEnd(&z_->s);
  if (ownFd_ && fd_ >= 0) ::close(fd_);
}

void ExportOutput::discard() {
  if (ownFd_ && fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (created_) ::unlink(path_.toLocal8Bit().constData());
  created_ = false;
}

bool ExportOutput::open(const QString &path, bool gzip, bool replace) {
  path_ = path;
  if (path == QLatin1String("-")) {
    fd_ = STDOUT_FILENO;
  } else {
    const QByteArray p = path.toLocal8Bit();
    struct stat st;
    const bool exists = ::lstat(p.constData(), &st) == 0;
    const bool sink = exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
    if (sink) {
      // A sink the user named (/dev/null, a pipe): written into, never
      // replaced (--force's unlink left a file where root's /dev/null was).
      // Only this user's own or root's: a pipe another user planted at the
      // name would read the export.
      if (!ownSink(st)) {
        error_ = QStringLiteral("%1 is another user's pipe or device: not written into").arg(path);
        return false;
      }
      fd_ = openSameSink(p, st);
    } else {
      if (replace && exists && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
        ::unlink(p.constData());
      fd_ = ::open(p.constData(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    }
    if (fd_ < 0) {
      const bool special = exists && !sink && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode);
      error_ = special ? QStringLiteral("%1 is not a regular file").arg(path)
               : errno == EEXIST && sink
                   ? QStringLiteral("%1 changed while it was opened: not written into").arg(path)
               : errno == EEXIST ? QStringLiteral("%1 exists (--force replaces it)").arg(path)
                                 : QStringLiteral("cannot write %1: %2").arg(path, strerror(errno));
      return false;
    }
    ownFd_ = true;
    created_ = !sink;
  }
  if (gzip) startDeflate();
  return true;
}

void ExportOutput::openBuffer(bool gzip) {
  toMemory_ = true;
  if (gzip) startDeflate();
}

void ExportOutput::startDeflate() {
  z_ = std::make_unique<Deflate>();
  // windowBits 15 + 16: gzip framing (a header and CRC-32 trailer).
  deflateInit2(&z_->s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

void ExportOutput::sink(const char *data, size_t n) {
  if (toMemory_) {
    memory_.append(data, qsizetype(n));
    return;
  }
  while (n > 0 && error_.isEmpty()) {
    ssize_t w = ::write(fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      error_ = QStringLiteral("writing %1: %2").arg(path_, strerror(errno));
      return;
    }
    data += w;
    n -= size_t(w);
  }
}

void ExportOutput::grow(size_t n) {
  const size_t capacity = std::max(size_ + n, std::max(2 * capacity_, kFlushAt + 4096));
  std::unique_ptr<char[]> bigger(new char[capacity]);
  if (size_) std::memcpy(bigger.get(), pending_.get(), size_);
  pending_ = std::move(bigger);
  capacity_ = capacity;
}

void ExportOutput::flush(bool finish) {
  if (!z_) {
    sink(pending_.get(), size_);
    size_ = 0;
    return;
  }
  z_->s.next_in = reinterpret_cast<Bytef *>(pending_.get());
  z_->s.avail_in = uInt(size_);
  char out[65536];
  int rc;
  do {
    z_->s.next_out = reinterpret_cast<Bytef *>(out);
    z_->s.avail_out = sizeof out;
    rc = deflate(&z_->s, finish ? Z_FINISH : Z_NO_FLUSH);
    sink(out, sizeof out - z_->s.avail_out);
  } while (z_->s.avail_out == 0 || (finish && rc != Z_STREAM_END && rc != Z_STREAM_ERROR));
  size_ = 0;
}

bool ExportOutput::close() {
  flush(true);
  if (ownFd_ && fd_ >= 0) {
    if (::close(fd_) != 0 && error_.isEmpty())
      error_ = QStringLiteral("writing %1: %2").arg(path_, strerror(errno));
    fd_ = -1;
  }
  return error_.isEmpty();
}

}  // namespace tmon
