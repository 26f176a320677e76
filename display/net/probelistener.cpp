#include "probelistener.h"

#include <QTcpSocket>

namespace tmnet {

namespace {

// One line per refused connection, but a flood of them (a port scan, a
// stranger retrying) must not fill the log: past this many in a window the
// rest are counted and summed up in one line.
constexpr int kLogLinesPerWindow = 20;
constexpr qint64 kLogWindowMs = 10000;

}  // namespace

ProbeListener::ProbeListener(const QByteArray &token, QObject *parent)
    : QObject(parent), token_(token) {
  connect(&server_, &QTcpServer::newConnection, this, &ProbeListener::onNewConnection);
}

QString ProbeListener::listen(const ListenAddress &addr) {
  if (server_.listen(addr.host, addr.port)) return QString();
  return tr("cannot listen on %1:%2: %3")
      .arg(addr.host.toString())
      .arg(addr.port)
      .arg(server_.errorString());
}

QString ProbeListener::addressText() const {
  return QStringLiteral("%1:%2").arg(server_.serverAddress().toString()).arg(server_.serverPort());
}

void ProbeListener::setHandshakeLimits(int maxPending, int helloDeadlineMs) {
  maxPending_ = qMax(1, maxPending);
  helloDeadlineMs_ = helloDeadlineMs;
}

void ProbeListener::logRefusal(const QString &peer, const QString &reason) {
  if (!logWindow_.isValid() || logWindow_.elapsed() > kLogWindowMs) {
    if (unloggedInWindow_ > 0)
      qWarning("threadmon-display: %d more connections refused in %lld s (not logged one by one)",
               unloggedInWindow_, static_cast<long long>(logWindow_.elapsed() / 1000));
    logWindow_.start();
    loggedInWindow_ = unloggedInWindow_ = 0;
  }
  if (loggedInWindow_ < kLogLinesPerWindow) {
    ++loggedInWindow_;
    qWarning("threadmon-display: refused %s: %s", qPrintable(peer), qPrintable(reason));
  } else {
    ++unloggedInWindow_;
  }
}

void ProbeListener::onNewConnection() {
  while (QTcpSocket *socket = server_.nextPendingConnection()) {
    if (pending_.size() >= maxPending_) pending_.first()->evict();
    auto *conn = new ProbeConnection(socket, token_, this, helloDeadlineMs_);
    pending_.append(conn);
    // Until the Hello is checked the connection is only the listener's; a
    // refused one never becomes a session.
    connect(conn, &ProbeConnection::accepted, this, [this, conn] {
      pending_.removeOne(conn);
      emit sessionAccepted(conn);
    });
    connect(conn, &ProbeConnection::closed, this, [this, conn] {
      if (conn->wasAccepted()) return;
      pending_.removeOne(conn);
      if (conn->state() == ProbeConnection::State::Failed) {
        logRefusal(conn->peer(), conn->error());
        emit sessionRefused(conn->peer(), conn->error());
      }
      conn->deleteLater();
    });
  }
}

}  // namespace tmnet
