#include "capturewriter.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "summarizer.h"
#include "tmcreate.h"
#include "tmwire.h"

namespace tmon {

namespace {
constexpr size_t kBlockBytes = 64 * 1024;
constexpr int kLevel = 3;

void appendFramed(std::vector<uint8_t> *to, const uint8_t *payload, uint32_t len) {
  const size_t at = to->size();
  to->resize(at + TM_FRAME_PREFIX_BYTES + len);
  tm_frame_prefix_encode(to->data() + at, payload, len);
  std::copy(payload, payload + len, to->begin() + ptrdiff_t(at + TM_FRAME_PREFIX_BYTES));
}
}  // namespace

CaptureWriter::CaptureWriter() {
  tm_block_writer_init(&blocks_, kLevel);
  index_ = tm_index{};
}

CaptureWriter::~CaptureWriter() {
  close();
  tm_block_writer_free(&blocks_);
  tm_index_free(&index_);
}

bool CaptureWriter::fail(const QString &what) {
  error_ = QStringLiteral("%1: %2: %3").arg(file_.fileName(), what, file_.errorString());
  file_.close();
  batch_.clear();
  return false;
}

bool CaptureWriter::open(const QString &path) {
  const int fd = tm_create_replacing(QFile::encodeName(path).constData());
  if (fd < 0) {
    close();
    error_ = QStringLiteral("%1: cannot create: %2").arg(path, QString::fromLocal8Bit(strerror(errno)));
    return false;
  }
  const bool ok = openDescriptor(fd, path);
  ::close(fd);
  return ok;
}

bool CaptureWriter::openDescriptor(int fd, const QString &name) {
  close();
  const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) {
    error_ = QStringLiteral("%1: %2").arg(name, QString::fromLocal8Bit(strerror(errno)));
    return false;
  }
  file_.setFileName(name);
  frames_ = 0;
  tm_index_free(&index_);
  summaryFrames_.clear();
  summarizer_.reset();
  if (summaries_)
    summarizer_ = std::make_unique<Summarizer>([this](const std::vector<uint8_t> &p) {
      appendFramed(&summaryFrames_, p.data(), uint32_t(p.size()));
    });
  if (!file_.open(own, QIODevice::WriteOnly, QFileDevice::AutoCloseHandle)) {
    ::close(own);
    return fail("cannot create");
  }
  uint8_t header[TM_HEADER_BYTES];
  tm_header_encode_major(header, TM_FORMAT_MAJOR_BLOCKS);
  if (file_.write(reinterpret_cast<const char *>(header), TM_HEADER_BYTES) != TM_HEADER_BYTES)
    return fail("cannot write");
  return true;
}

bool CaptureWriter::writeRecord(const uint8_t *p, size_t len, tm_index_entry meta) {
  meta.offset = uint64_t(file_.pos());
  if (file_.write(reinterpret_cast<const char *>(p), qint64(len)) != qint64(len))
    return fail("cannot write");
  if (copy_.isOpen() &&
      (copy_.write(reinterpret_cast<const char *>(p), qint64(len)) != qint64(len) ||
       !copy_.flush())) {
    qWarning("threadmon: %s: cannot write: %s", qPrintable(copy_.fileName()),
             qPrintable(copy_.errorString()));
    copy_.close();
  }
  tm_index_add(&index_, &meta);
  return true;
}

bool CaptureWriter::writeFrame(const uint8_t *payload, uint32_t len) {
  if (!file_.isOpen()) return false;
  appendFramed(&batch_, payload, len);
  if (uint64_t t = tm_frame_tick_time(payload, len)) {
    if (!firstTick_) firstTick_ = t;
    lastTick_ = t;
  }
  frames_++;
  if (summarizer_) {
    summarizer_->feed(payload, len);
    if (!summaryFrames_.empty()) return writeSummaries();
  }
  return batch_.size() < kBlockBytes || flush();
}

// The summaries go in a record of their own, after the frames so far (whose
// times they do not take: their index times are 0, the record's place says
// nothing of the time it sums).
bool CaptureWriter::writeSummaries() {
  const bool ok = flush() && writeFrames(summaryFrames_, 0, 0);
  summaryFrames_.clear();
  return ok;
}

bool CaptureWriter::writeFrame(const Threadmon__Frame &frame) {
  std::vector<uint8_t> buf(threadmon__frame__get_packed_size(&frame));
  size_t n = threadmon__frame__pack(&frame, buf.data());
  return writeFrame(buf.data(), uint32_t(n));
}

bool CaptureWriter::flush() {
  if (!file_.isOpen()) return false;
  if (batch_.empty()) return true;
  const bool ok = writeFrames(batch_, firstTick_, lastTick_);
  batch_.clear();
  firstTick_ = lastTick_ = 0;
  return ok;
}

// As a block, or plain when zstd cannot shrink them.
bool CaptureWriter::writeFrames(const std::vector<uint8_t> &frames, uint64_t first, uint64_t last) {
  tm_index_entry meta{};
  const size_t n = tm_block_encode(&blocks_, frames.data(), frames.size(), first, last, &meta);
  bool ok;
  if (n) {
    ok = writeRecord(blocks_.out, n, meta);
  } else {
    meta.first_ns = first;
    meta.last_ns = last;
    meta.kinds = tm_frames_describe(frames.data(), frames.size(), &meta.frames);
    ok = writeRecord(frames.data(), frames.size(), meta);
  }
  return ok && (file_.flush() || fail("cannot write"));
}

QString CaptureWriter::startCopy(const QString &path) {
  if (!file_.isOpen()) return QStringLiteral("nothing is being written");
  stopCopy();
  if (!flush()) return error_;
  const int fd = tm_create_replacing(QFile::encodeName(path).constData());
  if (fd < 0)
    return QStringLiteral("cannot write %1: %2").arg(path, QString::fromLocal8Bit(strerror(errno)));
  copy_.setFileName(path);
  if (!copy_.open(fd, QIODevice::WriteOnly, QFileDevice::AutoCloseHandle)) {
    ::close(fd);
    return QStringLiteral("cannot write %1: %2").arg(path, copy_.errorString());
  }
  // Read through the written file's own descriptor (a spool has no name).
  const off_t end = off_t(file_.pos());
  std::vector<char> buf(1 << 20);
  QString error;
  for (off_t at = 0; at < end && error.isEmpty();) {
    const ssize_t n = ::pread(file_.handle(), buf.data(),
                              size_t(std::min<off_t>(end - at, off_t(buf.size()))), at);
    if (n <= 0)
      error = QStringLiteral("cannot read %1: %2")
                  .arg(file_.fileName(), QString::fromLocal8Bit(strerror(n < 0 ? errno : EIO)));
    else if (copy_.write(buf.data(), n) != n)
      error = QStringLiteral("cannot write %1: %2").arg(path, copy_.errorString());
    else
      at += n;
  }
  if (error.isEmpty() && !copy_.flush())
    error = QStringLiteral("cannot write %1: %2").arg(path, copy_.errorString());
  if (!error.isEmpty()) copy_.close();
  return error;
}

bool CaptureWriter::stopCopy() {
  if (!copy_.isOpen()) return true;
  if (file_.isOpen()) flush();  // the frames so far, into both
  if (!copy_.isOpen()) return false;
  uint8_t *index = nullptr;
  const size_t n = tm_index_encode(&index_, uint64_t(copy_.pos()), &index);
  const bool ok =
      (!n || copy_.write(reinterpret_cast<const char *>(index), qint64(n)) == qint64(n)) &&
      copy_.flush();
  free(index);
  if (!ok)
    qWarning("threadmon: %s: cannot write: %s", qPrintable(copy_.fileName()),
             qPrintable(copy_.errorString()));
  copy_.close();
  return ok;
}

bool CaptureWriter::close() {
  if (!file_.isOpen()) return true;
  if (!flush()) return false;
  if (copy_.isOpen() && !stopCopy()) return false;
  if (summarizer_) {
    summarizer_->finish();
    summarizer_.reset();
    if (!summaryFrames_.empty() && !writeSummaries()) return false;
  }
  uint8_t *index = nullptr;
  const size_t n = tm_index_encode(&index_, uint64_t(file_.pos()), &index);
  const bool ok = !n || file_.write(reinterpret_cast<const char *>(index), qint64(n)) == qint64(n);
  free(index);
  if (!ok || !file_.flush()) return fail("cannot write");
  file_.close();
  return true;
}

}  // namespace tmon
