#include "capturediff.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <map>

#include "symbolname.h"

namespace tmon {

namespace {

QString millis(double s) {
  return QStringLiteral("%1 ms").arg(s * 1e3, 0, 'f', 1);
}

QString seconds(double s) {
  if (s == 0) return QStringLiteral("0 s");
  if (std::fabs(s) < 0.01) return millis(s);
  return QStringLiteral("%1 s").arg(s, 0, 'f', std::fabs(s) < 10 ? 2 : 1);
}

// A change's two figures in one unit when both are under a second and one
// is under 10 ms: "from 9.9 ms to 0.02 s" hid a doubling.
std::pair<QString, QString> figures(double before, double after) {
  const double lo = std::min(std::fabs(before), std::fabs(after));
  const double hi = std::max(std::fabs(before), std::fabs(after));
  if (lo > 0 && lo < 0.01 && hi < 1) return {millis(before), millis(after)};
  return {seconds(before), seconds(after)};
}

// A pool's threads by one name: digits are its members' numbers.
QString groupName(const QString &name) {
  static const QRegularExpression digits(QStringLiteral("\\d+"));
  QString n = name;
  return n.replace(digits, QStringLiteral("#"));
}

QString threadGroupOf(const ThreadRow &t) {
  if (t.probe) return QStringLiteral("threadmon [probe]");
  return t.info.main ? QStringLiteral("[main]") : groupName(t.info.name);
}

// "module!function" of a frame, without offset or line (they move between builds).
QString functionOf(const QString &frame) {
  FrameParts p = splitFrame(frame);
  p.offset.clear();
  p.location.clear();
  return p.text();
}

QString objectKey(const SyncRow &s) {
  const QString module = QFileInfo(s.info.module).fileName();
  if (!s.info.symbol.isEmpty())
    return QStringLiteral("%1!%2").arg(module, s.info.symbolText());
  const QString site = !s.callSite.isEmpty() ? s.callSite : s.info.callSite();
  return QStringLiteral("%1 at %2").arg(syncKindName(s.info.kind),
                                        site.isEmpty() ? module : functionOf(site));
}

double objectWaitS(const SyncRow &s) { return double(s.delta.waitNs) / 1e9; }

struct Group {
  QString label;
  int threads = 0;
  std::array<std::vector<double>, kFinalStateCount> perThread;  // s, one per thread
};

std::map<QString, Group> threadGroups(const ReportRows &r) {
  std::map<QString, Group> groups;
  for (const ThreadRow &t : r.threads) {
    const QString routine = t.info.startRoutine.isEmpty() ? QString() : functionOf(t.info.startRoutine);
    const QString name = threadGroupOf(t);
    const QString key = name + QChar(0) + routine;
    Group &g = groups[key];
    g.label = name + (routine.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(routine));
    g.threads++;
    for (int s = 0; s < kFinalStateCount; s++) g.perThread[size_t(s)].push_back(double(t.states.ns[size_t(s)]) / 1e9);
  }
  return groups;
}

// The group's sum, and its spread: twice the standard deviation of the sum
// of n threads drawn like these (zero for one thread).
std::pair<double, double> sumAndSpread(const std::vector<double> &v) {
  double sum = 0;
  for (double x : v) sum += x;
  if (v.size() < 2) return {sum, 0};
  const double mean = sum / double(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  var /= double(v.size() - 1);
  return {sum, 2 * std::sqrt(var * double(v.size()))};
}

// Sorted and joined, so that the same set reads the same in both runs.
QString joined(QStringList parts) {
  parts.removeDuplicates();
  parts.sort();
  return parts.join(QStringLiteral(" + "));
}

// What a finding is about, by the identity the streamed report merges the
// same finding of several windows by (findings.def): a diff pairs a run's
// findings with the other's the same way, by names that survive a rebuild.
QString findingSubject(const Finding &f, const ReportRows &r) {
  QStringList parts;
  switch (findingInfo(f.kind).merge) {
    case FindingMerge::Objects:
    case FindingMerge::Cycle:
      for (uint32_t id : f.objects)
        for (const SyncRow &s : r.sync)
          if (s.info.id == id) parts << objectKey(s);
      break;
    case FindingMerge::Threads:
      for (uint32_t tid : f.threads)
        for (const ThreadRow &t : r.threads)
          if (t.info.tid == tid) parts << threadGroupOf(t);
      break;
    case FindingMerge::Lock:
      parts << f.evidence.value(QLatin1String("lock")).toString();
      break;
    case FindingMerge::Program:
    case FindingMerge::Newest:
      return QString();
  }
  if (!parts.isEmpty()) return joined(parts);
  const QJsonValue site = f.evidence.value(QLatin1String("call_site"));
  return site.isString() ? functionOf(site.toString()) : QString();
}

std::vector<DiffFinding> findingsOf(const ReportRows &r) {
  std::vector<DiffFinding> out;
  for (const Finding &f : r.findings)
    out.push_back(DiffFinding{QLatin1String(findingKindKey(f.kind)), findingSubject(f, r), f.message});
  return out;
}

}  // namespace

bool DiffChange::noise() const { return std::fabs(after - before) <= noiseS; }

QString DiffChange::text() const {
  const auto [from, to] = figures(before, after);
  QString change;
  if (before > 0)
    change = QStringLiteral(" (%1%2%)").arg(after >= before ? "+" : "\u2212")
                 .arg(std::lround(std::fabs(after - before) / before * 100));
  if (noise())
    return QStringLiteral("%1: %2 and %3, a difference within the noise (%4)")
        .arg(subject, from, to, seconds(noiseS));
  if (before == 0) return QStringLiteral("%1 is new: %2").arg(subject, to);
  if (after == 0) return QStringLiteral("%1 is gone (was %2)").arg(subject, from);
  return QStringLiteral("%1 %2 from %3 to %4%5")
      .arg(subject, after < before ? QStringLiteral("fell") : QStringLiteral("rose"), from, to, change);
}

CaptureDiff diffRows(const ReportRows &a, const ReportRows &b, const DiffOptions &opt) {
  CaptureDiff d;
  d.options = opt;
  d.beforeExe = a.info.exe;
  d.afterExe = b.info.exe;
  d.beforeVersion = a.info.probeVersion;
  d.afterVersion = b.info.probeVersion;
  auto threshold = [&](double x, double y, double spread) {
    return std::max({opt.noiseFloorS, opt.noiseShare * std::max(x, y), spread});
  };
  DiffChange wall;
  wall.what = DiffChange::Wall;
  wall.subject = QStringLiteral("wall time");
  wall.before = a.durationS;
  wall.after = b.durationS;
  wall.noiseS = threshold(wall.before, wall.after, 0);

  // Objects, by symbol or kind and call site.
  std::map<QString, std::pair<double, double>> objects;
  for (const SyncRow &s : a.sync) objects[objectKey(s)].first += objectWaitS(s);
  for (const SyncRow &s : b.sync) objects[objectKey(s)].second += objectWaitS(s);
  for (const auto &[key, v] : objects) {
    if (v.first == 0 && v.second == 0) continue;
    DiffChange c;
    c.what = DiffChange::Object;
    c.subject = QStringLiteral("the wait on `%1`").arg(key);
    c.before = v.first;
    c.after = v.second;
    c.noiseS = threshold(c.before, c.after, 0);
    d.changes.push_back(c);
  }
  // Threads, by name (a pool's numbers left out) and start routine.
  const auto ga = threadGroups(a), gb = threadGroups(b);
  std::map<QString, std::pair<const Group *, const Group *>> groups;
  for (const auto &kv : ga) groups[kv.first].first = &kv.second;
  for (const auto &kv : gb) groups[kv.first].second = &kv.second;
  for (const auto &[key, g] : groups) {
    const Group &any = g.first ? *g.first : *g.second;
    const int n = std::max(g.first ? g.first->threads : 0, g.second ? g.second->threads : 0);
    // A pool that changed size says both sizes: "(6 threads)" after a fix to 2 misled.
    const bool resized = g.first && g.second && g.first->threads != g.second->threads;
    QString count;
    if (resized)
      count = QStringLiteral(" (%1 threads, then %2)").arg(g.first->threads).arg(g.second->threads);
    else if (n > 1)
      count = QStringLiteral(" (%1 threads)").arg(n);
    for (int s = 0; s < kFinalStateCount; s++) {
      const auto x = g.first ? sumAndSpread(g.first->perThread[size_t(s)]) : std::make_pair(0.0, 0.0);
      const auto y = g.second ? sumAndSpread(g.second->perThread[size_t(s)]) : std::make_pair(0.0, 0.0);
      if (x.first == 0 && y.first == 0) continue;
      DiffChange c;
      c.what = DiffChange::Thread;
      c.subject =
          QStringLiteral("`%1`%2: %3")
              .arg(any.label, count, QString::fromLatin1(finalStateLabel(FinalState(s))).toLower());
      c.before = x.first;
      c.after = y.first;
      c.noiseS = threshold(c.before, c.after, std::max(x.second, y.second));
      d.changes.push_back(c);
    }
  }
  std::stable_sort(d.changes.begin(), d.changes.end(), [](const DiffChange &x, const DiffChange &y) {
    if (x.noise() != y.noise()) return !x.noise();
    return std::fabs(x.after - x.before) > std::fabs(y.after - y.before);
  });
  d.changes.insert(d.changes.begin(), wall);

  // Findings, by kind and subject.
  std::vector<DiffFinding> fa = findingsOf(a), fb = findingsOf(b);
  auto same = [](const DiffFinding &x, const DiffFinding &y) {
    return x.kind == y.kind && x.subject == y.subject;
  };
  for (const DiffFinding &f : fa) {
    auto it = std::find_if(fb.begin(), fb.end(), [&](const DiffFinding &g) { return same(f, g); });
    (it == fb.end() ? d.gone : d.kept).push_back(f);
  }
  for (const DiffFinding &f : fb)
    if (std::none_of(fa.begin(), fa.end(), [&](const DiffFinding &g) { return same(f, g); }))
      d.appeared.push_back(f);
  return d;
}

QString diffText(const CaptureDiff &d, int top) {
  QStringList out;
  out << QStringLiteral("Before: %1").arg(d.beforeExe) << QStringLiteral("After:  %1").arg(d.afterExe);
  auto name = [](const DiffFinding &f) {
    return QStringLiteral("the %1 finding%2").arg(f.kind, f.subject.isEmpty() ? QString() : QStringLiteral(" on `%1`").arg(f.subject));
  };
  out << QString() << QStringLiteral("What changed (largest first)");
  int shown = 0, noise = 0;
  for (const DiffChange &c : d.changes) {
    if (c.what != DiffChange::Wall && c.noise()) {
      noise++;
      continue;
    }
    if (top > 0 && shown++ >= top) continue;
    out << QStringLiteral("  ") + c.text();
  }
  for (const DiffFinding &f : d.gone) out << QStringLiteral("  %1 is gone").arg(name(f));
  for (const DiffFinding &f : d.appeared)
    out << QStringLiteral("  %1 is new: %2").arg(name(f), f.message);
  for (const DiffFinding &f : d.kept) out << QStringLiteral("  %1 is still there").arg(name(f));
  if (shown > top && top > 0) out << QStringLiteral("  ... %1 more changes (--top 0: all)").arg(shown - top);
  out << QString()
      << QStringLiteral("%1 other differences are noise: within %2% of the larger figure, %3 ms, or "
                        "the spread between the threads of a group")
             .arg(noise)
             .arg(std::lround(d.options.noiseShare * 100))
             .arg(d.options.noiseFloorS * 1e3, 0, 'g', 3);
  return out.join(u'\n') + u'\n';
}

QJsonObject diffJson(const CaptureDiff &d) {
  QJsonObject o;
  o["before"] = QJsonObject{{"exe", d.beforeExe}, {"version", d.beforeVersion}};
  o["after"] = QJsonObject{{"exe", d.afterExe}, {"version", d.afterVersion}};
  o["noise"] = QJsonObject{{"share", d.options.noiseShare}, {"floor_s", d.options.noiseFloorS}};
  QJsonArray changes;
  static const char *const what[] = {"wall", "object", "threads"};
  for (const DiffChange &c : d.changes) {
    QJsonObject j{{"what", what[c.what]}, {"subject", c.subject}, {"before_s", c.before},
                  {"after_s", c.after}, {"noise", c.noise()}, {"noise_s", c.noiseS},
                  {"text", c.text()}};
    if (c.before > 0) j["change_pct"] = (c.after - c.before) / c.before * 100;
    changes.append(j);
  }
  o["changes"] = changes;
  auto list = [](const std::vector<DiffFinding> &v) {
    QJsonArray a;
    for (const DiffFinding &f : v)
      a.append(QJsonObject{{"kind", f.kind}, {"subject", f.subject}, {"message", f.message}});
    return a;
  };
  o["findings"] = QJsonObject{{"gone", list(d.gone)}, {"new", list(d.appeared)}, {"kept", list(d.kept)}};
  return o;
}

}  // namespace tmon
