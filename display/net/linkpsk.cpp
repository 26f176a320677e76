#include "linkpsk.h"

#include <QCryptographicHash>
#include <QMessageAuthenticationCode>
#include <QSslCipher>
#include <QSslConfiguration>
#include <QSslPreSharedKeyAuthenticator>
#include <QSslSocket>

namespace tmnet {

namespace {
constexpr char kIdentity[] = "threadmon";
constexpr char kLabel[] = "threadmon link psk v1";
constexpr char kCipher[] = "ECDHE-PSK-CHACHA20-POLY1305";
}  // namespace

QByteArray linkPsk(const QByteArray &token) {
  if (token.isEmpty()) return QByteArray();
  // Extract with the all-zero salt, then one block of expand: 32 bytes.
  const QByteArray prk = QMessageAuthenticationCode::hash(token, QByteArray(32, '\0'),
                                                          QCryptographicHash::Sha256);
  return QMessageAuthenticationCode::hash(QByteArray(kLabel) + '\x01', prk,
                                          QCryptographicHash::Sha256);
}

void startLinkServer(QSslSocket *socket, const QByteArray &psk) {
  QSslConfiguration conf = QSslConfiguration::defaultConfiguration();
  conf.setProtocol(QSsl::TlsV1_2);
  conf.setCiphers({QSslCipher(QString::fromLatin1(kCipher))});
  conf.setPeerVerifyMode(QSslSocket::VerifyNone);  // the key authenticates both ends
  socket->setSslConfiguration(conf);
  QObject::connect(socket, &QSslSocket::preSharedKeyAuthenticationRequired, socket,
                   [psk](QSslPreSharedKeyAuthenticator *auth) {
                     // An unknown identity gets no key: the handshake fails.
                     if (auth->identity() == kIdentity) auth->setPreSharedKey(psk);
                   });
  socket->startServerEncryption();
}

bool linkTlsAvailable() {
  return QSslSocket::supportsSsl() && QSslSocket::isFeatureSupported(QSsl::SupportedFeature::Psk);
}

}  // namespace tmnet
