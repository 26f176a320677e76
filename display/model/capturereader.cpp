#include "capturereader.h"

#include <QFile>

#include "framedecoder.h"
#include "sessionmodel.h"

namespace tmon {

CaptureLoadResult CaptureReader::load(const QString &path, SessionModel *model) {
  CaptureLoadResult res;
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    res.message = QStringLiteral("cannot open: %1").arg(file.errorString());
    return res;
  }
  FrameDecoder dec(model);
  static constexpr qint64 kChunk = 1 << 20;
  QByteArray buf;
  bool readError = false;
  while (!dec.failed()) {
    buf = file.read(kChunk);
    if (buf.isEmpty()) {
      readError = file.error() != QFileDevice::NoError;
      break;
    }
    dec.feed(buf.constData(), size_t(buf.size()));
  }
  res.frames = dec.framesRead();
  res.goodBytes = dec.goodOffset();
  if (!dec.headerSeen() || (dec.failed() && res.frames == 0)) {
    res.status = CaptureLoadResult::Unreadable;
    res.message = dec.failed() ? dec.error()
                  : readError  ? QStringLiteral("read error: %1").arg(file.errorString())
                               : QStringLiteral("not a threadmon capture (too short)");
    return res;
  }
  model->markEnded();
  if (dec.failed()) {
    res.status = CaptureLoadResult::Damaged;
    res.message = QStringLiteral("%1; reporting what was read").arg(dec.error());
  } else if (readError) {
    res.status = CaptureLoadResult::Damaged;
    res.message = QStringLiteral("read error after byte %1 (%2 frames): %3")
                      .arg(res.goodBytes)
                      .arg(res.frames)
                      .arg(file.errorString());
  } else if (dec.pendingBytes() > 0) {
    res.status = CaptureLoadResult::Damaged;
    res.message = QStringLiteral("truncated at byte %1 after %2 frames; reporting what was read")
                      .arg(res.goodBytes)
                      .arg(res.frames);
  } else {
    res.status = CaptureLoadResult::Complete;
  }
  return res;
}

}  // namespace tmon
