// The TCP server probes connect to. Each accepted socket becomes a
// ProbeConnection; the app turns accepted connections into session tabs.
#ifndef THREADMON_NET_PROBELISTENER_H
#define THREADMON_NET_PROBELISTENER_H

#include <QObject>
#include <QTcpServer>

#include "listenaddress.h"

namespace tmnet {

class ProbeConnection;

class ProbeListener : public QObject {
  Q_OBJECT
 public:
  explicit ProbeListener(const QByteArray &token, QObject *parent = nullptr);

  // Returns "" or one line saying why listening failed.
  QString listen(const ListenAddress &addr);
  quint16 port() const { return server_.serverPort(); }
  QString addressText() const;

 signals:
  // A probe passed the Hello checks. The connection is parented to the
  // listener; whoever handles this may re-parent it.
  void sessionAccepted(tmnet::ProbeConnection *connection);
  // A probe was refused (wrong token, bad first frame, ...).
  void sessionRefused(const QString &peer, const QString &reason);

 private:
  void onNewConnection();

  QTcpServer server_;
  QByteArray token_;
};

}  // namespace tmnet

#endif
