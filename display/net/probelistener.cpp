#include "probelistener.h"

#include <QTcpSocket>

#include "probeconnection.h"

namespace tmnet {

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

void ProbeListener::onNewConnection() {
  while (QTcpSocket *socket = server_.nextPendingConnection()) {
    auto *conn = new ProbeConnection(socket, token_, this);
    // Until the Hello is checked the connection is only the listener's; a
    // refused one never becomes a session.
    connect(conn, &ProbeConnection::accepted, this, [this, conn] { emit sessionAccepted(conn); });
    connect(conn, &ProbeConnection::closed, this, [this, conn] {
      if (!conn->wasAccepted()) {
        emit sessionRefused(conn->peer(), conn->error());
        conn->deleteLater();
      }
    });
  }
}

}  // namespace tmnet
