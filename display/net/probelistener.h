// The TCP server (or Unix socket) probes connect to. Each accepted socket
// becomes a ProbeConnection; the app turns accepted connections into
// session tabs. A Unix socket's peer must run as the display's own user
// (SO_PEERCRED): any other is closed before it is read, in one line.
//
// Connections still waiting for their Hello are capped: a newer one closes
// the oldest, so strangers holding idle connections cannot keep a probe
// (which sends its Hello at once) out, nor run the display out of
// descriptors.
#ifndef THREADMON_NET_PROBELISTENER_H
#define THREADMON_NET_PROBELISTENER_H

#include <QElapsedTimer>
#include <QList>
#include <QLocalServer>
#include <QObject>
#include <QTcpServer>
#include <QTimer>

#include "listenaddress.h"
#include "probeconnection.h"

namespace tmnet {

class ProbeListener : public QObject {
  Q_OBJECT
 public:
  static constexpr int kMaxPending = 16;

  explicit ProbeListener(const QByteArray &token, QObject *parent = nullptr);

  // Returns "" or one line saying why listening failed.
  QString listen(const ListenAddress &addr);
  quint16 port() const { return server_.serverPort(); }
  QString addressText() const;
  // For tests: fewer pending connections, a shorter Hello deadline.
  void setHandshakeLimits(int maxPending, int helloDeadlineMs);
  // Connections open and not (yet) accepted as sessions.
  int pendingCount() const { return int(pending_.size()); }

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
  void adopt(ProbeConnection *conn);
  void logRefusal(const ProbeConnection *conn);
  void logSummary();

  QTcpServer server_;
  QLocalServer localServer_;
  QByteArray token_;
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
