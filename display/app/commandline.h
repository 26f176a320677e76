// threadmon-display's command line.
#ifndef THREADMON_APP_COMMANDLINE_H
#define THREADMON_APP_COMMANDLINE_H

#include <QByteArray>
#include <QString>
#include <QStringList>

#include "listenaddress.h"
#include "livesession.h"

struct DisplayOptions {
  tmnet::ListenAddress listen;
  QByteArray token;       // --token-file's, --token, else THREADMON_TOKEN
  QStringList warnings;   // lines to say before starting (a token on the command line)
  bool insecure = false;
  QStringList open;       // --open and positional captures
  double at = -1;         // --at SECONDS, -1: the end
  QString view = QStringLiteral("threads");
  QString screenshot;     // --screenshot OUT.png: render and exit
  QString size = QStringLiteral("1100x700");
  QString object;         // --object NAME: sync object to select (symbol prefix or id)
  FlightOptions flight;   // --last, --trigger, --trigger-dir: live sessions' flight recorder
  bool listenSet = false;  // --listen given (with --stdin: listen as well)
  bool stdinStreams = false;  // --stdin: the streams `threadmon run --display --ssh` relays
};

// "60s", "500ms", "5m", "1h" (a bare number: seconds) in ns, from 100 ms to
// 24 h as `threadmon record --last` takes them; 0 when not one.
uint64_t parseLastDuration(const QString &text);

// Parses arguments (exits on --help/--version). Returns "" or one error line.
QString parseDisplayOptions(const QStringList &args, DisplayOptions *out);

#endif
