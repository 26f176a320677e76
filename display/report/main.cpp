// threadmon-report: a terminal or JSON summary of a threadmon capture.
// Exit status: 0 complete, 2 damaged (cut short, or values dropped or
// clamped) but reported, 1 unreadable or usage; with --check, 3 when a
// number breaks an invariant (modelinvariants.h; each is one line on stderr,
// with or without --check).
#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <cstdio>

#include "capturereader.h"
#include "framesizes.h"
#include "reportjson.h"
#include "reportrows.h"
#include "reportstream.h"
#include "reporttext.h"
#include "sessionmodel.h"

namespace {

// Captures larger than this are read a window at a time (as the display does).
constexpr qint64 kStreamFromBytes = 64ll << 20;

int usage(FILE *to) {
  std::fputs(
      "usage: threadmon-report [--json] [--top N] [--thread PATTERN]... [--check] FILE.tmcap\n"
      "       threadmon-report --sizes FILE.tmcap\n"
      "  --json            JSON for scripts (docs/report-json.md)\n"
      "  --top N           rows per table of the text report (default 30; 0: all)\n"
      "  --thread PATTERN  only threads whose name contains PATTERN or whose tid is it;\n"
      "                    * ? [ make it a glob over the whole name or tid (repeatable)\n"
      "  --sizes           bytes per frame kind and field, bytes on disk, MB/s\n"
      "  --stream          read the capture a window at a time (bounded memory; the\n"
      "                    default for captures over 64 MiB); --whole: read it whole\n"
      "  --window S        seconds per window when streaming (default 10)\n"
      "  --check           exit 3 when a number cannot be true (a thread's states past\n"
      "                    its life, waits past the window: one line each on stderr)\n",
      to);
  return to == stdout ? 0 : 1;
}

// --json keeps only the threads --thread asked for.
void keepThreads(QJsonObject &report, const ThreadFilter &filter) {
  QJsonArray kept;
  for (const QJsonValue &v : report["threads"].toArray())
    if (filter.matches(uint32_t(v["tid"].toInteger()), v["name"].toString())) kept.append(v);
  report["threads"] = kept;
}

}  // namespace

int main(int argc, char **argv) {
  QCoreApplication app(argc, argv);
  bool json = false;
  bool sizes = false;
  bool check = false;
  enum { Auto, Stream, Whole } mode = Auto;
  int64_t windowNs = StreamedReport::kChunkNs;
  QString file;
  TextOptions text;
  QStringList patterns;
  QStringList args = app.arguments().mid(1);
  for (int i = 0; i < args.size(); i++) {
    QString a = args[i];
    // "--top=5" and "--top 5" alike.
    QString value;
    bool hasValue = false;
    for (const char *opt : {"--top", "--thread", "--window"}) {
      if (a == QLatin1String(opt) && i + 1 < args.size()) {
        value = args[++i];
        hasValue = true;
      } else if (a.startsWith(QLatin1String(opt) + '=')) {
        value = a.mid(int(qstrlen(opt)) + 1);
        a = QLatin1String(opt);
        hasValue = true;
      }
    }
    if (a == "--json") {
      json = true;
    } else if (a == "--sizes") {
      sizes = true;
    } else if (a == "--check") {
      check = true;
    } else if (a == "--stream" || a == "--whole") {
      mode = a == "--stream" ? Stream : Whole;
    } else if (a == "--window" && hasValue) {
      bool ok = false;
      const double s = value.toDouble(&ok);
      if (!ok || s < 1 || s > 3600) {
        std::fprintf(stderr, "threadmon-report: --window wants seconds from 1 to 3600, not '%s'\n",
                     qPrintable(value));
        return 1;
      }
      windowNs = int64_t(s * 1e9);
      mode = Stream;
    } else if (a == "--top" && hasValue) {
      bool ok = false;
      text.top = value.toInt(&ok);
      if (!ok || text.top < 0) {
        std::fprintf(stderr, "threadmon-report: --top wants a number of rows, not '%s'\n",
                     qPrintable(value));
        return 1;
      }
    } else if (a == "--thread" && hasValue && !value.isEmpty()) {
      patterns << value;
    } else if (a == "-h" || a == "--help") {
      return usage(stdout);
    } else if (a.startsWith('-') || !file.isEmpty()) {
      return usage(stderr);
    } else {
      file = a;
    }
  }
  if (file.isEmpty()) return usage(stderr);
  if (sizes) {
    QString error;
    const QByteArray out = frameSizesText(file, &error).toUtf8();
    std::fwrite(out.constData(), 1, size_t(out.size()), stdout);
    if (!error.isEmpty())
      std::fprintf(stderr, "threadmon-report: %s: %s\n", qPrintable(file), qPrintable(error));
    return error.isEmpty() ? 0 : out.isEmpty() ? 1 : 2;
  }

  // A long capture (format 2, with records to seek to) is read a window at
  // a time: a whole read holds about 5 bytes of model per byte of capture.
  const bool stream = mode == Stream || (mode == Auto && QFileInfo(file).size() > kStreamFromBytes);
  ReportRows rows;
  tmon::CaptureLoadResult res;
  if (stream) res = StreamedReport::read(file, &rows, windowNs);
  if (!stream || (res.status == tmon::CaptureLoadResult::Unreadable && mode == Auto)) {
    tmon::SessionModel model;
    res = tmon::CaptureReader::load(file, &model);
    if (res.status != tmon::CaptureLoadResult::Unreadable) rows = collectRows(model);
  }
  if (res.status == tmon::CaptureLoadResult::Unreadable) {
    std::fprintf(stderr, "threadmon-report: %s: %s\n", qPrintable(file), qPrintable(res.message));
    return 1;
  }
  if (res.status == tmon::CaptureLoadResult::Damaged)
    std::fprintf(stderr, "threadmon-report: %s: %s\n", qPrintable(file), qPrintable(res.message));
  // Values the reader could not trust: the capture is damaged, though its
  // framing is whole.
  const QStringList &warnings = rows.info.inputWarnings;
  for (const QString &w : warnings)
    std::fprintf(stderr, "threadmon-report: %s: %s\n", qPrintable(file), qPrintable(w));

  // Numbers that cannot be true: said, never hidden (a bug to report).
  for (const QString &v : rows.violations)
    std::fprintf(stderr, "threadmon-report: %s: invariant broken: %s\n", qPrintable(file),
                 qPrintable(v));

  text.threads = ThreadFilter(patterns);
  QJsonObject report = reportJson(rows);
  if (json && text.threads.active()) keepThreads(report, text.threads);
  QByteArray out = json ? QJsonDocument(report).toJson(QJsonDocument::Indented)
                        : reportText(report, text).toUtf8();
  std::fwrite(out.constData(), 1, size_t(out.size()), stdout);
  if (check && !rows.violations.isEmpty()) return 3;
  return res.status == tmon::CaptureLoadResult::Complete && warnings.isEmpty() ? 0 : 2;
}
