#include "reporttree.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <cstdio>

#include "capturetree.h"
#include "jsonwriter.h"
#include "texttable.h"

namespace {

QString duration(uint64_t ns) {
  if (ns >= 10000000000ull) return QString::number(double(ns) / 1e9, 'f', 1) + " s";
  if (ns >= 1000000000ull) return QString::number(double(ns) / 1e9, 'f', 2) + " s";
  if (ns >= 1000000ull) return QString::number(double(ns) / 1e6, 'f', 1) + " ms";
  return QString::number(double(ns) / 1e3, 'f', 0) + " µs";
}

QString ending(const tmon::TreeProcess &p) {
  if (!p.ended) return QStringLiteral("not seen");  // killed, or still running
  if (p.how == "signal") return QStringLiteral("signal %1").arg(p.status);
  return QStringLiteral("%1 %2").arg(p.how, QString::number(p.status));
}

QJsonObject processJson(const tmon::TreeProcess &p, const tmon::CaptureTree &tree) {
  QJsonObject o;
  o["pid"] = qint64(p.pid);
  o["ppid"] = qint64(p.ppid);
  o["name"] = p.name;
  o["depth"] = p.depth;
  if (p.startNs)  // unknown for a child whose only line is its parent's (killed)
    o["start_s"] = double(p.startNs - tree.processes().front().startNs) / 1e9;
  if (p.ended) {
    if (p.startNs) o["lifetime_s"] = double(p.endNs - p.startNs) / 1e9;
    o["ended_by"] = p.how;
    o[p.how == "signal" ? "signal" : "exit_status"] = p.status;
    o["user_cpu_s"] = double(p.utimeNs) / 1e9;
    o["system_cpu_s"] = double(p.stimeNs) / 1e9;
  }
  const QString capture = tree.captureFor(p.pid);
  if (!capture.isEmpty()) o["capture"] = capture;
  return o;
}

// This program on one capture; its stdout, its exit status.
int reportOne(const QString &capture, const QStringList &args, QByteArray *out) {
  QProcess child;
  child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
  child.start(QCoreApplication::applicationFilePath(), QStringList(args) << capture);
  if (!child.waitForFinished(-1) || child.exitStatus() != QProcess::NormalExit) {
    std::fprintf(stderr, "threadmon-report: %s: the report of this process failed\n",
                 qPrintable(capture));
    return 1;
  }
  *out = child.readAllStandardOutput();
  return child.exitCode();
}

}  // namespace

int reportTree(const QString &path, uint32_t pid, bool json, const QStringList &args) {
  tmon::CaptureTree tree;
  if (!tree.open(path)) {
    std::fprintf(stderr, "threadmon-report: %s: %s\n", qPrintable(path), qPrintable(tree.error()));
    return 1;
  }
  if (tree.skippedLines())
    std::fprintf(stderr, "threadmon-report: %s: %d lines of its index unreadable, skipped\n",
                 qPrintable(path), tree.skippedLines());
  if (pid && !tree.find(pid)) {
    std::fprintf(stderr, "threadmon-report: %s: no process %u in this tree\n", qPrintable(path),
                 pid);
    return 1;
  }
  int worst = tree.skippedLines() ? 2 : 0;
  QJsonArray processes, reports;
  TextTable table;
  table.addColumn("PID", TextTable::Left);
  table.addColumn("PARENT", TextTable::Right);
  table.addColumn("ENDED", TextTable::Left);
  table.addColumn("LIFETIME", TextTable::Right);
  table.addColumn("CPU USER", TextTable::Right);
  table.addColumn("CPU SYS", TextTable::Right);
  table.addColumn("CAPTURE", TextTable::Left);
  table.addColumn("PROGRAM", TextTable::Left);
  int captured = 0;
  for (const tmon::TreeProcess &p : tree.processes()) {
    processes.append(processJson(p, tree));
    const bool has = !tree.captureFor(p.pid).isEmpty();
    captured += has;
    table.addRow({QString(p.depth * 2, ' ') + QString::number(p.pid),
                  p.depth ? QString::number(p.ppid) : QStringLiteral("-"), ending(p),
                  p.ended && p.startNs ? duration(p.endNs - p.startNs) : QStringLiteral("-"),
                  p.ended ? duration(p.utimeNs) : QStringLiteral("-"),
                  p.ended ? duration(p.stimeNs) : QStringLiteral("-"),
                  has ? QStringLiteral("yes") : QStringLiteral("life only"), p.name});
  }
  QByteArray text;
  if (!json) {
    text += QStringLiteral(
                "Process tree: %1 processes, %2 with a session of their own "
                "(the rest ran no thread: their life only)\n")
                .arg(tree.processes().size())
                .arg(captured)
                .toUtf8();
    text += table.lines("  ").join('\n').toUtf8() + "\n";
    std::fwrite(text.constData(), 1, size_t(text.size()), stdout);
    std::fflush(stdout);
  }
  for (const tmon::TreeProcess &p : tree.processes()) {
    if (pid && p.pid != pid) continue;
    const QString capture = tree.captureFor(p.pid);
    if (capture.isEmpty()) continue;
    QByteArray out;
    const int code = reportOne(capture, args, &out);
    worst = std::max(worst, code);
    if (json) {
      QJsonObject r;
      r["pid"] = qint64(p.pid);
      r["capture"] = capture;
      r["report"] = QJsonDocument::fromJson(out).object();
      reports.append(r);
    } else {
      const QByteArray head =
          QStringLiteral("\n=== process %1 (%2) ===\n").arg(p.pid).arg(p.name).toUtf8();
      std::fwrite(head.constData(), 1, size_t(head.size()), stdout);
      std::fwrite(out.constData(), 1, size_t(out.size()), stdout);
      std::fflush(stdout);
    }
  }
  if (json) {
    QJsonObject doc;
    doc["tree"] = QJsonObject{{"root", qint64(tree.rootPid())}, {"processes", processes}};
    doc["reports"] = reports;
    JsonWriter out(stdout);
    out.value(QJsonValue(doc));
    out.finish();
  }
  return worst;
}
