#include "muxreader.h"

#include <QTcpSocket>

#include "probeconnection.h"

namespace tmnet {

namespace {

constexpr int kHeadBytes = 9;
constexpr int kMaxVersionLine = 256;

quint32 u32At(const QByteArray &b, int at) {
  const auto *p = reinterpret_cast<const uint8_t *>(b.constData()) + at;
  return quint32(p[0]) | quint32(p[1]) << 8 | quint32(p[2]) << 16 | quint32(p[3]) << 24;
}

}  // namespace

MuxReader::MuxReader(const QString &label, QObject *parent) : QObject(parent), label_(label) {}

MuxReader::~MuxReader() = default;

void MuxReader::fail(const QString &why) {
  if (finished_) return;
  finished_ = true;
  pending_.clear();
  for (auto it = open_.begin(); it != open_.end(); it = open_.begin()) endStream(it->first);
  emit ended(why);
}

void MuxReader::consume(const QByteArray &bytes) {
  if (finished_) return;
  pending_.append(bytes);
  if (!versionSeen_) {
    const int nl = pending_.indexOf('\n');
    if (nl < 0) {
      if (pending_.size() > kMaxVersionLine) fail(tr("%1: not a threadmon stream").arg(label_));
      return;
    }
    const QList<QByteArray> words = pending_.left(nl).split(' ');
    if (words.size() != 3 || words[0] != "threadmon-serve") {
      fail(tr("%1: not a threadmon stream").arg(label_));
      return;
    }
    if (words[1].toInt() != kWire) {
      fail(tr("%1 runs threadmon %2, whose remote wire is %3; this display speaks %4")
               .arg(label_, QString::fromUtf8(words[2]), QString::fromUtf8(words[1]))
               .arg(kWire));
      return;
    }
    versionSeen_ = true;
    pending_.remove(0, nl + 1);
  }
  int at = 0;
  while (!finished_ && pending_.size() - at >= kHeadBytes) {
    const quint32 len = u32At(pending_, at + 5);
    if (len > kMaxBody) {
      fail(tr("%1: a record of %2 bytes: not a threadmon stream").arg(label_).arg(len));
      return;
    }
    if (pending_.size() - at < kHeadBytes + int(len)) break;
    record(pending_.at(at), u32At(pending_, at + 1), pending_.mid(at + kHeadBytes, int(len)));
    at += kHeadBytes + int(len);
  }
  if (!finished_) pending_.remove(0, at);
}

void MuxReader::record(char kind, quint32 stream, const QByteArray &body) {
  switch (kind) {
    case 'O': {
      if (open_.count(stream)) return;
      auto *conn = new ProbeConnection(static_cast<QTcpSocket *>(nullptr), QByteArray(), this);
      conn->setPeer(label_);
      open_[stream] = conn;
      connect(conn, &ProbeConnection::accepted, this, [this, conn] { emit sessionAccepted(conn); });
      connect(conn, &ProbeConnection::closed, this, [conn] {
        if (!conn->wasAccepted()) conn->deleteLater();
      });
      break;
    }
    case 'D':
      if (auto it = open_.find(stream); it != open_.end() && it->second) it->second->consume(body);
      break;
    case 'E':
      endStream(stream);
      break;
    case 'X':
      fail(tr("%1: the session ended, exit status %2").arg(label_, QString::fromUtf8(body)));
      break;
    case 'F':
      fail(tr("%1: %2").arg(label_, QString::fromUtf8(body.mid(body.indexOf(' ') + 1))));
      break;
    default:
      fail(tr("%1: a record of unknown kind: not a threadmon stream").arg(label_));
  }
}

void MuxReader::endStream(quint32 stream) {
  auto it = open_.find(stream);
  if (it == open_.end()) return;
  QPointer<ProbeConnection> conn = it->second;
  open_.erase(it);
  if (conn) conn->finish();
}

void MuxReader::finish() {
  fail(versionSeen_ ? tr("%1: the link ended before the session did").arg(label_)
                    : tr("%1: nothing came from the remote side").arg(label_));
}

}  // namespace tmnet
