#include "tokencheck.h"

#include <QFile>

namespace tmnet {

bool tokensEqual(const QByteArray &expected, const QByteArray &offered) {
  // Walk all of `expected` whatever `offered` holds, folding every
  // difference (and a length mismatch) into one accumulator.
  unsigned diff = static_cast<unsigned>(expected.size() ^ offered.size());
  const qsizetype n = expected.size();
  const qsizetype m = offered.size();
  for (qsizetype i = 0; i < n; ++i) {
    const unsigned char a = static_cast<unsigned char>(expected[i]);
    const unsigned char b = m > 0 ? static_cast<unsigned char>(offered[i % m]) : 0u;
    diff |= static_cast<unsigned>(a ^ b);
  }
  return diff == 0;
}

QString tokenProblem(const QByteArray &token) {
  if (!token.isEmpty() && token.trimmed().isEmpty())
    return QStringLiteral("the token is only white space: give a real one, or none");
  return QString();
}

QString readTokenFile(const QString &path, QByteArray *token) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly))
    return QStringLiteral("cannot read the token file %1: %2").arg(path, f.errorString());
  // The probe takes at most 255 bytes; a longer first line is not a token.
  const QByteArray line = f.readLine(1024);
  QByteArray t = line.endsWith('\n') ? line.chopped(1) : line;
  if (t.endsWith('\r')) t.chop(1);
  if (t.isEmpty()) return QStringLiteral("the token file %1 is empty").arg(path);
  if (t.size() > 255) return QStringLiteral("the token in %1 is longer than 255 bytes").arg(path);
  *token = t;
  return tokenProblem(t);
}

QString tokenOnCommandLineWarning(const char *tool) {
  return QStringLiteral("%1: warning: --token on a command line is visible to every local user "
                        "(ps); use --token-file FILE or THREADMON_TOKEN")
      .arg(QLatin1String(tool));
}

}  // namespace tmnet
