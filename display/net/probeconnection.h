// One probe's TCP stream: checks the framing, the Hello (protocol version,
// token) and every frame, then hands whole payloads on. It knows nothing of
// the session model; the app wires frameArrived() to it.
#ifndef THREADMON_NET_PROBECONNECTION_H
#define THREADMON_NET_PROBECONNECTION_H

#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <deque>

#include "streamspool.h"
#include "tmwire.h"

class QTcpSocket;

namespace tmnet {

class ProbeConnection : public QObject {
  Q_OBJECT
 public:
  enum class State { Handshake, Streaming, Ended, Failed };

  // Takes ownership of `socket`. An empty `requiredToken` accepts any Hello.
  ProbeConnection(QTcpSocket *socket, const QByteArray &requiredToken,
                  QObject *parent = nullptr);
  ~ProbeConnection() override;

  State state() const { return state_; }
  // True once the Hello passed; a session exists for this connection.
  bool wasAccepted() const { return wasAccepted_; }
  // Every byte received so far, kept so the session can be recorded at any
  // time from its first byte.
  StreamSpool *spool() { return &spool_; }
  QString stateText() const;
  QString peer() const { return peer_; }
  QString error() const { return error_; }
  quint32 pid() const { return pid_; }
  QString exe() const { return exe_; }
  quint64 framesReceived() const { return frames_; }
  quint64 bytesReceived() const { return bytes_; }
  // Frames the probe reported it could not send (from its ProbeStats).
  quint64 framesDroppedByProbe() const { return probeFramesDropped_; }
  // Frames seen in the last second.
  double framesPerSecond();

  // Feeds bytes as if they came from the socket; the socket path and tests
  // share it.
  void consume(const QByteArray &bytes);
  // The peer closed: a partial frame left over is reported.
  void finish();

 signals:
  // Every received byte, in order, before any check (what a recording keeps).
  void bytesArrived(const QByteArray &raw);
  // The Hello passed the version and token checks.
  void accepted();
  // A checked frame payload (the Hello included), one threadmon.Frame.
  void frameArrived(const QByteArray &payload);
  // Ended or Failed; error() says why when it failed.
  void closed();

 private:
  void fail(const QString &message);
  bool checkFrame(const uint8_t *payload, uint32_t len);
  bool checkHello(const uint8_t *payload, uint32_t len);

  QTcpSocket *socket_ = nullptr;
  QByteArray requiredToken_;
  tm_decoder decoder_;
  StreamSpool spool_;
  State state_ = State::Handshake;
  bool wasAccepted_ = false;
  QString peer_;
  QString error_;
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
