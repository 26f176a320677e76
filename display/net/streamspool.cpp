#include "streamspool.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <QDir>

#include "tmcreate.h"

namespace tmnet {

StreamSpool::StreamSpool()
    : temp_(QDir::tempPath() + QStringLiteral("/threadmon-spool-XXXXXX.tmcap")) {
  tempOk_ = temp_.open();
  // Nameless from the start: the file lasts while it is open, so a display
  // killed by a signal leaves nothing in $TMPDIR (an hour of a busy
  // program's stream is gigabytes).
  if (tempOk_) ::unlink(QFile::encodeName(temp_.fileName()).constData());
}

void StreamSpool::append(const QByteArray &bytes) {
  size_ += bytes.size();
  if (tempOk_) temp_.write(bytes);
  if (record_) record_->write(bytes);
}

void StreamSpool::discard() {
  discarded_ = true;
  tempOk_ = false;
  temp_.close();  // its space goes with its last descriptor
}

QString StreamSpool::startRecording(const QString &path) {
  if (discarded_)
    return QStringLiteral(
        "this session keeps only its last window (--last): save it with "
        "File > Save last");
  if (!tempOk_) return QStringLiteral("no spool file: cannot record this session");
  // A new file (tmcreate.h): never a link's target or another user's file.
  const int fd = tm_create_replacing(QFile::encodeName(path).constData());
  if (fd < 0)
    return QStringLiteral("cannot write %1: %2").arg(path, QString::fromLocal8Bit(strerror(errno)));
  auto out = std::make_unique<QFile>();
  if (!out->open(fd, QIODevice::WriteOnly, QFileDevice::AutoCloseHandle)) {
    ::close(fd);
    return QStringLiteral("cannot write %1: %2").arg(path, out->errorString());
  }
  // Read back through its own descriptor (it has no name), then left at
  // its end for what follows.
  const qint64 end = temp_.pos();
  QString error;
  if (!temp_.seek(0)) error = QStringLiteral("cannot read the spool: %1").arg(temp_.errorString());
  while (error.isEmpty() && temp_.pos() < end) {
    const QByteArray chunk = temp_.read(std::min<qint64>(1 << 20, end - temp_.pos()));
    if (chunk.isEmpty())
      error = QStringLiteral("cannot read the spool: %1").arg(temp_.errorString());
    else if (out->write(chunk) != chunk.size())
      error = QStringLiteral("cannot write %1: %2").arg(path, out->errorString());
  }
  temp_.seek(end);
  if (!error.isEmpty()) return error;
  record_ = std::move(out);
  record_->flush();
  return QString();
}

void StreamSpool::stopRecording() {
  if (record_) record_->close();
  record_.reset();
}

}  // namespace tmnet
