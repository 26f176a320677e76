// The TCP server (or Unix socket) probes connect to. Each accepted socket
// becomes a ProbeConnection; the app turns accepted connections into
// session tabs. A Unix socket's peer must run as the display's own user
// (SO_PEERCRED): any other is closed before it is read, in one line.
//
// With a token every link is TLS with the token's key (linkpsk.h); without
// one, plain TCP (the display listens on loopback only then).
//
// Strangers cost little. Connections still waiting for their Hello are
// capped: a newer one closes the oldest that has not proved the key, so
// strangers holding idle connections cannot keep a probe out, nor run the
// display out of descriptors. A connection from an address whose handshakes
// failed waits before its own, longer after each failure (capped), so
// guessing tokens is slow: at most kMaxPending guesses per kMaxDelayMs.
#ifndef THREADMON_NET_PROBELISTENER_H
#define THREADMON_NET_PROBELISTENER_H

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QLocalServer>
#include <QObject>
#include <QTcpServer>
#include <QTimer>

#include "listenaddress.h"
#include "probeconnection.h"

namespace tmnet {

// Hands out QSslSockets, not yet encrypted, when the link is TLS.
class LinkServer : public QTcpServer {
 public:
  bool tls = false;

 protected:
  void incomingConnection(qintptr descriptor) override;
};

class ProbeListener : public QObject {
  Q_OBJECT
 public:
  static constexpr int kMaxPending = 16;
  // The delay before a handshake from an address whose last one failed:
  // kFirstDelayMs, doubling with each failure up to kMaxDelayMs; forgotten
  // kForgetMs after the last failure.
  static constexpr int kFirstDelayMs = 100;
  static constexpr int kMaxDelayMs = 3000;
  static constexpr int kForgetMs = 60000;

  enum class Link { TlsWithToken, PlainForTests };
  // With a token the link is TLS, unless a test asks for the plain Hello
  // token check alone.
  explicit ProbeListener(const QByteArray &token, QObject *parent = nullptr,
                         Link link = Link::TlsWithToken);

  // Returns "" or one line saying why listening failed.
  QString listen(const ListenAddress &addr);
  quint16 port() const { return server_.serverPort(); }
  QString addressText() const;
  // For tests: fewer pending connections, a shorter Hello deadline.
  void setHandshakeLimits(int maxPending, int helloDeadlineMs);
  // Connections open and not (yet) accepted as sessions.
  int pendingCount() const { return int(pending_.size()); }
  bool encrypted() const { return !psk_.isEmpty(); }
  // How long a new connection from `address` would wait for its handshake.
  int handshakeDelayFor(const QString &address);

 signals:
  // A probe passed the Hello checks. The connection is parented to the
  // listener; whoever handles this may re-parent it.
  void sessionAccepted(tmnet::ProbeConnection *connection);
  // A connection was refused (wrong token, bad or late Hello, no room) and
  // is closed.
  void sessionRefused(const QString &peer, const QString &reason);

 private:
  void onNewConnection();
  void onNewLocalConnection();
  // `address`: a TCP peer's, whose failed handshakes are counted.
  void adopt(ProbeConnection *conn, const QString &address = QString());
  void logRefusal(const ProbeConnection *conn);
  void logSummary();
  void evictOne();
  void countFailure(const QString &address);

  LinkServer server_;
  QLocalServer localServer_;
  QByteArray token_;
  QByteArray psk_;
  // Failed handshakes by peer address (docs/user-guide.md, threat model).
  struct Strikes {
    int count = 0;
    qint64 lastMs = 0;  // the last failure
  };
  QHash<QString, Strikes> strikes_;
  QElapsedTimer clock_;
  int maxPending_ = kMaxPending;
  int helloDeadlineMs_ = ProbeConnection::kHelloDeadlineMs;
  QList<ProbeConnection *> pending_;  // oldest first
  // The log: refusals one line each, up to a budget per window; evictions
  // and refusals past the budget summed up by summaryTimer_.
  QElapsedTimer logWindow_;
  QTimer summaryTimer_;
  int loggedInWindow_ = 0;
  int refusedUnlogged_ = 0;
  int evictedUnlogged_ = 0;
};

}  // namespace tmnet

#endif
