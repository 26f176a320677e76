#include "tokencheck.h"

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

}  // namespace tmnet
