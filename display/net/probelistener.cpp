#include "probelistener.h"

#include <QTcpSocket>

namespace tmnet {

namespace {

// One line per refused connection, but a flood of them (a port scan, a
// stranger retrying) must not fill the log: past this many in a window the
// rest are counted, and so are the connections closed to make room (the
// flood itself); both are summed up in a line soon after.
constexpr int kLogLinesPerWindow = 20;
constexpr qint64 kLogWindowMs = 10000;
constexpr int kSummaryAfterMs = 2000;

}  // namespace

ProbeListener::ProbeListener(const QByteArray &token, QObject *parent)
    : QObject(parent), token_(token) {
  connect(&server_, &QTcpServer::newConnection, this, &ProbeListener::onNewConnection);
  summaryTimer_.setSingleShot(true);
  connect(&summaryTimer_, &QTimer::timeout, this, &ProbeListener::logSummary);
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

void ProbeListener::logRefusal(const ProbeConnection *conn) {
  if (!logWindow_.isValid() || logWindow_.elapsed() > kLogWindowMs) {
    logWindow_.start();
    loggedInWindow_ = 0;
  }
  if (conn->refusalReason() == THREADMON__REFUSAL_REASON__REFUSED_BUSY) {
    ++evictedUnlogged_;
  } else if (loggedInWindow_ < kLogLinesPerWindow) {
    ++loggedInWindow_;
    qWarning("threadmon-display: refused %s: %s", qPrintable(conn->peer()),
             qPrintable(conn->error()));
    return;
  } else {
    ++refusedUnlogged_;
  }
  if (!summaryTimer_.isActive()) summaryTimer_.start(kSummaryAfterMs);
}

void ProbeListener::logSummary() {
  if (evictedUnlogged_ > 0)
    qWarning("threadmon-display: closed %d connections that waited for a Hello, to make room "
             "for newer ones (at most %d wait)",
             evictedUnlogged_, maxPending_);
  if (refusedUnlogged_ > 0)
    qWarning("threadmon-display: refused %d more connections (not logged one by one)",
             refusedUnlogged_);
  evictedUnlogged_ = refusedUnlogged_ = 0;
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
        logRefusal(conn);
        emit sessionRefused(conn->peer(), conn->error());
      }
      conn->deleteLater();
    });
  }
}

}  // namespace tmnet
