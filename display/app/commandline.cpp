#include "commandline.h"

#include <QCommandLineParser>
#include <QRegularExpression>

#include "flightrecorder.h"
#include "tokencheck.h"
#include "views.h"

uint64_t parseLastDuration(const QString &text) {
  const QRegularExpressionMatch m =
      QRegularExpression(QStringLiteral("^(\\d+(?:\\.\\d+)?)(ms|s|m|h)?$")).match(text);
  if (!m.hasMatch()) return 0;
  const QString unit = m.captured(2);
  const double scale = unit == QLatin1String("ms")  ? 1e6
                       : unit == QLatin1String("m") ? 60e9
                       : unit == QLatin1String("h") ? 3600e9
                                                    : 1e9;
  const double ns = m.captured(1).toDouble() * scale;
  return ns >= 100e6 && ns <= 24 * 3600e9 ? uint64_t(ns) : 0;
}

QString parseDisplayOptions(const QStringList &args, DisplayOptions *out) {
  QCommandLineParser p;
  p.setApplicationDescription(QStringLiteral(
      "Shows threadmon sessions: live from probes connecting over TCP, or from .tmcap captures."));
  p.addHelpOption();
  p.addVersionOption();
  const QCommandLineOption listen(
      QStringLiteral("listen"),
      QStringLiteral("Listen for probes on ADDR:PORT (default 127.0.0.1:%1), or on a Unix "
                     "socket, unix:PATH, that only this user's probes may use.")
          .arg(tmnet::kDefaultPort),
      QStringLiteral("ADDR:PORT"));
  const QCommandLineOption token(QStringLiteral("token"),
                                 QStringLiteral("Shared token probes must present (default: "
                                                "$THREADMON_TOKEN). Needed off loopback. "
                                                "Visible to other users: prefer --token-file."),
                                 QStringLiteral("TOKEN"));
  const QCommandLineOption tokenFile(
      QStringLiteral("token-file"),
      QStringLiteral("Read the token from the first line of FILE."), QStringLiteral("FILE"));
  const QCommandLineOption insecure(QStringLiteral("insecure"),
                                    QStringLiteral("Allow a non-loopback listen without a token."));
  const QCommandLineOption open(QStringLiteral("open"), QStringLiteral("Open a .tmcap capture."),
                                QStringLiteral("FILE"));
  const QCommandLineOption at(QStringLiteral("at"),
                              QStringLiteral("Replay position, seconds since the start."),
                              QStringLiteral("SECONDS"));
  const QString views = tmon::viewNames().join(QStringLiteral(", "));
  const QCommandLineOption view(QStringLiteral("view"),
                                QStringLiteral("View to show: %1, or window (all).").arg(views),
                                QStringLiteral("VIEW"));
  const QCommandLineOption shot(QStringLiteral("screenshot"),
                                QStringLiteral("Render the view of the opened capture to a PNG and exit."),
                                QStringLiteral("OUT.png"));
  const QCommandLineOption size(QStringLiteral("size"),
                                QStringLiteral("Screenshot size, WIDTHxHEIGHT (default 1100x700)."),
                                QStringLiteral("WxH"));
  const QCommandLineOption object(QStringLiteral("object"),
                                  QStringLiteral("Select this sync object (symbol, e.g. lock; the "
                                                 "start of its name, e.g. table->lock; or id)."),
                                  QStringLiteral("NAME"));
  const QCommandLineOption last(
      QStringLiteral("last"),
      QStringLiteral("Flight recorder for live sessions: keep only the last DURATION (60s, 5m) "
                     "of detail, whole-run totals kept, saved with File > Save last (the stream "
                     "is not spooled to disk then)."),
      QStringLiteral("DURATION"));
  const QCommandLineOption trigger(
      QStringLiteral("trigger"),
      QStringLiteral("With --last, also save a capture when WHAT happens: 'deadlock', "
                     "'wait>200ms' (repeatable)."),
      QStringLiteral("WHAT"));
  const QCommandLineOption triggerAfter(
      QStringLiteral("trigger-after"),
      QStringLiteral("Write a trigger's capture MS after it fired, with what followed "
                     "(default 1000; 0: at once)."),
      QStringLiteral("MS"));
  const QCommandLineOption triggerLimit(
      QStringLiteral("trigger-limit"),
      QStringLiteral("Write at most N trigger captures a session (default 10; 0: no limit)."),
      QStringLiteral("N"));
  const QCommandLineOption triggerDir(
      QStringLiteral("trigger-dir"),
      QStringLiteral("Where triggered captures go (default: the current directory)."),
      QStringLiteral("DIR"));
  const QCommandLineOption stdinStreams(
      QStringLiteral("stdin"),
      QStringLiteral("Show the sessions threadmon's launcher relays from a remote host on "
                     "standard input (threadmon run --display --ssh); no port is opened unless "
                     "--listen is given."));
  p.addOptions({listen, token, tokenFile, insecure, open, at, view, shot, size, object, last,
                trigger, triggerAfter, triggerLimit, triggerDir, stdinStreams});
  p.addPositionalArgument(QStringLiteral("captures"), QStringLiteral("Captures to open."),
                          QStringLiteral("[FILE.tmcap...]"));
  p.process(args);

  QString error;
  if (p.isSet(listen) && !tmnet::parseListenAddress(p.value(listen), &out->listen, &error))
    return error;
  out->listenSet = p.isSet(listen);
  out->stdinStreams = p.isSet(stdinStreams);
  if (p.isSet(token) && p.isSet(tokenFile))
    return QStringLiteral("give --token or --token-file, not both");
  if (p.isSet(tokenFile)) {
    error = tmnet::readTokenFile(p.value(tokenFile), &out->token);
  } else {
    if (p.isSet(token)) out->warnings << tmnet::tokenOnCommandLineWarning("threadmon-display");
    out->token = p.isSet(token) ? p.value(token).toUtf8() : qgetenv("THREADMON_TOKEN");
    error = tmnet::tokenProblem(out->token);
  }
  if (!error.isEmpty()) return error;
  out->insecure = p.isSet(insecure);
  out->open = p.values(open) + p.positionalArguments();
  if (p.isSet(at)) {
    bool ok = false;
    out->at = p.value(at).toDouble(&ok);
    if (!ok || out->at < 0) return QStringLiteral("--at needs a number of seconds >= 0");
  }
  if (p.isSet(view)) {
    out->view = p.value(view);
    tmon::ViewKind kind;
    if (out->view != QLatin1String("window") && !tmon::parseViewKind(out->view, &kind))
      return QStringLiteral("unknown view '%1' (%2, window)").arg(out->view, views);
  }
  if (p.isSet(size)) {
    out->size = p.value(size);
    if (!QRegularExpression(QStringLiteral("^\\d{2,5}x\\d{2,5}$")).match(out->size).hasMatch())
      return QStringLiteral("--size needs WIDTHxHEIGHT, e.g. 1100x700");
  }
  out->object = p.value(object);
  if (p.isSet(last)) {
    out->flight.lastNs = parseLastDuration(p.value(last));
    if (!out->flight.lastNs)
      return QStringLiteral("--last wants a duration from 100ms to 24h (60s, 500ms, 5m), not '%1'")
          .arg(p.value(last));
  }
  for (const QString &t : p.values(trigger)) {
    if (!out->flight.lastNs)
      return QStringLiteral("--trigger needs --last (the window the capture keeps)");
    const QString problem = tmnet::FlightRecorder::triggerProblem(t);
    if (!problem.isEmpty()) return problem;
    out->flight.triggers << t;
  }
  if (p.isSet(triggerDir)) out->flight.triggerDir = p.value(triggerDir);
  for (const QCommandLineOption *o : {&triggerAfter, &triggerLimit}) {
    if (!p.isSet(*o)) continue;
    const QString name = o->names().constFirst();
    if (out->flight.triggers.isEmpty())
      return QStringLiteral("--%1 goes with --trigger (and --last)").arg(name);
    bool ok = false;
    const qulonglong v = p.value(*o).toULongLong(&ok);
    if (!ok || v > (o == &triggerAfter ? 3600000ull : 100000ull))
      return QStringLiteral("--%1 wants %2, not '%3'")
          .arg(name,
               o == &triggerAfter ? QStringLiteral("milliseconds (0-3600000)")
                                  : QStringLiteral("a count (0-100000)"),
               p.value(*o));
    if (o == &triggerAfter)
      out->flight.triggerAfterNs = v * 1000000ull;
    else
      out->flight.triggerLimit = int(v);
  }
  out->screenshot = p.value(shot);
  if (!out->screenshot.isEmpty() && out->open.size() != 1)
    return QStringLiteral("--screenshot needs exactly one capture (--open FILE)");
  if (out->screenshot.isEmpty()) {
    const QString policy = tmnet::checkListenPolicy(out->listen, out->token, out->insecure);
    if (!policy.isEmpty()) return policy;
  }
  return QString();
}
