#include "capturewriter.h"

#include <vector>

#include "tmwire.h"

namespace tmon {

bool CaptureWriter::fail(const QString &what) {
  error_ = QStringLiteral("%1: %2: %3").arg(file_.fileName(), what, file_.errorString());
  file_.close();
  return false;
}

bool CaptureWriter::open(const QString &path) {
  file_.setFileName(path);
  frames_ = 0;
  if (!file_.open(QIODevice::WriteOnly | QIODevice::Truncate)) return fail("cannot create");
  uint8_t header[TM_HEADER_BYTES];
  tm_header_encode(header);
  if (file_.write(reinterpret_cast<const char *>(header), TM_HEADER_BYTES) != TM_HEADER_BYTES)
    return fail("cannot write");
  return true;
}

bool CaptureWriter::writeFrame(const uint8_t *payload, uint32_t len) {
  if (!file_.isOpen()) return false;
  uint8_t prefix[TM_FRAME_PREFIX_BYTES];
  tm_frame_prefix_encode(prefix, payload, len);
  if (file_.write(reinterpret_cast<const char *>(prefix), TM_FRAME_PREFIX_BYTES) !=
          TM_FRAME_PREFIX_BYTES ||
      file_.write(reinterpret_cast<const char *>(payload), qint64(len)) != qint64(len))
    return fail("cannot write");
  frames_++;
  return true;
}

bool CaptureWriter::writeFrame(const Threadmon__Frame &frame) {
  std::vector<uint8_t> buf(threadmon__frame__get_packed_size(&frame));
  size_t n = threadmon__frame__pack(&frame, buf.data());
  return writeFrame(buf.data(), uint32_t(n));
}

bool CaptureWriter::close() {
  if (!file_.isOpen()) return true;
  if (!file_.flush()) return fail("cannot write");
  file_.close();
  return true;
}

}  // namespace tmon
