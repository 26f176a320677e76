// threadmon-diff: what changed between two captures of a program, before
// and after a fix (docs/user-guide.md, "Export and compare").
// Exit status: 0 compared, 2 compared with a damaged capture, 1 unreadable
// or usage.
#include <QCoreApplication>
#include <QJsonDocument>
#include <cstdio>

#include "capturediff.h"
#include "capturereader.h"
#include "capturetree.h"
#include "reportstream.h"
#include "sessionmodel.h"
#include "usageerror.h"

using namespace tmon;

namespace {

int usage(FILE *to) {
  std::fputs(
      "usage: threadmon-diff [--json] [--top N] [--noise PCT] [--noise-ms MS] BEFORE.tmcap AFTER.tmcap\n"
      "  --json        JSON for scripts\n"
      "  --top N       changes listed (default 20; 0: all)\n"
      "  --noise PCT   a change under PCT% of the larger figure is noise (default 10)\n"
      "  --noise-ms MS a change under MS milliseconds is noise (default 5)\n",
      to);
  return to == stdout ? 0 : 1;
}

// The report's rows of a capture: read whole, or a window at a time when
// longer than one (as threadmon-report reads it).
CaptureLoadResult rowsOf(const QString &file, ReportRows *rows) {
  return StreamedReport::rows(file, rows);
}

}  // namespace

int main(int argc, char **argv) {
  QCoreApplication app(argc, argv);
  bool json = false;
  int top = 20;
  DiffOptions opt;
  QStringList files;
  const QStringList args = app.arguments().mid(1);
  for (int i = 0; i < args.size(); i++) {
    const QString a = args[i];
    bool ok = true;
    if (a == "--json") {
      json = true;
    } else if ((a == "--top" || a == "--noise" || a == "--noise-ms") && i + 1 < args.size()) {
      const double v = args[++i].toDouble(&ok);
      ok = ok && v >= 0;
      if (a == "--top") top = int(v);
      if (a == "--noise") opt.noiseShare = v / 100;
      if (a == "--noise-ms") opt.noiseFloorS = v / 1e3;
      if (!ok) {
        std::fprintf(stderr, "threadmon-diff: %s wants a number, not '%s'\n", qPrintable(a),
                     qPrintable(args[i]));
        return 1;
      }
    } else if (a == "-h" || a == "--help") {
      return usage(stdout);
    } else if (a.startsWith('-')) {
      return badOption("threadmon-diff", a, {"--top", "--noise", "--noise-ms"});
    } else {
      files << a;
    }
  }
  if (files.size() != 2)
    return usageError("threadmon-diff",
                      QString("two captures, BEFORE and AFTER, not %1").arg(files.size()));
  ReportRows rows[2];
  bool damaged = false;
  for (int k = 0; k < 2; k++) {
    // A process tree's directory: say which file in it to give, not "is a directory".
    if (CaptureTree::isTree(files[k])) {
      const QString main = CaptureTree::mainCapture(files[k]);
      std::fprintf(stderr,
                   "threadmon-diff: %s: a process tree's capture; diff compares one process's "
                   "capture%s (threadmon report %s lists them)\n",
                   qPrintable(files[k]),
                   main.isEmpty() ? "" : qPrintable(QStringLiteral(", such as ") + main),
                   qPrintable(files[k]));
      return 1;
    }
    const CaptureLoadResult res = rowsOf(files[k], &rows[k]);
    if (res.status == CaptureLoadResult::Unreadable) {
      std::fprintf(stderr, "threadmon-diff: %s: %s\n", qPrintable(files[k]), qPrintable(res.message));
      return 1;
    }
    if (res.status == CaptureLoadResult::Damaged) {
      damaged = true;
      std::fprintf(stderr, "threadmon-diff: %s: %s\n", qPrintable(files[k]), qPrintable(res.message));
    }
  }
  const CaptureDiff d = diffRows(rows[0], rows[1], opt);
  const QByteArray out = json ? QJsonDocument(diffJson(d)).toJson(QJsonDocument::Indented)
                              : diffText(d, top).toUtf8();
  std::fwrite(out.constData(), 1, size_t(out.size()), stdout);
  return damaged ? 2 : 0;
}
