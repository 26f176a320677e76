// Where threadmon-display listens, and whether that is allowed.
#ifndef THREADMON_NET_LISTENADDRESS_H
#define THREADMON_NET_LISTENADDRESS_H

#include <QHostAddress>
#include <QString>

namespace tmnet {

// The documented default: loopback only, port 7411.
constexpr quint16 kDefaultPort = 7411;

struct ListenAddress {
  ListenAddress() = default;
  ListenAddress(const QHostAddress &h, quint16 p) : host(h), port(p) {}
  QHostAddress host = QHostAddress(QHostAddress::LocalHost);
  quint16 port = kDefaultPort;
  // "unix:PATH": a Unix socket at this absolute path instead (host and port
  // unused); only the display's own user may connect to it.
  QString unixPath;
};

// Parses "ADDR:PORT", "[v6]:PORT", ":PORT" (all interfaces), "PORT" or
// "unix:/absolute/path".
// Returns false and sets *error to one line when the text is not an address.
bool parseListenAddress(const QString &text, ListenAddress *out, QString *error);

// A non-loopback listen exposes the probe stream port to the network, so it
// needs a token unless the user said --insecure. Returns "" when allowed,
// otherwise the one-line reason.
QString checkListenPolicy(const ListenAddress &addr, const QByteArray &token,
                          bool insecure);

}  // namespace tmnet

#endif
