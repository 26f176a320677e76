#include "probeconnection.h"

#include <sys/socket.h>

#include <QCoreApplication>
#include <QLocalSocket>
#include <QSslSocket>
#include <QTcpSocket>
#include <QtGlobal>

#include "decodethread.h"
#include "linkpsk.h"
#include "replyframes.h"
#include "tokencheck.h"

// Messages name the program they come from: the display or threadmon-receive.
static QByteArray logName() {
  return QCoreApplication::applicationName().toLocal8Bit();
}

namespace tmnet {

namespace {

// Qt reads no further ahead than this while the Hello is checked: the
// header, the Hello at its largest, and the frames a probe sends right
// after it.
constexpr qint64 kHandshakeReadBytes = 2 * (TM_HEADER_BYTES + TM_FRAME_PREFIX_BYTES + TM_MAX_HELLO_BYTES);
// How long a refused peer has to read the Refusal before we close.
constexpr int kLingerMs = 1000;

// QTcpSocket and QLocalSocket share these calls but no base class that has
// them: a connection holds either.
void setReadBuffer(QIODevice *d, qint64 bytes) {
  if (auto *t = qobject_cast<QAbstractSocket *>(d)) t->setReadBufferSize(bytes);
  if (auto *l = qobject_cast<QLocalSocket *>(d)) l->setReadBufferSize(bytes);
}

void flushSocket(QIODevice *d) {
  if (auto *t = qobject_cast<QAbstractSocket *>(d)) t->flush();
  if (auto *l = qobject_cast<QLocalSocket *>(d)) l->flush();
}

void abortSocket(QIODevice *d) {
  if (auto *t = qobject_cast<QAbstractSocket *>(d)) t->abort();
  if (auto *l = qobject_cast<QLocalSocket *>(d)) l->abort();
}

// The descriptor of a connected socket, else -1.
int connectedFd(QIODevice *d) {
  if (auto *t = qobject_cast<QAbstractSocket *>(d))
    return t->state() == QAbstractSocket::ConnectedState ? int(t->socketDescriptor()) : -1;
  if (auto *l = qobject_cast<QLocalSocket *>(d))
    return l->state() == QLocalSocket::ConnectedState ? int(l->socketDescriptor()) : -1;
  return -1;
}

}  // namespace

ProbeConnection::ProbeConnection(QTcpSocket *socket, const QByteArray &requiredToken,
                                 QObject *parent, int helloDeadlineMs, const QByteArray &linkPsk,
                                 int handshakeDelayMs)
    : QObject(parent), requiredToken_(requiredToken), linkPsk_(linkPsk) {
  tm_decoder_init(&decoder_);
  tm_decoder_set_max_frame(&decoder_, TM_MAX_HELLO_BYTES);
  clock_.start();
  if (!socket) return;
  const int delay = linkPsk_.isEmpty() ? 0 : qMax(0, handshakeDelayMs);
  adoptSocket(socket,
              QStringLiteral("%1:%2").arg(socket->peerAddress().toString()).arg(socket->peerPort()),
              helloDeadlineMs + delay);
  if (!linkPsk_.isEmpty()) startTls(delay);
}

// The TLS key proves the token; the Hello's is not looked at. The first
// byte is read (sniffLink) after the delay the listener asked for.
void ProbeConnection::startTls(int handshakeDelayMs) {
  requiredToken_.clear();
  auto *tls = qobject_cast<QSslSocket *>(socket_);
  Q_ASSERT(tls);
  connect(tls, &QSslSocket::encrypted, this, [this] { authenticated_ = true; });
  connect(tls, &QSslSocket::errorOccurred, this, [this, tls](QAbstractSocket::SocketError e) {
    if (authenticated_ || tls->mode() != QSslSocket::SslServerMode ||
        e == QAbstractSocket::RemoteHostClosedError)
      return;
    failedAuthentication_ = true;
    // No Refusal: the peer could not read it without the key.
    refuse(THREADMON__REFUSAL_REASON__REFUSED_TOKEN,
           tr("TLS handshake failed (a wrong token?): %1").arg(tls->errorString()), false, false);
  });
  QTimer::singleShot(handshakeDelayMs, this, [this] {
    if (!socket_ || state_ != State::Handshake) return;
    connect(socket_, &QIODevice::readyRead, this, &ProbeConnection::sniffLink);
    sniffLink();
  });
}

ProbeConnection::ProbeConnection(QLocalSocket *socket, const QByteArray &requiredToken,
                                 QObject *parent, int helloDeadlineMs)
    : QObject(parent), requiredToken_(requiredToken) {
  tm_decoder_init(&decoder_);
  tm_decoder_set_max_frame(&decoder_, TM_MAX_HELLO_BYTES);
  clock_.start();
  struct ucred cred {};
  socklen_t len = sizeof cred;
  const bool known = getsockopt(int(socket->socketDescriptor()), SOL_SOCKET, SO_PEERCRED, &cred,
                                &len) == 0;
  adoptSocket(socket, known ? QStringLiteral("unix:pid %1").arg(cred.pid) : QStringLiteral("unix"),
              helloDeadlineMs);
}

// A socket whose end shows as its disconnected signal.
void ProbeConnection::onSocketClosed(QIODevice *socket, std::function<void()> done) {
  if (auto *t = qobject_cast<QAbstractSocket *>(socket))
    connect(t, &QAbstractSocket::disconnected, this, done);
  else if (auto *l = qobject_cast<QLocalSocket *>(socket))
    connect(l, &QLocalSocket::disconnected, this, done);
}

void ProbeConnection::adoptSocket(QIODevice *socket, const QString &peer, int helloDeadlineMs) {
  socket_ = socket;
  socket_->setParent(this);
  setReadBuffer(socket_, kHandshakeReadBytes);
  peer_ = peer;
  // A TLS link is read once its first byte is looked at (startTls).
  if (linkPsk_.isEmpty()) connect(socket_, &QIODevice::readyRead, this, &ProbeConnection::readSocket);
  onSocketClosed(socket_, [this] {
    if (authenticated_ || linkPsk_.isEmpty()) consume(socket_->readAll());
    finish();
  });
  helloDeadline_.setSingleShot(true);
  connect(&helloDeadline_, &QTimer::timeout, this, [this, helloDeadlineMs] {
    refuse(THREADMON__REFUSAL_REASON__REFUSED_TIMEOUT,
           tr("no whole Hello within %1 s (%2 bytes arrived)")
               .arg(helloDeadlineMs / 1000.0)
               .arg(bytes_));
  });
  helloDeadline_.start(helloDeadlineMs);
}

void ProbeConnection::readSocket() { consume(socket_->readAll()); }

// A TLS link's first byte says who called: a TLS client (a handshake
// record), a probe that speaks plainly (the stream's magic), or neither.
void ProbeConnection::sniffLink() {
  auto *tls = static_cast<QSslSocket *>(socket_);
  char first = 0;
  if (!tls || tls->mode() != QSslSocket::UnencryptedMode || tls->peek(&first, 1) != 1) return;
  disconnect(tls, &QTcpSocket::readyRead, this, &ProbeConnection::sniffLink);
  if (first == 0x16) {
    connect(tls, &QTcpSocket::readyRead, this, &ProbeConnection::readSocket);
    startLinkServer(tls, linkPsk_);
  } else if (first == TM_MAGIC[0]) {
    refuse(THREADMON__REFUSAL_REASON__REFUSED_TOKEN,
           tr("this display takes encrypted links only: stream to it with threadmon run "
              "--token-file F (the display's token)"));
  } else {
    refuse(THREADMON__REFUSAL_REASON__REFUSED_HELLO,
           tr("neither TLS nor a threadmon stream (first byte 0x%1)")
               .arg(static_cast<unsigned char>(first), 2, 16, QLatin1Char('0')));
  }
}

ProbeConnection::~ProbeConnection() {
  decodeThread_.reset();  // before what its queued deliveries would touch
  tm_decoder_free(&decoder_);
}

void ProbeConnection::setFrameSink(std::function<void(tmon::FrameBatch &)> sink) {
  sink_ = std::move(sink);
}

void ProbeConnection::setFrameTap(
    std::function<void(const uint8_t *, uint32_t, const Threadmon__Frame &)> tap) {
  tap_ = std::move(tap);
}

// The decoder thread takes the stream from its first byte (the header and
// the Hello again, so that its offsets are the stream's); the Hello passed
// here already and is counted once.
void ProbeConnection::startDecodeThread() {
  decodeThread_ = std::make_unique<DecodeThread>(
      [this](DecodeThread::Output &out) {
        if (state_ != State::Streaming) return;
        for (const tmon::OwnedFrame &f : out.frames) {
          if (f->body_case == THREADMON__FRAME__BODY_TICK && f->tick->probe)
            probeFramesDropped_ = f->tick->probe->frames_dropped;
          else if (f->body_case == THREADMON__FRAME__BODY_GOODBYE)
            probeFramesDropped_ = f->goodbye->frames_dropped;
          if (helloCounted_)
            helloCounted_ = false;
          else
            countFrame();
        }
        if (!out.frames.empty()) sink_(out.frames);
        if (!out.error.isEmpty()) {
          fail(out.error);
        } else if (out.ended) {
          state_ = State::Ended;
          closeSocket(false);
        }
      },
      tap_);
  helloCounted_ = true;
  decodeThread_->feed(acceptedBytes_);
  acceptedBytes_ = QByteArray();
}

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
  if (state_ == State::Handshake) {
    // A stream damaged before its Hello passed is a stranger's, refused.
    const bool badVersion = decoder_.format_major && decoder_.format_major != TM_FORMAT_MAJOR;
    if (handshakeBytes_.startsWith("\x16\x03")) {
      refuse(THREADMON__REFUSAL_REASON__REFUSED_HELLO,
             tr("a TLS client, but this display has no token, so its links are plain: start "
                "it with --token-file"));
      return;
    }
    refuse(badVersion ? THREADMON__REFUSAL_REASON__REFUSED_PROTOCOL
                      : THREADMON__REFUSAL_REASON__REFUSED_HELLO,
           message);
    return;
  }
  if (state_ == State::Failed || state_ == State::Ended) return;
  state_ = State::Failed;
  error_ = message;
  qWarning("%s: probe %s: %s", logName().constData(), qPrintable(peer_), qPrintable(message));
  closeSocket(false);
}

void ProbeConnection::refuse(Threadmon__RefusalReason reason, const QString &message,
                             bool linger, bool answer) {
  if (state_ != State::Handshake) return;
  state_ = State::Failed;
  error_ = message;
  refusalReason_ = reason;
  helloDeadline_.stop();
  handshakeBytes_.clear();
  // A TLS peer mid-handshake could not read a Refusal.
  const auto *tls = linkPsk_.isEmpty() ? nullptr : static_cast<QSslSocket *>(socket_);
  if (tls && tls->mode() != QSslSocket::UnencryptedMode && !tls->isEncrypted()) answer = false;
  if (socket_ && answer) socket_->write(refusalFrame(reason, message));
  closeSocket(linger);
}

void ProbeConnection::evict() {
  if (state_ == State::Handshake)
    refuse(THREADMON__REFUSAL_REASON__REFUSED_BUSY,
           tr("closed to make room: too many connections were waiting for a Hello"), false);
  else if (!wasAccepted_ && socket_)
    closeSocket(false);  // still lingering after a refusal
}

// Without linger the socket closes at once. With it, the answer goes out
// before our FIN and what the peer still sends is read and dropped until it
// closes (at most kLingerMs): closing with unread data would reset the
// connection, and a reset may discard the answer before the peer reads it.
void ProbeConnection::closeSocket(bool linger) {
  if (!socket_) {
    emit closed();
    return;
  }
  QIODevice *socket = socket_;
  socket->disconnect(this);
  flushSocket(socket);
  auto done = [this, socket] {
    if (socket_ != socket) return;
    socket_ = nullptr;
    abortSocket(socket);
    socket->deleteLater();
    emit closed();
  };
  const int fd = connectedFd(socket);
  if (!linger || fd < 0) {
    done();
    return;
  }
  ::shutdown(fd, SHUT_WR);
  connect(socket, &QIODevice::readyRead, this, [socket] { socket->skip(socket->bytesAvailable()); });
  onSocketClosed(socket, done);
  QTimer::singleShot(kLingerMs, this, done);
}

void ProbeConnection::finish() {
  if (state_ == State::Failed || state_ == State::Ended) return;
  if (decodeThread_) {
    helloDeadline_.stop();
    decodeThread_->finish();  // it says whether the stream was cut
    return;
  }
  const size_t pending = tm_decoder_pending(&decoder_);
  if (pending > 0) {
    fail(tr("stream cut inside a frame at byte %1 (%2 bytes of it arrived)")
             .arg(tm_decoder_good_offset(&decoder_))
             .arg(pending));
    return;
  }
  state_ = State::Ended;
  helloDeadline_.stop();
  closeSocket(false);
}

bool ProbeConnection::checkHello(const uint8_t *payload, uint32_t len) {
  Threadmon__Frame *frame = threadmon__frame__unpack(nullptr, len, payload);
  if (!frame || frame->body_case != THREADMON__FRAME__BODY_HELLO) {
    if (frame) threadmon__frame__free_unpacked(frame, nullptr);
    refuse(THREADMON__REFUSAL_REASON__REFUSED_HELLO, tr("the first frame is not a Hello"));
    return false;
  }
  const Threadmon__Hello *hello = frame->hello;
  pid_ = hello->pid;
  exe_ = QString::fromUtf8(hello->exe ? hello->exe : "");
  const uint32_t version = hello->protocol_version;
  const QByteArray token(hello->token ? hello->token : "");
  threadmon__frame__free_unpacked(frame, nullptr);
  // A probe streams plain frames (format 1). Format 2's zstd blocks are for
  // files: live, a few KiB of them could inflate to gigabytes of frames.
  if (decoder_.format_major != TM_FORMAT_MAJOR) {
    refuse(THREADMON__REFUSAL_REASON__REFUSED_PROTOCOL,
           tr("a live stream is format %1 (plain frames); this one is format %2 (compressed "
              "blocks are for files)")
               .arg(TM_FORMAT_MAJOR)
               .arg(decoder_.format_major));
    return false;
  }
  if (version != TM_PROTOCOL_VERSION) {
    refuse(THREADMON__REFUSAL_REASON__REFUSED_PROTOCOL,
           tr("probe speaks protocol version %1, this display speaks %2")
               .arg(version)
               .arg(TM_PROTOCOL_VERSION));
    return false;
  }
  if (!requiredToken_.isEmpty() && !tokensEqual(requiredToken_, token)) {
    refuse(THREADMON__REFUSAL_REASON__REFUSED_TOKEN,
           token.isEmpty() ? tr("no token (this display needs one)") : tr("wrong token"));
    return false;
  }
  acceptHello();
  return true;
}

// From here the peer is a probe: frames may be as large as the format
// allows. The connection keeps no copy of the stream (a live session
// spools its frames compressed, DetailSpool; threadmon-receive writes its
// capture).
void ProbeConnection::acceptHello() {
  state_ = State::Streaming;
  wasAccepted_ = true;
  helloDeadline_.stop();
  tm_decoder_set_max_frame(&decoder_, 0);
  acceptedBytes_ = std::exchange(handshakeBytes_, QByteArray());
  if (socket_) {
    setReadBuffer(socket_, 0);
    socket_->write(welcomeFrame());
  }
  emit accepted();
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

void ProbeConnection::countFrame() {
  ++frames_;
  recentFrameMs_.push_back(clock_.elapsed());
  if (recentFrameMs_.size() > 4096) recentFrameMs_.pop_front();
}

void ProbeConnection::consume(const QByteArray &bytes) {
  if (bytes.isEmpty() || state_ == State::Failed || state_ == State::Ended) return;
  bytes_ += static_cast<quint64>(bytes.size());
  if (!wasAccepted_) handshakeBytes_ += bytes;
  if (decodeThread_) {
    decodeThread_->feed(bytes);
    return;
  }
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
    const bool hello = state_ == State::Handshake;
    const bool ok = hello ? checkHello(payload, len) : checkFrame(payload, len);
    if (!ok) return;
    countFrame();
    if (hello && sink_) {
      // accepted() gave us a sink: the rest is the decoder thread's.
      startDecodeThread();
      return;
    }
    if (hello) acceptedBytes_ = QByteArray();
    emit frameArrived(QByteArray(reinterpret_cast<const char *>(payload), static_cast<qsizetype>(len)));
    if (state_ != State::Streaming) return;  // a slot may have closed us
  }
}

}  // namespace tmnet
