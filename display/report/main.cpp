// threadmon-report: a terminal or JSON summary of a threadmon capture.
// Exit status: 0 complete, 2 damaged (cut short, or values dropped or
// clamped) but reported, 1 unreadable or usage.
#include <QCoreApplication>
#include <QJsonDocument>

#include <cstdio>

#include "capturereader.h"
#include "reportjson.h"
#include "reporttext.h"
#include "sessionmodel.h"

namespace {

int usage(FILE *to) {
  std::fputs("usage: threadmon-report [--json] FILE.tmcap\n", to);
  return to == stdout ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
  QCoreApplication app(argc, argv);
  bool json = false;
  QString file;
  QStringList args = app.arguments().mid(1);
  for (const QString &a : args) {
    if (a == "--json") {
      json = true;
    } else if (a == "-h" || a == "--help") {
      return usage(stdout);
    } else if (a.startsWith('-') || !file.isEmpty()) {
      return usage(stderr);
    } else {
      file = a;
    }
  }
  if (file.isEmpty()) return usage(stderr);

  tmon::SessionModel model;
  tmon::CaptureLoadResult res = tmon::CaptureReader::load(file, &model);
  if (res.status == tmon::CaptureLoadResult::Unreadable) {
    std::fprintf(stderr, "threadmon-report: %s: %s\n", qPrintable(file), qPrintable(res.message));
    return 1;
  }
  if (res.status == tmon::CaptureLoadResult::Damaged)
    std::fprintf(stderr, "threadmon-report: %s: %s\n", qPrintable(file), qPrintable(res.message));
  // Values the reader could not trust: the capture is damaged, though its
  // framing is whole.
  const QStringList &warnings = model.info().inputWarnings;
  for (const QString &w : warnings)
    std::fprintf(stderr, "threadmon-report: %s: %s\n", qPrintable(file), qPrintable(w));

  QJsonObject report = reportJson(model);
  QByteArray out = json ? QJsonDocument(report).toJson(QJsonDocument::Indented)
                        : reportText(report).toUtf8();
  std::fwrite(out.constData(), 1, size_t(out.size()), stdout);
  return res.status == tmon::CaptureLoadResult::Complete && warnings.isEmpty() ? 0 : 2;
}
