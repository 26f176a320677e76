// Comparing the probe's token with ours without leaking, through timing,
// how many leading bytes matched.
#ifndef THREADMON_NET_TOKENCHECK_H
#define THREADMON_NET_TOKENCHECK_H

#include <QByteArray>
#include <QString>

namespace tmnet {

// True when both tokens are equal. The time taken depends only on the
// length of `expected`, never on where the first difference is.
bool tokensEqual(const QByteArray &expected, const QByteArray &offered);

// "" when `token` may be used (empty: none), else one line why not. A token
// of only spaces is a slip (an unset variable in quotes, a stray key), not
// a secret.
QString tokenProblem(const QByteArray &token);

}  // namespace tmnet

#endif
