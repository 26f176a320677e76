// One probe's TCP stream: checks the framing, the Hello (protocol version,
// token) and every frame, then hands whole payloads on. It knows nothing of
// the session model; the app wires frameArrived() to it, or (live sessions)
// gives it a frame sink: from then on the frames are checked and unpacked
// on a thread of their own (DecodeThread) and reach the sink in batches.
//
// Until its Hello passes, a connection is a stranger's and costs little: a
// Hello of at most TM_MAX_HELLO_BYTES held in memory (nothing spooled to
// disk), a deadline for it, and a one-frame answer (docs/format.md).
#ifndef THREADMON_NET_PROBECONNECTION_H
#define THREADMON_NET_PROBECONNECTION_H

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>
#include <deque>
#include <functional>
#include <memory>

#include "ownedframe.h"
#include "threadmon.pb-c.h"
#include "tmwire.h"

class QIODevice;
class QLocalSocket;
class QTcpSocket;

namespace tmnet {

class DecodeThread;

class ProbeConnection : public QObject {
  Q_OBJECT
 public:
  enum class State { Handshake, Streaming, Ended, Failed };

  // A probe sends its Hello as soon as it is connected.
  static constexpr int kHelloDeadlineMs = 3000;

  // Takes ownership of `socket`. An empty `requiredToken` accepts any Hello.
  // With a `linkPsk` (linkpsk.h) `socket` is a QSslSocket not yet encrypted:
  // the peer must open TLS with that key, which proves the token (the
  // Hello's is then not checked); a probe that speaks plainly is refused
  // with a Refusal it can read. The handshake waits `handshakeDelayMs`
  // first (the listener slows a peer whose keys were wrong).
  ProbeConnection(QTcpSocket *socket, const QByteArray &requiredToken,
                  QObject *parent = nullptr, int helloDeadlineMs = kHelloDeadlineMs,
                  const QByteArray &linkPsk = QByteArray(), int handshakeDelayMs = 0);
  // A Unix socket's peer (whose user the listener checked); peer() is
  // "unix:pid N". (No defaults: ProbeConnection(nullptr, token) is a TCP
  // one without a socket, as the tests make.)
  ProbeConnection(QLocalSocket *socket, const QByteArray &requiredToken, QObject *parent,
                  int helloDeadlineMs);
  ~ProbeConnection() override;

  State state() const { return state_; }
  // True once the Hello passed; a session exists for this connection.
  bool wasAccepted() const { return wasAccepted_; }
  QString stateText() const;
  QString peer() const { return peer_; }
  // Names a socketless connection's peer ("ssh web1": MuxReader).
  void setPeer(const QString &peer) { peer_ = peer; }
  QString error() const { return error_; }
  // The peer failed the TLS handshake: a wrong key, or not our TLS.
  bool failedAuthentication() const { return failedAuthentication_; }
  // Encrypted, and the key proved (TLS links only).
  bool authenticated() const { return authenticated_; }
  // Why it was refused (REFUSED_UNSPECIFIED: it was not).
  Threadmon__RefusalReason refusalReason() const { return refusalReason_; }
  quint32 pid() const { return pid_; }
  QString exe() const { return exe_; }
  quint64 framesReceived() const { return frames_; }
  quint64 bytesReceived() const { return bytes_; }
  // Frames the probe reported it could not send (from its ProbeStats).
  quint64 framesDroppedByProbe() const { return probeFramesDropped_; }
  // Frames seen in the last second.
  double framesPerSecond();

  // Frames from now on go to `sink` in batches, unpacked on a decoder
  // thread, instead of frameArrived(); a failure or the end is reported
  // (closed()) after the frames before it reached the sink. Call it once,
  // when accepted() is emitted.
  void setFrameSink(std::function<void(tmon::FrameBatch &)> sink);
  // With a sink: sees each checked frame (payload and unpacked) on the
  // decoder thread, the Hello included (a flight recorder's ring).
  void setFrameTap(std::function<void(const uint8_t *, uint32_t, const Threadmon__Frame &)> tap);

  // Feeds bytes as if they came from the socket; the socket path and tests
  // share it.
  void consume(const QByteArray &bytes);
  // The peer closed: a partial frame left over is reported.
  void finish();
  // Refuses a connection still waiting for its Hello and closes it at once
  // (the listener makes room for newer ones).
  void evict();

 signals:
  // The Hello passed the version and token checks.
  void accepted();
  // A checked frame payload (the Hello included), one threadmon.Frame.
  void frameArrived(const QByteArray &payload);
  // Ended or Failed, and the socket closed; error() says why it failed.
  void closed();

 private:
  void fail(const QString &message);
  // `answer`: send the Refusal frame (not to a peer that cannot read it).
  void refuse(Threadmon__RefusalReason reason, const QString &message, bool linger = true,
              bool answer = true);
  void closeSocket(bool linger);
  void acceptHello();
  bool checkFrame(const uint8_t *payload, uint32_t len);
  bool checkHello(const uint8_t *payload, uint32_t len);
  void countFrame();
  void startDecodeThread();
  void readSocket();
  void sniffLink();
  void adoptSocket(QIODevice *socket, const QString &peer, int helloDeadlineMs);
  void startTls(int handshakeDelayMs);
  void onSocketClosed(QIODevice *socket, std::function<void()> done);

  QIODevice *socket_ = nullptr;  // a QTcpSocket or a QLocalSocket
  QByteArray requiredToken_;
  QByteArray linkPsk_;
  bool failedAuthentication_ = false;
  bool authenticated_ = false;
  tm_decoder decoder_;
  QByteArray handshakeBytes_;  // what arrived before the Hello passed
  std::function<void(tmon::FrameBatch &)> sink_;
  std::function<void(const uint8_t *, uint32_t, const Threadmon__Frame &)> tap_;
  std::unique_ptr<DecodeThread> decodeThread_;
  QTimer helloDeadline_;
  State state_ = State::Handshake;
  bool wasAccepted_ = false;
  bool helloCounted_ = false;  // the decoder thread's first frame, counted here already
  QByteArray acceptedBytes_;   // the stream up to the Hello's acceptance, for that thread
  QString peer_;
  QString error_;
  Threadmon__RefusalReason refusalReason_ = THREADMON__REFUSAL_REASON__REFUSED_UNSPECIFIED;
  QString exe_;
  quint32 pid_ = 0;
  quint64 frames_ = 0;
  quint64 bytes_ = 0;
  quint64 probeFramesDropped_ = 0;
  QElapsedTimer clock_;
  std::deque<qint64> recentFrameMs_;
};

}  // namespace tmnet

#endif
