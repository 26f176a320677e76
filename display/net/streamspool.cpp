#include "streamspool.h"

#include <QDir>

namespace tmnet {

StreamSpool::StreamSpool()
    : temp_(QDir::tempPath() + QStringLiteral("/threadmon-spool-XXXXXX.tmcap")) {
  tempOk_ = temp_.open();
}

void StreamSpool::append(const QByteArray &bytes) {
  size_ += bytes.size();
  if (tempOk_) temp_.write(bytes);
  if (record_) record_->write(bytes);
}

void StreamSpool::discard() {
  discarded_ = true;
  tempOk_ = false;
  temp_.remove();
}

QString StreamSpool::startRecording(const QString &path) {
  if (discarded_)
    return QStringLiteral(
        "this session keeps only its last window (--last): save it with "
        "File > Save last");
  if (!tempOk_) return QStringLiteral("no spool file: cannot record this session");
  auto out = std::make_unique<QFile>(path);
  if (!out->open(QIODevice::WriteOnly | QIODevice::Truncate))
    return QStringLiteral("cannot write %1: %2").arg(path, out->errorString());
  temp_.flush();
  QFile in(temp_.fileName());
  if (!in.open(QIODevice::ReadOnly))
    return QStringLiteral("cannot read the spool: %1").arg(in.errorString());
  while (!in.atEnd()) {
    const QByteArray chunk = in.read(1 << 20);
    if (out->write(chunk) != chunk.size())
      return QStringLiteral("cannot write %1: %2").arg(path, out->errorString());
  }
  record_ = std::move(out);
  record_->flush();
  return QString();
}

void StreamSpool::stopRecording() {
  if (record_) record_->close();
  record_.reset();
}

}  // namespace tmnet
