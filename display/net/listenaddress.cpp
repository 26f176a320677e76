#include "listenaddress.h"

namespace tmnet {

static bool parsePort(const QString &text, quint16 *port) {
  bool ok = false;
  const uint v = text.toUInt(&ok);
  if (!ok || v > 65535) return false;
  *port = static_cast<quint16>(v);
  return true;
}

bool parseListenAddress(const QString &text, ListenAddress *out, QString *error) {
  ListenAddress a;
  if (text.startsWith(QLatin1String("unix:"))) {
    a.unixPath = text.mid(5);
    // sun_path holds 107 bytes and its end.
    if (!a.unixPath.startsWith('/') || a.unixPath.toLocal8Bit().size() > 107) {
      *error = QStringLiteral("bad listen address '%1' (expected unix:/absolute/path, at most "
                              "107 bytes)")
                   .arg(text);
      return false;
    }
    *out = a;
    return true;
  }
  QString host;
  QString port;
  if (text.startsWith('[')) {
    const qsizetype close = text.indexOf(']');
    if (close < 0 || text.mid(close + 1, 1) != ":") {
      *error = QStringLiteral("bad listen address '%1' (expected [ADDR]:PORT)").arg(text);
      return false;
    }
    host = text.mid(1, close - 1);
    port = text.mid(close + 2);
  } else if (text.count(':') == 1) {
    host = text.section(':', 0, 0);
    port = text.section(':', 1);
  } else if (!text.contains(':')) {
    port = text;
  } else {
    *error = QStringLiteral("bad listen address '%1' (write IPv6 as [ADDR]:PORT)").arg(text);
    return false;
  }
  if (!parsePort(port, &a.port)) {
    *error = QStringLiteral("bad port '%1' in listen address '%2'").arg(port, text);
    return false;
  }
  if (host.isEmpty() && text.contains(':')) {
    a.host = QHostAddress(QHostAddress::Any);
  } else if (host == QLatin1String("localhost")) {
    a.host = QHostAddress(QHostAddress::LocalHost);
  } else if (!host.isEmpty() && !a.host.setAddress(host)) {
    *error = QStringLiteral("bad host '%1' in listen address '%2' (use an IP address)")
                 .arg(host, text);
    return false;
  }
  *out = a;
  return true;
}

QString checkListenPolicy(const ListenAddress &addr, const QByteArray &token,
                          bool insecure) {
  if (!addr.unixPath.isEmpty() || addr.host.isLoopback() || insecure || !token.isEmpty()) return QString();
  return QStringLiteral(
             "listening on %1 accepts probes from the network: set a token with "
             "--token or THREADMON_TOKEN, or pass --insecure")
      .arg(addr.host.toString());
}

}  // namespace tmnet
