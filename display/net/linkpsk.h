// The encrypted link's key (docs/format.md, "The encrypted link"): TLS 1.2
// ECDHE-PSK-CHACHA20-POLY1305, identity "threadmon", and a pre-shared key
// derived from the token with HKDF-SHA256. threadmon-relay derives the
// same key with OpenSSL (relay/psk.h); both must change together.
#ifndef THREADMON_NET_LINKPSK_H
#define THREADMON_NET_LINKPSK_H

#include <QByteArray>

class QSslSocket;

namespace tmnet {

// HKDF-SHA256 (RFC 5869) of the token: no salt, info "threadmon link psk v1",
// 32 bytes. Empty for an empty token.
QByteArray linkPsk(const QByteArray &token);

// Makes `socket` a server end of the link with `psk` (ciphers, protocol, the
// key given to a client that names our identity) and starts the handshake.
void startLinkServer(QSslSocket *socket, const QByteArray &psk);

// True when Qt has a TLS backend that does PSK (Debian 12's OpenSSL does).
bool linkTlsAvailable();

}  // namespace tmnet

#endif
