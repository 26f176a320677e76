#include "probeconnection.h"

#include <QtGlobal>
#include <QTcpSocket>

#include "threadmon.pb-c.h"
#include "tokencheck.h"

namespace tmnet {

ProbeConnection::ProbeConnection(QTcpSocket *socket, const QByteArray &requiredToken,
                                 QObject *parent)
    : QObject(parent), socket_(socket), requiredToken_(requiredToken) {
  tm_decoder_init(&decoder_);
  clock_.start();
  if (!socket_) return;
  socket_->setParent(this);
  peer_ = QStringLiteral("%1:%2").arg(socket_->peerAddress().toString()).arg(socket_->peerPort());
  connect(socket_, &QTcpSocket::readyRead, this, [this] { consume(socket_->readAll()); });
  connect(socket_, &QTcpSocket::disconnected, this, [this] {
    consume(socket_->readAll());
    finish();
  });
}

ProbeConnection::~ProbeConnection() { tm_decoder_free(&decoder_); }

QString ProbeConnection::stateText() const {
  switch (state_) {
    case State::Handshake: return tr("waiting for Hello");
    case State::Streaming: return tr("connected");
    case State::Ended: return tr("ended");
    case State::Failed: return tr("closed: %1").arg(error_);
  }
  return QString();
}

double ProbeConnection::framesPerSecond() {
  const qint64 now = clock_.elapsed();
  while (!recentFrameMs_.empty() && recentFrameMs_.front() < now - 1000) recentFrameMs_.pop_front();
  return static_cast<double>(recentFrameMs_.size());
}

void ProbeConnection::fail(const QString &message) {
  if (state_ == State::Failed || state_ == State::Ended) return;
  state_ = State::Failed;
  error_ = message;
  qWarning("threadmon-display: probe %s: %s", qPrintable(peer_), qPrintable(message));
  if (socket_) {
    socket_->disconnect(this);
    socket_->abort();
  }
  emit closed();
}

void ProbeConnection::finish() {
  if (state_ == State::Failed || state_ == State::Ended) return;
  const size_t pending = tm_decoder_pending(&decoder_);
  if (pending > 0) {
    fail(tr("stream cut inside a frame at byte %1 (%2 bytes of it arrived)")
             .arg(tm_decoder_good_offset(&decoder_))
             .arg(pending));
    return;
  }
  state_ = State::Ended;
  emit closed();
}

bool ProbeConnection::checkHello(const uint8_t *payload, uint32_t len) {
  Threadmon__Frame *frame = threadmon__frame__unpack(nullptr, len, payload);
  if (!frame || frame->body_case != THREADMON__FRAME__BODY_HELLO) {
    if (frame) threadmon__frame__free_unpacked(frame, nullptr);
    fail(tr("the first frame is not a Hello"));
    return false;
  }
  const Threadmon__Hello *hello = frame->hello;
  pid_ = hello->pid;
  exe_ = QString::fromUtf8(hello->exe ? hello->exe : "");
  const uint32_t version = hello->protocol_version;
  const QByteArray token(hello->token ? hello->token : "");
  threadmon__frame__free_unpacked(frame, nullptr);
  if (version != TM_PROTOCOL_VERSION) {
    fail(tr("probe speaks protocol version %1, this display speaks %2")
             .arg(version)
             .arg(TM_PROTOCOL_VERSION));
    return false;
  }
  if (!requiredToken_.isEmpty() && !tokensEqual(requiredToken_, token)) {
    fail(tr("wrong token from pid %1").arg(pid_));
    return false;
  }
  state_ = State::Streaming;
  wasAccepted_ = true;
  emit accepted();
  return true;
}

// Unpacks the frame once so a malformed one ends this session here with a
// clear line, rather than somewhere inside the model.
bool ProbeConnection::checkFrame(const uint8_t *payload, uint32_t len) {
  Threadmon__Frame *frame = threadmon__frame__unpack(nullptr, len, payload);
  if (!frame) {
    fail(tr("malformed frame %1 at byte %2 (not a threadmon.Frame)")
             .arg(frames_ + 1)
             .arg(tm_decoder_good_offset(&decoder_) - len - TM_FRAME_PREFIX_BYTES));
    return false;
  }
  if (frame->body_case == THREADMON__FRAME__BODY_TICK && frame->tick->probe)
    probeFramesDropped_ = frame->tick->probe->frames_dropped;
  else if (frame->body_case == THREADMON__FRAME__BODY_GOODBYE)
    probeFramesDropped_ = frame->goodbye->frames_dropped;
  else if (frame->body_case == THREADMON__FRAME__BODY_HELLO) {
    threadmon__frame__free_unpacked(frame, nullptr);
    fail(tr("a second Hello in one stream at frame %1").arg(frames_ + 1));
    return false;
  }
  threadmon__frame__free_unpacked(frame, nullptr);
  return true;
}

void ProbeConnection::consume(const QByteArray &bytes) {
  if (bytes.isEmpty() || state_ == State::Failed || state_ == State::Ended) return;
  bytes_ += static_cast<quint64>(bytes.size());
  spool_.append(bytes);
  emit bytesArrived(bytes);
  if (tm_decoder_feed(&decoder_, bytes.constData(), static_cast<size_t>(bytes.size())) != 0) {
    fail(QString::fromUtf8(tm_decoder_error(&decoder_)));
    return;
  }
  for (;;) {
    const uint8_t *payload = nullptr;
    uint32_t len = 0;
    const tm_decode_status st = tm_decoder_next(&decoder_, &payload, &len);
    if (st == TM_DECODE_NEED_MORE) return;
    if (st == TM_DECODE_ERROR) {
      fail(QString::fromUtf8(tm_decoder_error(&decoder_)));
      return;
    }
    const bool ok = state_ == State::Handshake ? checkHello(payload, len) : checkFrame(payload, len);
    if (!ok) return;
    ++frames_;
    recentFrameMs_.push_back(clock_.elapsed());
    if (recentFrameMs_.size() > 4096) recentFrameMs_.pop_front();
    emit frameArrived(QByteArray(reinterpret_cast<const char *>(payload), static_cast<qsizetype>(len)));
    if (state_ != State::Streaming) return;  // a slot may have closed us
  }
}

}  // namespace tmnet
