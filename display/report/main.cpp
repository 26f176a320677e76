// threadmon-report: a terminal or JSON summary of a threadmon capture.
// Exit status: 0 complete, 2 damaged (cut short, or values dropped or
// clamped) but reported, 1 unreadable or usage; with --check, 3 when a
// number breaks an invariant (modelinvariants.h; each is one line on stderr,
// with or without --check).
#include <poll.h>
#include <unistd.h>

#include <QCoreApplication>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "capturereader.h"
#include "capturetree.h"
#include "capturewriter.h"
#include "framesizes.h"
#include "jsonwriter.h"
#include "reportjson.h"
#include "reportrows.h"
#include "reportstream.h"
#include "reporttext.h"
#include "reporttree.h"
#include "sessionmodel.h"
#include "tmwire.h"
#include "usageerror.h"

namespace {

int usage(FILE *to) {
  std::fputs(
      "usage: threadmon-report [--json] [--top N] [--thread PATTERN]... [--check] FILE.tmcap\n"
      "       threadmon-report --sizes FILE.tmcap\n"
      "       threadmon-report --pack OUT.tmcap < STREAM\n"
      "  --json            JSON for scripts (docs/report-json.md)\n"
      "  --top N           rows per table of the text report (default 30; 0: all)\n"
      "  --thread PATTERN  only threads whose name contains PATTERN or whose tid is it;\n"
      "                    * ? [ make it a glob over the whole name or tid (repeatable)\n"
      "  --sizes           bytes per frame kind and field, bytes on disk, MB/s\n"
      "  --stream          read the capture a window at a time (bounded memory; the\n"
      "                    default for captures longer than 10 s); --whole: read it whole\n"
      "  --window S        seconds per window when streaming (default 5)\n"
      "  --segment S       seconds of windows read into one model (default 20): the\n"
      "                    edges between models are where a stream can differ\n"
      "  --check           exit 3 when a number cannot be true (a thread's states past\n"
      "                    its life, waits past the window: one line each on stderr)\n"
      "  --pid PID         of a process tree's capture (a directory): only that process\n",
      to);
  return to == stdout ? 0 : 1;
}

}  // namespace

// --pack OUT: a threadmon stream read on stdin (`threadmon record --ssh`
// relays one per process) written to OUT as a capture of zstd blocks with
// its index (format 2, as the probe and the display's recorder write), a
// block whenever the input pauses for half a second, so a capture whose
// writer is killed keeps all but its last moments. OUT is truncated: the
// launcher makes it exclusively first. Exit 0, 2 when the stream was
// damaged or cut (what came before is written), 1 when OUT cannot be.
static int packStdin(const QString &out) {
  tmon::CaptureWriter writer;
  if (!writer.open(out)) {
    std::fprintf(stderr, "threadmon-report: %s\n", qPrintable(writer.error()));
    return 1;
  }
  tm_decoder decoder;
  tm_decoder_init(&decoder);
  std::vector<char> buf(1 << 16);
  QString damage;
  bool ok = true;
  for (;;) {
    pollfd p = {0, POLLIN, 0};
    if (poll(&p, 1, 500) == 0) {
      ok = ok && writer.flush();
      continue;
    }
    const ssize_t n = read(0, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!damage.isEmpty()) continue;  // read to the end: the sender must not block
    tm_decoder_feed(&decoder, buf.data(), size_t(n));
    const uint8_t *payload = nullptr;
    uint32_t len = 0;
    tm_decode_status st;
    while ((st = tm_decoder_next(&decoder, &payload, &len)) == TM_DECODE_FRAME)
      ok = writer.writeFrame(payload, len) && ok;
    if (st == TM_DECODE_ERROR) damage = QString::fromUtf8(tm_decoder_error(&decoder));
  }
  if (damage.isEmpty() && tm_decoder_pending(&decoder))
    damage = QStringLiteral("cut inside a frame after %1 frames").arg(decoder.frames);
  tm_decoder_free(&decoder);
  ok = writer.close() && ok;
  if (!ok) {
    std::fprintf(stderr, "threadmon-report: %s\n", qPrintable(writer.error()));
    return 1;
  }
  if (!damage.isEmpty())
    std::fprintf(stderr, "threadmon-report: %s: the stream was %s\n", qPrintable(out),
                 qPrintable(damage));
  return damage.isEmpty() ? 0 : 2;
}

static int report(int argc, char **argv) {
  QCoreApplication app(argc, argv);
  if (argc == 3 && !qstrcmp(argv[1], "--pack")) return packStdin(QString::fromLocal8Bit(argv[2]));
  bool json = false;
  bool sizes = false;
  bool check = false;
  enum { Auto, Stream, Whole } mode = Auto;
  int64_t windowNs = StreamedReport::kChunkNs;
  int64_t segmentNs = StreamedReport::kSegmentNs;
  QString file;
  TextOptions text;
  QStringList patterns;
  uint32_t treePid = 0;
  QStringList args = app.arguments().mid(1);
  for (int i = 0; i < args.size(); i++) {
    QString a = args[i];
    // "--top=5" and "--top 5" alike.
    QString value;
    bool hasValue = false;
    for (const char *opt : {"--top", "--thread", "--window", "--segment", "--pid"}) {
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
    } else if (a == "--segment" && hasValue) {
      bool ok = false;
      const double s = value.toDouble(&ok);
      if (!ok || s < 1 || s > 3600) {
        std::fprintf(stderr, "threadmon-report: --segment wants seconds from 1 to 3600, not '%s'\n",
                     qPrintable(value));
        return 1;
      }
      segmentNs = int64_t(s * 1e9);
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
    } else if (a == "--pid" && hasValue) {
      bool ok = false;
      treePid = value.toUInt(&ok);
      if (!ok || !treePid) {
        std::fprintf(stderr, "threadmon-report: --pid wants a process id, not '%s'\n",
                     qPrintable(value));
        return 1;
      }
    } else if (a == "-h" || a == "--help") {
      return usage(stdout);
    } else if (a.startsWith('-')) {
      return tmon::badOption("threadmon-report", a,
                             {"--top", "--thread", "--window", "--segment", "--pid"});
    } else if (!file.isEmpty()) {
      return tmon::usageError("threadmon-report",
                              "one capture at a time, not '" + file + "' and '" + a + "'");
    } else {
      file = a;
    }
  }
  if (file.isEmpty()) return tmon::usageError("threadmon-report", "no capture given");
  if (tmon::CaptureTree::isTree(file)) {
    QStringList forwarded;  // the same options for each process's capture
    const QStringList all = app.arguments().mid(1);
    for (int i = 0; i < all.size(); i++) {
      if (all[i] == "--pid") i++;
      else if (!all[i].startsWith("--pid=") && all[i] != file) forwarded << all[i];
    }
    return reportTree(file, treePid, json, forwarded);
  }
  if (sizes) {
    QString error;
    const QByteArray out = frameSizesText(file, &error).toUtf8();
    std::fwrite(out.constData(), 1, size_t(out.size()), stdout);
    if (!error.isEmpty())
      std::fprintf(stderr, "threadmon-report: %s: %s\n", qPrintable(file), qPrintable(error));
    return error.isEmpty() ? 0 : out.isEmpty() ? 1 : 2;
  }

  // A capture longer than a window (format 2, with records to seek to) is
  // read a window at a time: a whole read holds about 16 bytes of memory per
  // byte of capture.
  ReportRows rows;
  const tmon::CaptureLoadResult res =
      StreamedReport::rows(file, &rows,
                           mode == Stream  ? StreamedReport::Mode::Stream
                           : mode == Whole ? StreamedReport::Mode::Whole
                                           : StreamedReport::Mode::Auto,
                           windowNs, StreamedReport::kWholeUpToBytes, segmentNs);
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
  if (json) {
    // Written as it is made: the text of a long capture's report is
    // megabytes, its QJsonObjects more.
    JsonWriter out(stdout);
    writeReportJson(rows, &out, text.threads.active() ? &text.threads : nullptr);
    out.finish();
  } else {
    const QByteArray out = reportText(reportJson(rows), text).toUtf8();
    std::fwrite(out.constData(), 1, size_t(out.size()), stdout);
  }
  if (check && !rows.violations.isEmpty()) return 3;
  return res.status == tmon::CaptureLoadResult::Complete && warnings.isEmpty() ? 0 : 2;
}

int main(int argc, char **argv) {
  const int code = report(argc, argv);
  // A full disk or a closed pipe: a report cut short is never taken as whole.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "threadmon-report: writing the report: %s\n",
                 std::strerror(errno ? errno : EIO));
    return 1;
  }
  return code;
}
