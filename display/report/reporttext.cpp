#include "reporttext.h"

#include <QHash>
#include <QJsonArray>
#include <QStringList>

namespace {

// Text report columns; stolen sits next to runq (both: ready, not running).
const char *const kStateKeys[] = {"on_cpu",          "runnable",       "stolen",
                                  "blocked_mutex",   "blocked_cond",   "blocked_rwlock",
                                  "blocked_barrier", "blocked_sem",    "blocked_spin",
                                  "blocked_join",    "sleeping",       "io_wait",
                                  "stopped"};
const char *const kStateShort[] = {"cpu", "runq", "stolen", "mutex", "cond",   "rwlock", "barrier",
                                   "sem", "spin", "join",   "sleep", "iowait", "stop"};
constexpr int kStates = int(sizeof kStateKeys / sizeof kStateKeys[0]);
static_assert(sizeof kStateShort == sizeof kStateKeys, "one short name per state");

QString num(double v, int prec = 1) { return QString::number(v, 'f', prec); }
QString pad(const QString &s, int w) { return w < 0 ? s.leftJustified(-w, ' ', true) : s.rightJustified(w); }

QString threadLabel(const QJsonObject &t) {
  QString l = QString::number(t["tid"].toInteger());
  if (!t["name"].toString().isEmpty()) l += ' ' + t["name"].toString();
  if (t["main"].toBool()) l += " [main]";
  if (t["probe"].toBool()) l += " [probe]";
  if (!t["runtime"].toString().isEmpty()) l += " [" + t["runtime"].toString() + "]";
  return l;
}

// Where a finding is shown in threadmon-display.
QString viewName(const QString &view) {
  static const QHash<QString, QString> names{
      {"threads", "the Threads view"}, {"lwps", "the LWPs view"},  {"cpus", "the CPUs view"},
      {"timeline", "the Timeline"},    {"sync", "the Sync view"}, {"charts", "the Charts view"}};
  return names.value(view, view);
}

QString evidenceValue(const QJsonValue &v) {
  if (v.isDouble()) {
    double d = v.toDouble();
    return d == double(qint64(d)) ? QString::number(qint64(d)) : QString::number(d, 'g', 4);
  }
  if (v.isString()) return v.toString();
  if (v.isBool()) return v.toBool() ? "yes" : "no";
  if (v.isNull()) return "-";
  // Long lists (thousands of threads) are cut in the text; --json has all.
  constexpr int kShown = 8;
  auto more = [](int n) { return n > kShown ? QStringLiteral(" …%1 more").arg(n - kShown) : QString(); };
  if (v.isArray()) {
    QStringList parts;
    const QJsonArray a = v.toArray();
    for (int i = 0; i < a.size() && i < kShown; i++) parts << evidenceValue(a[i]);
    return '[' + parts.join(' ') + more(int(a.size())) + ']';
  }
  QStringList parts;
  const QJsonObject o = v.toObject();
  int i = 0;
  for (auto it = o.begin(); it != o.end() && i < kShown; ++it, ++i)
    parts << it.key() + ':' + evidenceValue(it.value());
  return '{' + parts.join(' ') + more(int(o.size())) + '}';
}

void findingsSection(const QJsonObject &r, QStringList &out) {
  QJsonArray fs = r["findings"].toArray();
  out << QStringLiteral("Findings (%1)").arg(fs.size());
  if (fs.isEmpty()) out << QStringLiteral("  none: no lock, scheduling or deadlock problem stood out");
  for (const QJsonValue &v : fs) {
    QJsonObject f = v.toObject();
    out << QStringLiteral("  [%1] %2: %3")
               .arg(f["severity"].toString().toUpper(), f["kind"].toString(), f["message"].toString());
    QStringList ev;
    QJsonObject e = f["evidence"].toObject();
    for (auto it = e.begin(); it != e.end(); ++it) ev << it.key() + '=' + evidenceValue(it.value());
    out << QStringLiteral("      evidence: %1").arg(ev.join(", "));
    out << QStringLiteral("      see: %1").arg(viewName(f["view"].toString()));
  }
  out << QString();
}

QString tidName(const QHash<qint64, QString> &names, qint64 tid) {
  if (tid == 0) return QStringLiteral("unknown");
  QString n = names.value(tid);
  return n.isEmpty() ? QString::number(tid) : QStringLiteral("%1 (%2)").arg(n).arg(tid);
}

// Top call sites and who blocked whom, for the most contended objects.
void objectDetails(const QJsonArray &sync, const QHash<qint64, QString> &names, int maxObjects,
                   QStringList &out) {
  constexpr int kSites = 3, kPairs = 5;
  for (int i = 0; i < sync.size() && i < maxObjects; i++) {
    QJsonObject s = sync[i].toObject();
    QJsonArray sites = s["call_sites"].toArray(), pairs = s["blocked_by"].toArray(),
               waiters = s["waiters"].toArray();
    if (sites.isEmpty() && pairs.isEmpty() && waiters.isEmpty()) continue;
    out << QStringLiteral("  object %1 (%2)").arg(s["id"].toInteger()).arg(s["kind"].toString());
    for (int k = 0; k < sites.size() && k < kSites; k++) {
      QJsonObject c = sites[k].toObject();
      QStringList frames;
      for (const QJsonValue &f : c["frames"].toArray()) frames << f.toString();
      out << QStringLiteral("    call site: %1 s waiting, %2 contentions: %3")
                 .arg(num(c["wait_s"].toDouble(), 4))
                 .arg(c["contentions"].toInteger())
                 .arg(frames.mid(0, 4).join(" <- "));
    }
    if (!pairs.isEmpty()) {
      out << QStringLiteral("    %1%2%3%4").arg(pad("waiter", -28), pad("blocked by", -28),
                                                pad("waits", 8), pad("wait s", 10));
      for (int k = 0; k < pairs.size() && k < kPairs; k++) {
        QJsonObject p = pairs[k].toObject();
        out << QStringLiteral("    %1%2%3%4")
                   .arg(pad(tidName(names, p["waiter"].toInteger()), -28),
                        pad(tidName(names, p["holder"].toInteger()), -28),
                        pad(QString::number(p["count"].toInteger()), 8),
                        pad(num(p["wait_s"].toDouble(), 4), 10));
      }
    } else if (s["kind"].toString() == QLatin1String("internal")) {
      QStringList w;
      for (const QJsonValue &x : waiters)
        w << QStringLiteral("%1 %2 s asleep + %3 s system").arg(tidName(names, x["tid"].toInteger()),
                                                               num(x["wait_s"].toDouble(), 3),
                                                               num(x["kernel_s"].toDouble(), 3));
      out << QStringLiteral("    losing time to it (estimated): %1").arg(w.join(", "));
    }
  }
}

}  // namespace

QString reportText(const QJsonObject &r, int maxSyncObjects) {
  QStringList out;
  findingsSection(r, out);
  QJsonObject p = r["process"].toObject();
  QStringList argv;
  for (const QJsonValue &a : p["argv"].toArray()) argv << a.toString();
  QStringList sources;
  for (const QJsonValue &s : p["sources"].toArray()) sources << s.toString();
  out << QStringLiteral("Process %1 (parent %2): %3")
             .arg(p["pid"].toInteger())
             .arg(p["ppid"].toInteger())
             .arg(p["exe"].toString());
  out << QStringLiteral("  argv: %1").arg(argv.join(' '));
  out << QStringLiteral("  duration %1 s, exit status %2, frames dropped %3, events dropped %4, "
                        "switch records lost %5")
             .arg(num(p["duration_s"].toDouble(), 3))
             .arg(p["exit_status"].isNull() ? QStringLiteral("unknown (no Goodbye)")
                                             : QString::number(p["exit_status"].toInt()))
             .arg(p["frames_dropped"].toInteger())
             .arg(p["events_dropped"].toInteger())
             .arg(p.value("switch_records_lost").toInteger());
  out << QStringLiteral("  sources: %1").arg(sources.join(", "));
  for (const QJsonValue &n : p["notices"].toArray())
    out << QStringLiteral("  note: %1").arg(n.toString());
  for (const QJsonValue &n : p["input_warnings"].toArray())
    out << QStringLiteral("  warning: the capture is damaged: %1").arg(n.toString());

  out << QString() << QStringLiteral("Thread states (% of each thread's lifetime)");
  QString head = pad("thread", -28) + pad("life s", 8);
  for (int s = 0; s < kStates; s++) head += pad(kStateShort[s], 8);
  out << head + QStringLiteral("  start routine");
  QJsonArray threads = r["threads"].toArray();
  for (const QJsonValue &v : threads) {
    QJsonObject t = v.toObject();
    QJsonObject st = t["states"].toObject();
    QString line = pad(threadLabel(t), -28) + pad(num(t["lifetime_s"].toDouble(), 3), 8);
    for (int s = 0; s < kStates; s++) line += pad(num(st[kStateKeys[s]].toDouble()), 8);
    out << line + "  " + t["start_routine"].toString();
  }

  out << QString() << QStringLiteral("LWP microstates");
  out << pad("thread", -28) + pad("user s", 10) + pad("sys s", 10) + pad("runq s", 10) +
             pad("vol cs", 10) + pad("invol cs", 10) + pad("minflt", 10) + pad("majflt", 10) +
             "  cpus (s)";
  for (const QJsonValue &v : threads) {
    QJsonObject t = v.toObject(), l = t["lwp"].toObject(), c = t["cpus"].toObject();
    QStringList per;
    for (auto it = c.begin(); it != c.end(); ++it)
      per << QStringLiteral("%1:%2").arg(it.key(), num(it.value().toDouble(), 3));
    out << pad(threadLabel(t), -28) + pad(num(l["user_s"].toDouble(), 3), 10) +
               pad(num(l["system_s"].toDouble(), 3), 10) +
               pad(num(l["runqueue_s"].toDouble(), 3), 10) +
               pad(QString::number(l["vol_ctxsw"].toInteger()), 10) +
               pad(QString::number(l["invol_ctxsw"].toInteger()), 10) +
               pad(QString::number(l["minflt"].toInteger()), 10) +
               pad(QString::number(l["majflt"].toInteger()), 10) + "  " + per.join(' ');
  }

  out << QString() << QStringLiteral("CPU utilisation (%)");
  out << pad("cpu", 5) + pad("user", 8) + pad("nice", 8) + pad("system", 8) + pad("idle", 8) +
             pad("iowait", 8) + pad("irq", 8) + pad("softirq", 8) + pad("steal", 8);
  for (const QJsonValue &v : r["cpus"].toArray()) {
    QJsonObject c = v.toObject();
    QString line = pad(QString::number(c["cpu"].toInt()), 5);
    for (const char *k : {"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"})
      line += pad(num(c[k].toDouble()), 8);
    out << line;
  }

  // "~" when estimated from a sample of the holds (hold_exact false).
  auto holdText = [](const QJsonObject &s) {
    QString v = num(s["hold_s"].toDouble(), 4);
    return s["hold_exact"].toBool(true) || s["acquisitions"].toInteger() == 0 ? v : "~" + v;
  };
  QJsonArray sync = r["sync_objects"].toArray();
  out << QString() << QStringLiteral("Most contended sync objects (%1 active)").arg(sync.size());
  out << pad("id", 6) + "  " + pad("kind", -8) + pad("acquired", 12) + pad("contended", 11) +
             pad("wait s", 10) + pad("max ms", 9) + pad("hold s", 10) + "  object / call site";
  for (int i = 0; i < sync.size() && i < maxSyncObjects; i++) {
    QJsonObject s = sync[i].toObject();
    QString where = s["module"].toString();
    if (!s["symbol"].toString().isEmpty()) where += '!' + s["symbol"].toString();
    if (where.isEmpty()) where = s["address"].toString();
    if (!s["call_site"].toString().isEmpty()) where += "  @ " + s["call_site"].toString();
    // A hidden lock's cost is its estimated wait plus the system time spent
    // for it (kernel_s, only on internal objects).
    const double kernel = s.value("kernel_s").toDouble(), lost = s.value("wait_s").toDouble() + kernel;
    if (s.contains("kernel_s"))
      where += QStringLiteral("  (%1 s asleep on it + %2 s system time for it)")
                   .arg(num(s.value("wait_s").toDouble(), 4), num(kernel, 4));
    out << pad(QString::number(s["id"].toInteger()), 6) + "  " + pad(s["kind"].toString(), -8) +
               pad(QString::number(s["acquisitions"].toInteger()), 12) +
               pad(QString::number(s["contentions"].toInteger()), 11) +
               pad(num(lost, 4), 10) +
               pad(num(s["max_wait_s"].toDouble() * 1e3, 3), 9) +
               pad(holdText(s), 10) + "  " + where;
  }
  out << QStringLiteral("  hold s: time the lock was held; ~ marks an estimate from a sample of "
                        "the holds (the first 256 of each lock are all timed, then about 1 in 64)");
  QHash<qint64, QString> names;
  for (const QJsonValue &v : threads) names[v["tid"].toInteger()] = v["name"].toString();
  constexpr int kDetailedObjects = 3;
  out << QString() << QStringLiteral("Call sites and who blocked whom (top %1 objects)").arg(kDetailedObjects);
  objectDetails(sync, names, kDetailedObjects, out);
  // Every line ends with a newline, the last one included.
  return out.join('\n') + '\n';
}
