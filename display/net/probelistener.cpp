#include "probelistener.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QCoreApplication>
#include <QFile>
#include <QLocalSocket>
#include <QSslSocket>
#include <QTcpSocket>

#include "linkpsk.h"

// Messages name the program they come from: the display or threadmon-receive.
static QByteArray logName() {
  return QCoreApplication::applicationName().toLocal8Bit();
}

namespace tmnet {

namespace {

// One line per refused connection, but a flood of them (a port scan, a
// stranger retrying) must not fill the log: past this many in a window the
// rest are counted, and so are the connections closed to make room (the
// flood itself); both are summed up in a line soon after.
constexpr int kLogLinesPerWindow = 20;
constexpr qint64 kLogWindowMs = 10000;
constexpr int kSummaryAfterMs = 2000;
// Addresses remembered for their failures, at most.
constexpr int kMaxStruckAddresses = 4096;

}  // namespace

void LinkServer::incomingConnection(qintptr descriptor) {
  if (!tls) {
    QTcpServer::incomingConnection(descriptor);
    return;
  }
  auto *socket = new QSslSocket(this);
  if (!socket->setSocketDescriptor(descriptor)) {
    delete socket;
    return;
  }
  addPendingConnection(socket);
}

ProbeListener::ProbeListener(const QByteArray &token, QObject *parent, Link link)
    : QObject(parent), token_(token) {
  if (link == Link::TlsWithToken) psk_ = linkPsk(token);
  server_.tls = !psk_.isEmpty();
  clock_.start();
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
  if (encrypted() && !linkTlsAvailable())
    return tr("a token makes every link TLS, and this Qt has no TLS backend with PSK "
              "(Debian: the libssl3 package)");
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
    qWarning("%s: refused %s: %s", logName().constData(), qPrintable(conn->peer()),
             qPrintable(conn->error()));
    return;
  } else {
    ++refusedUnlogged_;
  }
  if (!summaryTimer_.isActive()) summaryTimer_.start(kSummaryAfterMs);
}

void ProbeListener::logSummary() {
  if (evictedUnlogged_ > 0)
    qWarning(
        "%s: closed %d connections that waited for a Hello, to make room "
        "for newer ones (at most %d wait)",
        logName().constData(), evictedUnlogged_, maxPending_);
  if (refusedUnlogged_ > 0)
    qWarning("%s: refused %d more connections (not logged one by one)", logName().constData(),
             refusedUnlogged_);
  evictedUnlogged_ = refusedUnlogged_ = 0;
}

int ProbeListener::handshakeDelayFor(const QString &address) {
  auto it = strikes_.find(address);
  if (it == strikes_.end()) return 0;
  const qint64 now = clock_.elapsed();
  if (now - it->lastMs > kForgetMs) {
    strikes_.erase(it);
    return 0;
  }
  // Each waits alone, not queued behind the others: a stranger's failures
  // must not hold a probe from the same address (NAT, loopback) past its
  // deadline. Guesses in parallel are bounded by kMaxPending.
  return int(qMin<qint64>(qint64(kFirstDelayMs) << qMin(it->count - 1, 16), kMaxDelayMs));
}

void ProbeListener::countFailure(const QString &address) {
  const qint64 now = clock_.elapsed();
  if (strikes_.size() >= kMaxStruckAddresses) {
    for (auto it = strikes_.begin(); it != strikes_.end();)
      it = now - it->lastMs > kForgetMs ? strikes_.erase(it) : std::next(it);
    if (strikes_.size() >= kMaxStruckAddresses) strikes_.clear();
  }
  Strikes &s = strikes_[address];
  ++s.count;
  s.lastMs = now;
}

// Strangers go first: a connection that proved the key (encrypted, its
// Hello on the way) is closed only when every waiting one did.
void ProbeListener::evictOne() {
  for (ProbeConnection *c : std::as_const(pending_)) {
    if (!c->authenticated()) {
      c->evict();
      return;
    }
  }
  pending_.first()->evict();
}

void ProbeListener::onNewConnection() {
  while (QTcpSocket *socket = server_.nextPendingConnection()) {
    const QString address = socket->peerAddress().toString();
    const int delay = encrypted() ? handshakeDelayFor(address) : 0;
    adopt(new ProbeConnection(socket, token_, this, helloDeadlineMs_, psk_, delay), address);
  }
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
    qWarning("%s: refused %s: %s", logName().constData(), qPrintable(peer), qPrintable(why));
    socket->abort();
    socket->deleteLater();
    emit sessionRefused(peer, why);
  }
}

void ProbeListener::adopt(ProbeConnection *conn, const QString &address) {
  if (pending_.size() >= maxPending_) evictOne();
  pending_.append(conn);
  // Until the Hello is checked the connection is only the listener's; a
  // refused one never becomes a session.
  connect(conn, &ProbeConnection::accepted, this, [this, conn] {
    pending_.removeOne(conn);
    emit sessionAccepted(conn);
  });
  connect(conn, &ProbeConnection::closed, this, [this, conn, address] {
    if (conn->wasAccepted()) return;
    pending_.removeOne(conn);
    if (conn->failedAuthentication()) countFailure(address);
    if (conn->state() == ProbeConnection::State::Failed) {
      logRefusal(conn);
      emit sessionRefused(conn->peer(), conn->error());
    }
    conn->deleteLater();
  });
}

}  // namespace tmnet
