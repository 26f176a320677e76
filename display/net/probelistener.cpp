#include "probelistener.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QFile>
#include <QLocalSocket>
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
  connect(&localServer_, &QLocalServer::newConnection, this,
          &ProbeListener::onNewLocalConnection);
  summaryTimer_.setSingleShot(true);
  connect(&summaryTimer_, &QTimer::timeout, this, &ProbeListener::logSummary);
}

QString ProbeListener::listen(const ListenAddress &addr) {
  if (!addr.unixPath.isEmpty()) {
    // A name already there is refused (it may be another display's, or
    // planted), never replaced: Qt binds in a directory of its own and
    // renames the socket into place, over whatever had the name.
    struct stat st;
    if (lstat(QFile::encodeName(addr.unixPath).constData(), &st) == 0)
      return tr("cannot listen on unix:%1: the name exists already").arg(addr.unixPath);
    // Read and write for the owner only: the peer check below is the
    // proof, the mode a second fence.
    localServer_.setSocketOptions(QLocalServer::UserAccessOption);
    if (localServer_.listen(addr.unixPath)) return QString();
    return tr("cannot listen on unix:%1: %2").arg(addr.unixPath, localServer_.errorString());
  }
  if (server_.listen(addr.host, addr.port)) return QString();
  return tr("cannot listen on %1:%2: %3")
      .arg(addr.host.toString())
      .arg(addr.port)
      .arg(server_.errorString());
}

QString ProbeListener::addressText() const {
  if (localServer_.isListening()) return QStringLiteral("unix:") + localServer_.fullServerName();
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
  while (QTcpSocket *socket = server_.nextPendingConnection())
    adopt(new ProbeConnection(socket, token_, this, helloDeadlineMs_));
}

void ProbeListener::onNewLocalConnection() {
  while (QLocalSocket *socket = localServer_.nextPendingConnection()) {
    struct ucred cred {};
    socklen_t len = sizeof cred;
    const int fd = int(socket->socketDescriptor());
    const bool known = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
    if (known && (cred.uid == getuid() || cred.uid == geteuid())) {
      adopt(new ProbeConnection(socket, token_, this, helloDeadlineMs_));
      continue;
    }
    const QString peer = known ? QStringLiteral("unix:pid %1").arg(cred.pid) : QStringLiteral("unix");
    const QString why = known ? tr("runs as uid %1, not as this display's user (uid %2)")
                                    .arg(cred.uid)
                                    .arg(geteuid())
                              : tr("cannot tell who it is (SO_PEERCRED failed)");
    qWarning("threadmon-display: refused %s: %s", qPrintable(peer), qPrintable(why));
    socket->abort();
    socket->deleteLater();
    emit sessionRefused(peer, why);
  }
}

void ProbeListener::adopt(ProbeConnection *conn) {
  if (pending_.size() >= maxPending_) pending_.first()->evict();
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

}  // namespace tmnet
