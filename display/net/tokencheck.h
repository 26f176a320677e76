// Comparing the probe's token with ours without leaking, through timing,
// how many leading bytes matched.
#ifndef THREADMON_NET_TOKENCHECK_H
#define THREADMON_NET_TOKENCHECK_H

#include <QByteArray>

namespace tmnet {

// True when both tokens are equal. The time taken depends only on the
// length of `expected`, never on where the first difference is.
bool tokensEqual(const QByteArray &expected, const QByteArray &offered);

}  // namespace tmnet

#endif
