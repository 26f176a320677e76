#include "reporttext.h"

#include <QHash>
#include <QJsonArray>
#include <QStringList>
#include <algorithm>
#include <cmath>

#include "modeltypes.h"
#include "streamfindings.h"
#include "texttable.h"
#include "tmnotices.h"
#include "views.h"

namespace {

// Text report columns; stolen sits next to runq (both: ready, not running).
// The state table's columns, keys and heads: the one list (proto/states.def).
constexpr int kStates = tmon::kFinalStateCount;

// Thread labels (tid, name, tags) past this are cut: a name is the
// program's, up to 4096 bytes.
constexpr int kLabelWidth = 40;

QString num(double v, int prec = 1) { return QString::number(v, 'f', prec); }

// "… and 12 more threads (...)" under a table cut to --top rows.
// n things: "1 thread", "2 threads" (plural: the noun ending in s).
QString counted(qint64 n, const QString &plural) {
  return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? plural.chopped(1) : plural);
}

void moreLine(QStringList &out, qsizetype shown, qsizetype all, const QString &what,
              const QString &how) {
  if (all > shown)
    out << QStringLiteral("  … and %1 more %2 (%3)").arg(all - shown).arg(
        counted(all - shown, what).section(QLatin1Char(' '), 1), how);
}

// The threads a table shows: those the filter matches, all of them within
// `top`, else the `top` that spent the most time on a CPU, runnable or
// blocked (not asleep by choice); in their order of first sight.
std::vector<int> threadsShown(const QJsonArray &threads, const ThreadFilter &filter, int top,
                              int *matched) {
  std::vector<int> rows;
  for (int i = 0; i < threads.size(); i++) {
    QJsonObject t = threads[i].toObject();
    if (filter.matches(uint32_t(t["tid"].toInteger()), t["name"].toString())) rows.push_back(i);
  }
  *matched = int(rows.size());
  if (top <= 0 || rows.size() <= size_t(top)) return rows;
  auto busy = [&](int i) {
    QJsonObject t = threads[i].toObject(), st = t["states"].toObject();
    double share = 100.0 - st["sleeping"].toDouble() - st["stopped"].toDouble() -
                   st["io_wait"].toDouble() - st["idle"].toDouble();
    return share * t["lifetime_s"].toDouble();
  };
  std::stable_sort(rows.begin(), rows.end(), [&](int a, int b) { return busy(a) > busy(b); });
  rows.resize(size_t(top));
  std::sort(rows.begin(), rows.end());
  return rows;
}

QString threadLabel(const QJsonObject &t) {
  QString l = QString::number(t["tid"].toInteger());
  if (!t["name"].toString().isEmpty()) l += ' ' + t["name"].toString();
  if (t["main"].toBool()) l += " [main]";
  if (t["probe"].toBool()) l += " [probe]";
  if (!t["runtime"].toString().isEmpty()) l += " [" + t["runtime"].toString() + "]";
  return l;
}

// "name+0x10 (file.c)" from the JSON's symbol keys, the offset left out
// when 0 (as SyncObjectInfo::symbolText).
QString symbolText(const QJsonObject &s) {
  QString t = s["symbol"].toString();
  if (!s["symbol_member"].toString().isEmpty())
    t += s["symbol_member"].toString();
  else if (qint64 off = s["symbol_offset"].toInteger())
    t += QStringLiteral("+0x%1").arg(off, 0, 16);
  if (!s["symbol_file"].toString().isEmpty()) t += QStringLiteral(" (%1)").arg(s["symbol_file"].toString());
  return t;
}

// Where a finding is shown in threadmon-display.
QString viewName(const QString &view) {
  tmon::ViewKind kind;
  return tmon::parseViewKind(view, &kind) ? QString::fromLatin1(tmon::viewInfo(kind).phrase) : view;
}

QString evidenceValue(const QJsonValue &v) {
  if (v.isDouble()) {
    // Whole numbers as integers while a double holds them exactly (and an
    // int64 at all: converting one past its range is undefined behaviour).
    const double d = v.toDouble();
    const bool whole = std::abs(d) < 0x1p53 && d == std::trunc(d);
    return whole ? QString::number(qint64(d)) : QString::number(d, 'g', 4);
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
  // A long capture read a window at a time was looked at window by window.
  bool windowed = false;
  for (const QJsonValue &n : r["process"]["notices"].toArray())
    windowed = windowed || StreamFindings::isNotice(n.toString());
  if (fs.isEmpty() && windowed)
    out << QStringLiteral(
        "  none: no lock, scheduling or deadlock problem stood out in any window (see the note "
        "below)");
  else if (fs.isEmpty())
    out << QStringLiteral("  none: no lock, scheduling or deadlock problem stood out");
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

// An object as the objects table names it: module!symbol for a global, the
// module and where it was made or first used for a heap one, else its address.
QString objectWhere(const QJsonObject &s) {
  QString where = s["module"].toString();
  const QString namedBy = s["named_by"].toString();
  if (!s["symbol"].toString().isEmpty())
    where += '!' + symbolText(s);
  else if (namedBy == QLatin1String("made_at") || namedBy == QLatin1String("first_use"))
    where = QStringLiteral("%1 %2").arg(where, s["name"].toString()).trimmed();
  return where.isEmpty() ? s["address"].toString() : where;
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
    out << QStringLiteral("  object %1 (%2) %3")
               .arg(s["id"].toInteger())
               .arg(s["kind"].toString(), objectWhere(s));
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
      TextTable t;
      t.addColumn(QStringLiteral("waiter"), TextTable::Left, kLabelWidth);
      t.addColumn(QStringLiteral("blocked by"), TextTable::Left, kLabelWidth);
      t.addColumn(QStringLiteral("waits"), TextTable::Right);
      t.addColumn(QStringLiteral("wait s"), TextTable::Right);
      for (int k = 0; k < pairs.size() && k < kPairs; k++) {
        QJsonObject p = pairs[k].toObject();
        t.addRow({tidName(names, p["waiter"].toInteger()), tidName(names, p["holder"].toInteger()),
                  QString::number(p["count"].toInteger()), num(p["wait_s"].toDouble(), 4)});
      }
      out << t.lines(QStringLiteral("    "));
    } else if (s["kind"].toString() == QLatin1String("internal")) {
      constexpr int kWaiters = 8;
      QStringList w;
      for (int k = 0; k < waiters.size() && k < kWaiters; k++) {
        const QJsonValue x = waiters[k];
        w << QStringLiteral("%1 %2 s asleep + %3 s system%4")
                 .arg(tidName(names, x["tid"].toInteger()), num(x["asleep_s"].toDouble(), 3),
                      num(x["kernel_s"].toDouble(), 3),
                      x["inferred"].toBool()
                          ? QStringLiteral(" (never caught asleep: inferred from "
                                           "its peers)")
                          : QString());
      }
      if (waiters.size() > kWaiters) w << QStringLiteral("%1 more").arg(waiters.size() - kWaiters);
      out << QStringLiteral("    losing time to it (estimated): %1").arg(w.join(", "));
    }
  }
}

}  // namespace

QString reportText(const QJsonObject &r, const TextOptions &o) {
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
  for (const QJsonValue &v : p["execs"].toArray()) {
    const QJsonObject e = v.toObject();
    QStringList from;
    for (const QJsonValue &a : e["from_argv"].toArray()) from << a.toString();
    out << QStringLiteral(
               "  exec'd at %1 s: from %2 (argv: %3) to %4; watched on in the new program")
               .arg(num(e["at_s"].toDouble(), 3), e["from_exe"].toString(), from.join(' '),
                    e["to_exe"].toString());
  }
  out << QStringLiteral(
             "  duration %1 s, exit status %2, frames dropped %3, events dropped %4, "
             "switch records lost %5")
             .arg(num(p["duration_s"].toDouble(), 3))
             .arg(p["detached"].toBool() ? QStringLiteral("none (detached: it ran on)")
                  : p["exec"].toBool()
                      ? QStringLiteral("none (it exec'd another program, which ran on)")
                  : !p["exit_signal"].isNull()
                      ? QStringLiteral("none (killed by signal %1)").arg(p["exit_signal"].toInt())
                  : p["ended_unknown"].toBool()
                      ? QStringLiteral("unknown (it ended; its parent collected the status first)")
                  : p["exit_status"].isNull() ? QStringLiteral("unknown (no Goodbye)")
                                              : QString::number(p["exit_status"].toInt()))
             .arg(p["frames_dropped"].toInteger())
             .arg(p["events_dropped"].toInteger())
             .arg(p.value("switch_records_lost").toInteger());
  if (p["events_folded"].toInteger() > 0)
    out << QStringLiteral("  timeline detail folded: %1 of %2 (%3 s of their "
                          "time) while the probe could not drain them; totals per state kept, "
                          "their order within those gaps not")
               .arg(counted(p["events_folded"].toInteger(), QStringLiteral("state changes")))
               .arg(counted(p["folded_threads"].toInt(), QStringLiteral("threads")))
               .arg(num(p["folded_s"].toDouble(), 3));
  out << QStringLiteral("  sources: %1").arg(sources.join(", "));
  if (!p["acquisitions_known"].toBool(true))
    out << QStringLiteral("  read from outside the process (attach): acquisitions, hold times and "
                          "uncontended calls are unknown, shown as -; waits are those seen asleep");
  for (const QJsonValue &n : p["notices"].toArray())
    if (!n.toString().startsWith(QLatin1String(TM_NOTICE_GAP)))  // a "data lost" line below
      out << QStringLiteral("  note: %1").arg(n.toString());
  for (const QJsonValue &n : p["runtime_notes"].toArray())
    out << QStringLiteral("  unseen: %1").arg(n.toString());
  for (const QJsonValue &n : p["input_warnings"].toArray())
    out << QStringLiteral("  warning: the capture is damaged: %1").arg(n.toString());
  for (const QJsonValue &n : p["data_lost"].toArray())
    out << QStringLiteral("  data lost: %1").arg(n.toString());
  for (const QJsonValue &v : p["detail_lost"].toArray()) {
    const QJsonObject d = v.toObject();
    const QString span =
        QStringLiteral("%1-%2 s").arg(num(d["from_s"].toDouble(), 2), num(d["to_s"].toDouble(), 2));
    out << (d["what"].toString() == QLatin1String("switch_records_paused")
                ? QStringLiteral("  detail lost: switch records paused %1 (states from the ticks)")
                      .arg(span)
                : QStringLiteral("  detail lost: ticks up to %1 ms apart %2")
                      .arg(num(d["longest_tick_ms"].toDouble(), 0), span));
  }
  const QJsonArray lostBy = p["detail_lost_threads"].toArray();
  if (!lostBy.isEmpty()) {
    constexpr int kNamed = 8;
    QStringList named;
    for (int k = 0; k < lostBy.size() && k < kNamed; k++) {
      const QJsonObject t = lostBy[k].toObject();
      named << QStringLiteral("%1 (%2) %3 s")
                   .arg(t["name"].toString(), QString::number(t["tid"].toInteger()),
                        num(t["lost_s"].toDouble(), 2));
    }
    if (lostBy.size() > kNamed) named << QStringLiteral("%1 more").arg(lostBy.size() - kNamed);
    out << QStringLiteral("  detail lost by %1 threads: %2")
               .arg(lostBy.size())
               .arg(named.join(QStringLiteral(", ")));
  }

  const QJsonArray threads = r["threads"].toArray();
  int matched = 0;
  const std::vector<int> shown = threadsShown(threads, o.threads, o.top, &matched);
  const QString threadsMore =
      QStringLiteral("the %1 shown spent the most time on a CPU, runnable or blocked; "
                     "--top 0 shows all, --thread PATTERN picks")
          .arg(shown.size());

  out << QString() << QStringLiteral("Thread states (% of each thread's lifetime)");
  if (o.threads.active())
    out << QStringLiteral("  %1 of %2 threads match --thread").arg(matched).arg(threads.size());
  TextTable states;
  states.addColumn(QStringLiteral("thread"), TextTable::Left, kLabelWidth);
  states.addColumn(QStringLiteral("life s"), TextTable::Right);
  for (int s = 0; s < kStates; s++)
    states.addColumn(QString::fromLatin1(tmon::finalStateShort(tmon::finalStateAtColumn(s))),
                     TextTable::Right);
  states.addColumn(QStringLiteral("start routine"), TextTable::Left);
  for (int i : shown) {
    QJsonObject t = threads[i].toObject(), st = t["states"].toObject();
    QStringList row{threadLabel(t), num(t["lifetime_s"].toDouble(), 3)};
    for (int s = 0; s < kStates; s++)
      row << num(st[QLatin1String(tmon::finalStateKey(tmon::finalStateAtColumn(s)))].toDouble());
    states.addRow(row << t["start_routine"].toString());
  }
  out << states.lines();
  moreLine(out, qsizetype(shown.size()), matched, QStringLiteral("threads"), threadsMore);

  out << QString() << QStringLiteral("LWP microstates");
  TextTable lwps;
  lwps.addColumn(QStringLiteral("thread"), TextTable::Left, kLabelWidth);
  // A column for each counter of proto/counters.def with a text head.
  struct LwpColumn {
    const char *key;
    bool seconds;
  };
  std::vector<LwpColumn> lwpColumns;
#define TM_LWP_TEXT(field, number, index, member, json_key, unit, known, text)          \
  if (*text) {                                                                          \
    lwps.addColumn(QStringLiteral(text), TextTable::Right);                             \
    lwpColumns.push_back({json_key, tmon::CounterUnit::unit == tmon::CounterUnit::Ns}); \
  }
#define TM_LWP_COUNTER TM_LWP_TEXT
#define TM_LWP_EXTRA TM_LWP_TEXT
#include "counters.def"
#undef TM_LWP_TEXT
  // Instructions per cycle, where the probe counted them (THREADMON_COUNTERS=1).
  bool ipc = false;
  for (int i : shown) ipc = ipc || threads[i].toObject()["lwp"].toObject()["ipc"].isDouble();
  if (ipc) lwps.addColumn(QStringLiteral("IPC"), TextTable::Right);
  lwps.addColumn(QStringLiteral("cpus (s)"), TextTable::Left);
  for (int i : shown) {
    QJsonObject t = threads[i].toObject(), l = t["lwp"].toObject(), c = t["cpus"].toObject();
    QStringList per;
    for (auto it = c.begin(); it != c.end(); ++it)
      per << QStringLiteral("%1:%2").arg(it.key(), num(it.value().toDouble(), 3));
    QStringList row{threadLabel(t)};
    for (const LwpColumn &col : lwpColumns)
      row << (col.seconds ? num(l.value(QLatin1String(col.key)).toDouble(), 3)
                          : QString::number(l.value(QLatin1String(col.key)).toInteger()));
    if (ipc) row << (l["ipc"].isDouble() ? num(l["ipc"].toDouble(), 2) : QStringLiteral("-"));
    row << per.join(' ');
    lwps.addRow(row);
  }
  out << lwps.lines();
  moreLine(out, qsizetype(shown.size()), matched, QStringLiteral("threads"), threadsMore);

  const QJsonArray users = r["user_threads"].toArray();
  if (!users.isEmpty()) {
    // M:N: on an LWP (its states are that LWP's), dispatchable, and where it ran.
    out << QString() << QStringLiteral("User threads (% of each user thread's lifetime)");
    TextTable ut;
    ut.addColumn(QStringLiteral("user thread"), TextTable::Left, kLabelWidth);
    for (const char *h : {"life s", "on lwp", "cpu", "runq", "blocked", "sleep", "dispatch"})
      ut.addColumn(QString::fromLatin1(h), TextTable::Right);
    ut.addColumn(QStringLiteral("lwps (s)"), TextTable::Left);
    int shownUsers = 0;
    for (const QJsonValue &v : users) {
      if (o.top > 0 && shownUsers >= o.top) break;
      shownUsers++;
      QJsonObject u = v.toObject(), st = u["states"].toObject(), l = u["lwps"].toObject();
      double blocked = 0, onLwp = 0;
      for (auto it = st.begin(); it != st.end(); ++it) {
        if (it.key() == QLatin1String("dispatchable")) continue;
        onLwp += it.value().toDouble();
        if (it.key().startsWith(QLatin1String("blocked_"))) blocked += it.value().toDouble();
      }
      QStringList per;
      for (auto it = l.begin(); it != l.end(); ++it)
        per << QStringLiteral("%1:%2").arg(it.key(), num(it.value().toDouble(), 3));
      QString label = QStringLiteral("u%1 %2").arg(u["id"].toInteger()).arg(u["name"].toString());
      if (!u["done"].toBool()) label += QStringLiteral(" [not done]");
      ut.addRow({label, num(u["lifetime_s"].toDouble(), 3), num(onLwp), num(st["on_cpu"].toDouble()),
                 num(st["runnable"].toDouble()), num(blocked), num(st["sleeping"].toDouble()),
                 num(st["dispatchable"].toDouble()), per.join(' ')});
    }
    out << ut.lines();
    moreLine(out, shownUsers, users.size(), QStringLiteral("user threads"),
             QStringLiteral("--top 0 shows all"));
  }

  out << QString() << QStringLiteral("CPU utilisation (%)");
  const char *const cpuKeys[] = {
#define TM_CPU_COUNTER(field, number, member, json_key) json_key,
#include "counters.def"
  };
  TextTable cpuTable;
  cpuTable.addColumn(QStringLiteral("cpu"), TextTable::Right);
  for (const char *k : cpuKeys) cpuTable.addColumn(QString::fromLatin1(k), TextTable::Right);
  const QJsonArray cpus = r["cpus"].toArray();
  const qsizetype cpusShown = o.top > 0 ? std::min<qsizetype>(o.top, cpus.size()) : cpus.size();
  for (qsizetype i = 0; i < cpusShown; i++) {
    QJsonObject c = cpus[i].toObject();
    QStringList row{QString::number(c["cpu"].toInt())};
    for (const char *k : cpuKeys) row << num(c[k].toDouble());
    cpuTable.addRow(row);
  }
  out << cpuTable.lines();
  moreLine(out, cpusShown, cpus.size(), QStringLiteral("CPUs"), QStringLiteral("--top 0 shows all"));

  // "~" when estimated from a sample of the holds (hold_exact false).
  auto holdText = [](const QJsonObject &s) {
    // Not a lock (nothing is held), or no holds timed (read from outside).
    if (!s["hold_s"].isDouble()) return QStringLiteral("-");
    QString v = num(s["hold_s"].toDouble(), 4);
    return s["hold_exact"].toBool(true) || s["acquisitions"].toInteger() == 0 ? v : "~" + v;
  };
  QJsonArray sync = r["sync_objects"].toArray();
  out << QString() << QStringLiteral("Most contended sync objects (%1 active)").arg(sync.size());
  TextTable objects;
  objects.addColumn(QStringLiteral("id"), TextTable::Right);
  objects.addColumn(QStringLiteral("kind"), TextTable::Left);
  for (const char *h : {"acquired", "contended", "wait s", "max ms", "hold s"})
    objects.addColumn(QString::fromLatin1(h), TextTable::Right);
  objects.addColumn(QStringLiteral("object / call site"), TextTable::Left);
  const qsizetype syncShown = o.top > 0 ? std::min<qsizetype>(o.top, sync.size()) : sync.size();
  for (qsizetype i = 0; i < syncShown; i++) {
    QJsonObject s = sync[i].toObject();
    QString where = objectWhere(s);
    const QString namedBy = s["named_by"].toString();
    // The first use is the call site already.
    if (!s["call_site"].toString().isEmpty() && namedBy != QLatin1String("first_use"))
      where += "  @ " + s["call_site"].toString();
    if (s.contains("runtime"))
      where += "  [" + s["runtime"].toString() +
               (s["kind"].toString() == QLatin1String("futex") ? ", seen at syscall()]"
                                                               : ", found by futex sampling]");
    // A hidden lock's wait is the time estimated lost to it: asleep on it
    // plus the system time spent for it (asleep_s and kernel_s, only on
    // internal objects).
    const double lost = s.value("wait_s").toDouble();
    if (s.contains("kernel_s"))
      where +=
          QStringLiteral("  (%1 s asleep on it + %2 s system time for it)")
              .arg(num(s.value("asleep_s").toDouble(), 4), num(s.value("kernel_s").toDouble(), 4));
    const QString kind = s.contains("acts_as") ? s["acts_as"].toString() : s["kind"].toString();
    // Unknown (null: found by sampling, or read from outside) is "-", not 0.
    const QJsonValue acq = s["acquisitions"], maxWait = s["max_wait_s"];
    objects.addRow({QString::number(s["id"].toInteger()), kind,
                    acq.isDouble() ? QString::number(acq.toInteger()) : QStringLiteral("-"),
                    QString::number(s["contentions"].toInteger()), num(lost, 4),
                    maxWait.isDouble() ? num(maxWait.toDouble() * 1e3, 3) : QStringLiteral("-"),
                    holdText(s), where});
  }
  out << objects.lines();
  moreLine(out, syncShown, sync.size(), QStringLiteral("objects"),
           QStringLiteral("less contended; --top 0 shows all"));
  out << QStringLiteral("  hold s: time the lock was held (a rwlock's: for writing); ~ marks an "
                        "estimate from a sample of "
                        "the holds (the first 256 of each lock are all timed, then about 1 in 8 "
                        "up to 16,384 acquisitions, then 1 in 64)");
  QHash<qint64, QString> names;
  for (const QJsonValue &v : threads) names[v["tid"].toInteger()] = v["name"].toString();
  constexpr int kDetailedObjects = 3;
  out << QString() << QStringLiteral("Call sites and who blocked whom (top %1 objects)").arg(kDetailedObjects);
  objectDetails(sync, names, kDetailedObjects, out);
  // Every line ends with a newline, the last one included.
  return out.join('\n') + '\n';
}
