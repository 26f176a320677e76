// threadmon-export: a capture as a Perfetto trace, a Chrome JSON trace or a
// pprof contention profile (docs/user-guide.md, "Export and compare").
// Exit status: 0 exported, 2 exported from a damaged capture, 1 nothing
// written (unreadable capture, usage, output not created).
#include <QCoreApplication>
#include <QFileInfo>
#include <cstdio>
#include <memory>

#include "capturetree.h"
#include "exportformats.h"
#include "exportoutput.h"
#include "exportwalk.h"
#include "pprofexport.h"
#include "pprofpass.h"
#include "usageerror.h"

using namespace tmon;

namespace {

int usage(FILE *to) {
  std::fputs(
      "usage: threadmon-export --format perfetto|chrome|pprof [-o OUT] [options] FILE.tmcap\n"
      "  --format F        perfetto (.pftrace), chrome (Trace Event Format .json),\n"
      "                    pprof (gzip'd profile.proto, as Go's contention profiles)\n"
      "  -o OUT            output file (default: FILE with the format's extension;\n"
      "                    - for standard output); an existing file is refused\n"
      "  --force           replace an existing OUT\n"
      "  --profile P       pprof: waits (default; contentions and delay by call stack)\n"
      "                    or holds (acquisitions and hold time by lock)\n"
      "  --from S --to S   only this part of the run, seconds from the session start\n"
      "  --stream          read the capture a window at a time (the default over 8 MiB);\n"
      "                    --whole: read it whole\n"
      "  --window S        seconds per window when streaming (default 10)\n"
      "  --segment S       seconds of windows read into one model (default 10): the\n"
      "                    export's memory follows it; only its edges cut states\n"
      "  --pid PID         of a process tree's capture (a directory): this process\n"
      "                    (default: the tree's first, the program run)\n",
      to);
  return to == stdout ? 0 : 1;
}

// The capture of pid (0: the root) in the tree at path, or "" with why.
QString treeCapture(const QString &path, uint32_t pid, QString *why) {
  CaptureTree tree;
  if (!tree.open(path)) {
    *why = QStringLiteral("%1: %2").arg(path, tree.error());
    return QString();
  }
  const TreeProcess *p = tree.find(pid ? pid : tree.rootPid());
  if (!p) {
    *why = QStringLiteral("%1: no process %2 in this tree").arg(path).arg(pid);
    return QString();
  }
  const QString capture = tree.captureFor(p->pid);
  if (capture.isEmpty()) {
    *why = QStringLiteral("%1: process %2 (%3) ran no thread: the tree has its life only, "
                          "no capture to export")
               .arg(path)
               .arg(p->pid)
               .arg(p->name);
    return QString();
  }
  *why = QStringLiteral("%1: process %2 (%3), one of the tree's %4 (--pid PID for another; "
                        "threadmon report %1 lists them)")
             .arg(path)
             .arg(p->pid)
             .arg(p->name)
             .arg(tree.processes().size());
  return capture;
}

}  // namespace

int main(int argc, char **argv) {
  QCoreApplication app(argc, argv);
  QString format, out, file, profile = QStringLiteral("waits");
  bool force = false;
  double from = -1, to = -1;
  ExportOptions opt;
  uint32_t treePid = 0;
  const QStringList args = app.arguments().mid(1);
  for (int i = 0; i < args.size(); i++) {
    QString a = args[i], value;
    bool hasValue = false;
    for (const char *o : {"--format", "-o", "--output", "--profile", "--from", "--to", "--window",
                          "--segment", "--pid"}) {
      if (a == QLatin1String(o) && i + 1 < args.size()) {
        value = args[++i];
        hasValue = true;
      } else if (a.startsWith(QLatin1String(o) + '=')) {
        value = a.mid(int(qstrlen(o)) + 1);
        a = QLatin1String(o);
        hasValue = true;
      }
    }
    bool ok = true;
    if (a == "--format" && hasValue) {
      format = value;
    } else if ((a == "-o" || a == "--output") && hasValue) {
      out = value;
    } else if (a == "--profile" && hasValue) {
      profile = value;
    } else if (a == "--from" && hasValue) {
      from = value.toDouble(&ok);
    } else if (a == "--to" && hasValue) {
      to = value.toDouble(&ok);
    } else if (a == "--window" && hasValue) {
      const double s = value.toDouble(&ok);
      ok = ok && s >= 1 && s <= 3600;
      opt.chunkNs = int64_t(s * 1e9);
      opt.mode = ExportOptions::Stream;
    } else if (a == "--segment" && hasValue) {
      const double s = value.toDouble(&ok);
      ok = ok && s >= 1 && s <= 3600;
      opt.segmentNs = int64_t(s * 1e9);
      opt.mode = ExportOptions::Stream;
    } else if (a == "--pid" && hasValue) {
      treePid = value.toUInt(&ok);
      ok = ok && treePid;
      if (!ok) {
        std::fprintf(stderr, "threadmon-export: --pid wants a process id, not '%s'\n",
                     qPrintable(value));
        return 1;
      }
    } else if (a == "--stream") {
      opt.mode = ExportOptions::Stream;
    } else if (a == "--whole") {
      opt.mode = ExportOptions::Whole;
    } else if (a == "--force") {
      force = true;
    } else if (a == "-h" || a == "--help") {
      return usage(stdout);
    } else if (a.startsWith('-')) {
      return tmon::badOption("threadmon-export", a,
                             {"--format", "-o", "--output", "--profile", "--from", "--to",
                              "--window", "--segment", "--pid"});
    } else if (!file.isEmpty()) {
      return tmon::usageError("threadmon-export",
                              "one capture at a time, not '" + file + "' and '" + a + "'");
    } else {
      file = a;
    }
    if (!ok) {
      std::fprintf(stderr, "threadmon-export: %s wants a number of seconds, not '%s'\n",
                   qPrintable(a), qPrintable(value));
      return 1;
    }
  }
  if (file.isEmpty()) return tmon::usageError("threadmon-export", "no capture given");
  if (format.isEmpty())
    return tmon::usageError("threadmon-export", "--format perfetto, chrome or pprof is needed");
  const ExportFormat *f = exportFormat(format);
  if (!f) {
    std::fprintf(stderr, "threadmon-export: unknown format '%s' (perfetto, chrome or pprof)\n",
                 qPrintable(format));
    return 1;
  }
  if (profile != "waits" && profile != "holds") {
    std::fprintf(stderr, "threadmon-export: --profile is waits or holds, not '%s'\n",
                 qPrintable(profile));
    return 1;
  }
  if (CaptureTree::isTree(file)) {
    // One process of the tree: its capture is an ordinary one.
    if (out.isEmpty()) out = exportFileName(file, *f);
    QString why;
    file = treeCapture(file, treePid, &why);
    if (file.isEmpty()) {
      std::fprintf(stderr, "threadmon-export: %s\n", qPrintable(why));
      return 1;
    }
    std::fprintf(stderr, "threadmon-export: %s\n", qPrintable(why));
  }
  if (!QFileInfo(file).isFile()) {
    std::fprintf(stderr, "threadmon-export: %s: no such capture\n", qPrintable(file));
    return 1;
  }
  if (out.isEmpty()) out = exportFileName(file, *f);
  if (from >= 0 || to >= 0) opt.range = relativeRange(file, from, to);

  ExportOutput output;
  if (!output.open(out, f->gzip, force)) {
    std::fprintf(stderr, "threadmon-export: %s\n", qPrintable(output.error()));
    return 1;
  }
  std::unique_ptr<ExportSink> sink = makeExportSink(*f, &output, profile == "holds");
  QString writeError;
  CaptureLoadResult res;
  // pprof of the whole run in one pass over the frames, when the capture
  // allows it (pprofpass.h); else, or asked for --whole or --stream, the
  // model's walk.
  auto *pprof = dynamic_cast<PprofSink *>(sink.get());
  QString why;
  bool written = false;
  const bool onePass = pprof && opt.mode == ExportOptions::Auto && from < 0 && to < 0 &&
                       PprofPass::run(file, pprof, &why, &written, &writeError);
  if (qEnvironmentVariableIsSet("THREADMON_EXPORT_SAY_PASS"))
    std::fprintf(stderr, "threadmon-export: %s\n",
                 onePass ? "one pass" : qPrintable(QStringLiteral("model: ") + why));
  if (onePass)
    res.status = written ? CaptureLoadResult::Complete : CaptureLoadResult::Unreadable;
  else
    res = exportCapture(file, sink.get(), opt, &writeError);
  if (res.status == CaptureLoadResult::Unreadable) {
    std::fprintf(stderr, "threadmon-export: %s: %s\n", qPrintable(file),
                 qPrintable(writeError.isEmpty() ? res.message : writeError));
    output.discard();
    return 1;
  }
  if (res.status == CaptureLoadResult::Damaged)
    std::fprintf(stderr, "threadmon-export: %s: %s\n", qPrintable(file), qPrintable(res.message));
  if (out != "-")
    std::fprintf(stderr, "threadmon-export: wrote %s (%s, %lld KiB); %s\n", qPrintable(out),
                 f->name, (long long)(QFileInfo(out).size() + 1023) / 1024,
                 qPrintable(exportOpenHint(*f, out)));
  std::fprintf(stderr, "threadmon-export: %s\n", f->drops);
  return res.status == CaptureLoadResult::Complete ? 0 : 2;
}
