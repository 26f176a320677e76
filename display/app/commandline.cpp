#include "commandline.h"

#include <QCommandLineParser>
#include <QRegularExpression>

#include "tokencheck.h"
#include "views.h"

QString parseDisplayOptions(const QStringList &args, DisplayOptions *out) {
  QCommandLineParser p;
  p.setApplicationDescription(QStringLiteral(
      "Shows threadmon sessions: live from probes connecting over TCP, or from .tmcap captures."));
  p.addHelpOption();
  p.addVersionOption();
  const QCommandLineOption listen(
      QStringLiteral("listen"),
      QStringLiteral("Listen for probes on ADDR:PORT (default 127.0.0.1:%1).").arg(tmnet::kDefaultPort),
      QStringLiteral("ADDR:PORT"));
  const QCommandLineOption token(QStringLiteral("token"),
                                 QStringLiteral("Shared token probes must present (default: "
                                                "$THREADMON_TOKEN). Needed off loopback."),
                                 QStringLiteral("TOKEN"));
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
                                  QStringLiteral("Select this sync object (symbol, e.g. lock, or id)."),
                                  QStringLiteral("NAME"));
  p.addOptions({listen, token, insecure, open, at, view, shot, size, object});
  p.addPositionalArgument(QStringLiteral("captures"), QStringLiteral("Captures to open."),
                          QStringLiteral("[FILE.tmcap...]"));
  p.process(args);

  QString error;
  if (p.isSet(listen) && !tmnet::parseListenAddress(p.value(listen), &out->listen, &error))
    return error;
  out->token = p.isSet(token) ? p.value(token).toUtf8() : qgetenv("THREADMON_TOKEN");
  error = tmnet::tokenProblem(out->token);
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
  out->screenshot = p.value(shot);
  if (!out->screenshot.isEmpty() && out->open.size() != 1)
    return QStringLiteral("--screenshot needs exactly one capture (--open FILE)");
  if (out->screenshot.isEmpty()) {
    const QString policy = tmnet::checkListenPolicy(out->listen, out->token, out->insecure);
    if (!policy.isEmpty()) return policy;
  }
  return QString();
}
