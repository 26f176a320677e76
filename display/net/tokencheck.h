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

// The token in file `path` (--token-file): its first line, without the
// line's end. Returns "" or one line saying why it cannot be used.
QString readTokenFile(const QString &path, QByteArray *token);

// The line said when a token is given on a command line, where every local
// user reads it (ps, /proc/PID/cmdline).
QString tokenOnCommandLineWarning(const char *tool);

}  // namespace tmnet

#endif
