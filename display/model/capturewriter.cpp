#include "capturewriter.h"

#include "tmwire.h"

namespace tmon {

namespace {
constexpr size_t kBlockBytes = 64 * 1024;
constexpr int kLevel = 3;
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
  close();
  file_.setFileName(path);
  frames_ = 0;
  tm_index_free(&index_);
  if (!file_.open(QIODevice::WriteOnly | QIODevice::Truncate)) return fail("cannot create");
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
  tm_index_add(&index_, &meta);
  return true;
}

bool CaptureWriter::writeFrame(const uint8_t *payload, uint32_t len) {
  if (!file_.isOpen()) return false;
  const size_t at = batch_.size();
  batch_.resize(at + TM_FRAME_PREFIX_BYTES + len);
  tm_frame_prefix_encode(batch_.data() + at, payload, len);
  std::copy(payload, payload + len, batch_.begin() + ptrdiff_t(at + TM_FRAME_PREFIX_BYTES));
  if (uint64_t t = tm_frame_tick_time(payload, len)) {
    if (!firstTick_) firstTick_ = t;
    lastTick_ = t;
  }
  frames_++;
  return batch_.size() < kBlockBytes || flush();
}

bool CaptureWriter::writeFrame(const Threadmon__Frame &frame) {
  std::vector<uint8_t> buf(threadmon__frame__get_packed_size(&frame));
  size_t n = threadmon__frame__pack(&frame, buf.data());
  return writeFrame(buf.data(), uint32_t(n));
}

bool CaptureWriter::flush() {
  if (!file_.isOpen()) return false;
  if (batch_.empty()) return true;
  tm_index_entry meta{};
  size_t n = tm_block_encode(&blocks_, batch_.data(), batch_.size(), firstTick_, lastTick_, &meta);
  bool ok;
  if (n) {
    ok = writeRecord(blocks_.out, n, meta);
  } else {
    meta.first_ns = firstTick_;
    meta.last_ns = lastTick_;
    meta.kinds = tm_frames_describe(batch_.data(), batch_.size(), &meta.frames);
    ok = writeRecord(batch_.data(), batch_.size(), meta);
  }
  batch_.clear();
  firstTick_ = lastTick_ = 0;
  return ok && (file_.flush() || fail("cannot write"));
}

bool CaptureWriter::close() {
  if (!file_.isOpen()) return true;
  if (!flush()) return false;
  uint8_t *index = nullptr;
  const size_t n = tm_index_encode(&index_, uint64_t(file_.pos()), &index);
  const bool ok = !n || file_.write(reinterpret_cast<const char *>(index), qint64(n)) == qint64(n);
  free(index);
  if (!ok || !file_.flush()) return fail("cannot write");
  file_.close();
  return true;
}

}  // namespace tmon
