#include "reportjson.h"

#include <QJsonArray>
#include <algorithm>
#include <functional>
#include <map>
#include <utility>

#include "jsonwriter.h"
#include "reportrows.h"
#include "runtimes.h"
#include "sessionmodel.h"
#include "threadfilter.h"
#include "tmnotices.h"

using namespace tmon;

namespace {

// The report is written once, as a template over where it goes: the text
// of --json straight to its output (JsonWriter), or a QJsonObject for the
// text report, the tests and the fuzzers (JsonTree, the same calls).
class JsonTree {
 public:
  void beginObject() { open(true); }
  void beginArray() { open(false); }
  void endObject() { close(); }
  void endArray() { close(); }
  void key(const char *k) { key_ = QString::fromLatin1(k); }
  void key(const QString &k) { key_ = k; }
  void null() { put(QJsonValue()); }
  void seconds(int64_t ns) { put(QJsonValue(double(ns) / 1e9)); }
  template <class T>
  void value(const T &v) {
    put(QJsonValue(v));
  }
  // As JsonWriter::numbers.
  void numbers(std::initializer_list<JsonWriter::Number> members) {
    beginObject();
    for (const JsonWriter::Number &m : members) {
      key_ = QString::fromLatin1(m.key.data(), qsizetype(m.key.size()));
      if (m.seconds)
        seconds(m.v);
      else
        value(qint64(m.v));
    }
    endObject();
  }
  QJsonObject take() { return root_.toObject(); }

 private:
  struct Level {
    bool object;
    QString key;  // the parent's key for it
    QJsonObject o;
    QJsonArray a;
  };
  void open(bool object) { stack_.push_back(Level{object, std::move(key_), {}, {}}); }
  void close() {
    Level l = std::move(stack_.back());
    stack_.pop_back();
    key_ = std::move(l.key);
    put(l.object ? QJsonValue(std::move(l.o)) : QJsonValue(std::move(l.a)));
  }
  void put(const QJsonValue &v) {
    if (stack_.empty()) {
      root_ = v;
    } else if (stack_.back().object) {
      stack_.back().o.insert(key_, v);
    } else {
      stack_.back().a.append(v);
    }
  }
  std::vector<Level> stack_;
  QString key_;
  QJsonValue root_;
};

// An object's members, added in the order that reads best and written in
// the order QJsonObject keeps its keys (sorted), which JsonWriter needs.
// A member is a value, or a function writing it (a long array, written
// where it goes without being built first).
template <class W>
class Members {
 public:
  template <class F>
  void add(QString key, F &&write) {
    list_.emplace_back(std::move(key), std::function<void(W &)>(std::forward<F>(write)));
  }
  void set(QString key, const QJsonValue &v) {
    add(std::move(key), [v](W &w) { w.value(v); });
  }
  void write(W &w) {
    std::sort(list_.begin(), list_.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    w.beginObject();
    for (const auto &[key, member] : list_) {
      w.key(key);
      member(w);
    }
    w.endObject();
  }

 private:
  std::vector<std::pair<QString, std::function<void(W &)>>> list_;
};

double seconds(int64_t ns) { return double(ns) / 1e9; }
// A counter as proto/counters.def says to print it, or null when unknown.
QJsonValue counterJson(uint64_t v, CounterUnit unit, bool known) {
  if (!known) return QJsonValue();
  return unit == CounterUnit::Ns ? QJsonValue(seconds(int64_t(v))) : QJsonValue(qint64(v));
}
double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * double(part) / double(whole) : 0.0; }

// What a thread profiler cannot see in a runtime the session shows, and
// where a user looks instead: one line per runtime recognised.
QJsonArray runtimeNotes(const ReportRows &rows) {
  QJsonArray notes;
  if (rows.go)
    notes.append(QStringLiteral(
        "Go: a goroutine blocked on a sync.Mutex, a channel or select parks without blocking its "
        "thread, so a thread profiler cannot see it (only pthread locks, such as cgo's, and the "
        "runtime's own futexes: runtime.* objects are its idle threads parked, not locks). For "
        "goroutine contention use Go's mutex and block profiles (runtime.SetMutexProfileFraction, "
        "runtime.SetBlockProfileRate, go tool pprof)."));
  if (rows.jvm)
    notes.append(QStringLiteral(
        "Java: call sites are the JVM's own frames (libjvm.so); JIT-compiled Java methods have no "
        "symbols, so a monitor's Java code is not named. Findings name the Java threads and the "
        "kind of lock (synchronized, java.util.concurrent); for the Java methods, take thread "
        "dumps during the run (jcmd PID Thread.print) and look for the same thread names."));
  return notes;
}

// Every loss of data the capture shows, one line each: the probe's gaps
// (it could not write: disk full, the program took its descriptor), frames
// the display's queue dropped, and a capture that ends without the program's
// end and no note saying why (a flight recorder's snapshot has one).
QJsonArray dataLost(const ReportRows &rows) {
  const SessionInfo &i = rows.info;
  QJsonArray lost;
  bool snapshot = false;
  for (const QString &n : i.notices) {
    if (n.startsWith(QLatin1String(TM_NOTICE_GAP)) || n.contains(QLatin1String("stream was cut")))
      lost.append(n);
    snapshot = snapshot || n.contains(QLatin1String("without the program's Goodbye"));
  }
  if (i.framesDropped)
    lost.append(QStringLiteral("%1 frames dropped: the receiver did not keep up with the probe")
                    .arg(i.framesDropped));
  if (!i.goodbyeSeen && !snapshot)
    lost.append(QStringLiteral("the capture ends at %1 s without the program's end: what followed "
                               "is not in it (the program was killed, a recording was stopped, "
                               "or the probe had no disk space or descriptor left)")
                    .arg(rows.durationS, 0, 'f', 3));
  return lost;
}

// The end of the run the rows cover, and the part of a thread's life in
// which the probe kept less detail than asked (SessionInfo::detailLost).
int64_t rowsEndNs(const ReportRows &rows) {
  return rows.startNs + int64_t(rows.durationS * 1e9);
}
// Its life from its end back by its lifetime: a window's thread starts
// at the window (the streamed report).
int64_t threadDetailLostNs(const ReportRows &rows, const ThreadRow &t) {
  const int64_t end = t.info.endNs >= 0 ? std::min(t.info.endNs, rowsEndNs(rows)) : rowsEndNs(rows);
  return detailLostNs(rows.info.detailLost, std::max(end - t.states.lifetimeNs, rows.startNs), end);
}

// Each span of lost detail, and the threads alive in them with how long
// each lost, most first (deliverable 4's alternative to keeping it all).
QJsonArray detailLostJson(const ReportRows &rows) {
  QJsonArray spans;
  const int64_t end = rowsEndNs(rows);
  for (const DetailLoss &d : rows.info.detailLost) {
    const int64_t to = d.toNs < 0 ? end : std::min(d.toNs, end);
    if (to <= d.fromNs || !d.shown()) continue;
    QJsonObject o;
    o["what"] = d.what == DetailLoss::RecordsPaused ? "switch_records_paused" : "slow_ticks";
    o["from_s"] = double(d.fromNs - rows.startNs) / 1e9;
    o["to_s"] = double(to - rows.startNs) / 1e9;
    o["longest_tick_ms"] =
        d.what == DetailLoss::SlowTicks ? QJsonValue(double(d.tickNs) / 1e6) : QJsonValue();
    spans.append(o);
  }
  return spans;
}

QJsonArray detailLostThreadsJson(const ReportRows &rows) {
  std::vector<std::pair<int64_t, const ThreadRow *>> lost;
  for (const ThreadRow &t : rows.threads)
    if (int64_t ns = threadDetailLostNs(rows, t); ns > 0) lost.emplace_back(ns, &t);
  std::stable_sort(lost.begin(), lost.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  QJsonArray out;
  for (const auto &[ns, t] : lost)
    out.append(
        QJsonObject{{"tid", qint64(t->info.tid)}, {"name", t->info.name}, {"lost_s", seconds(ns)}});
  return out;
}

QJsonObject processJson(const ReportRows &rows) {
  const SessionInfo &i = rows.info;
  QJsonArray sources;
  for (int s : i.sources) sources.append(sourceName(s));
  QJsonObject p;
  p["pid"] = qint64(i.pid);
  p["ppid"] = qint64(i.ppid);
  p["exe"] = i.exe;
  p["argv"] = QJsonArray::fromStringList(i.argv);
  // Execs seen from outside: exe and argv are the image it ran last.
  QJsonArray execs;
  for (const ImageChange &c : i.execs)
    execs.append(QJsonObject{{"at_s", double(c.timeNs - i.startNs) / 1e9},
                             {"from_exe", c.fromExe},
                             {"from_argv", QJsonArray::fromStringList(c.fromArgv)},
                             {"to_exe", c.toExe},
                             {"to_argv", QJsonArray::fromStringList(c.toArgv)}});
  p["execs"] = execs;
  p["duration_s"] = rows.durationS;
  // A session that detached (threadmon-attach stopped watching, or the
  // probe stopped itself) saw no exit: its status is no exit status.
  const bool detached = i.goodbyeSeen && i.endReason == THREADMON__END_REASON__END_DETACH;
  // Killed by a signal (read from outside): no exit status, the signal.
  const bool signalled = i.goodbyeSeen && i.endReason == THREADMON__END_REASON__END_SIGNAL;
  // An exec ends this image's session, not the process: the status is the
  // last image's, which this capture never saw.
  const bool execd = i.goodbyeSeen && i.endReason == THREADMON__END_REASON__END_EXEC;
  // It ended, how is not known (read from outside after its parent reaped
  // it): no status, and not detached either.
  const bool unknownEnd = i.goodbyeSeen && i.endReason == THREADMON__END_REASON__END_UNSPECIFIED;
  p["exit_status"] = i.goodbyeSeen && !detached && !signalled && !execd && !unknownEnd
                         ? QJsonValue(i.exitStatus)
                         : QJsonValue();
  p["exit_signal"] = signalled ? QJsonValue(i.exitStatus) : QJsonValue();
  p["detached"] = detached;
  p["exec"] = execd;
  p["ended_unknown"] = unknownEnd;
  p["sources"] = sources;
  // false: read from outside (attach); acquisitions and holds are null.
  p["acquisitions_known"] = i.acquisitionsKnown();
  p["frames_dropped"] = qint64(i.framesDropped);
  p["events_dropped"] = qint64(i.eventsDropped);
  // Timeline detail folded (rings full): the changes, and the thread time
  // their gaps held, whose totals per state are kept but not their order.
  double foldedNs = 0;
  int foldedThreads = 0;
  for (const ThreadRow &t : rows.threads) {
    if (!t.folded) continue;
    foldedThreads++;
    foldedNs += t.foldedNs;
  }
  p["events_folded"] = qint64(i.eventsFolded);
  p["folded_s"] = foldedNs / 1e9;
  p["folded_threads"] = foldedThreads;
  p["switch_records_lost"] = qint64(i.switchesLost);
  // Seconds since the start at which the probe stopped its switch records
  // (THREADMON_MAX_SWITCH_RATE), null when it kept them.
  p["switch_records_stopped_s"] =
      i.switchesStoppedNs >= 0 ? QJsonValue(double(i.switchesStoppedNs - i.startNs) / 1e9)
                               : QJsonValue();
  p["notices"] = QJsonArray::fromStringList(i.notices);
  p["data_lost"] = dataLost(rows);
  p["detail_steps"] = i.detailSteps;
  p["detail_lost"] = detailLostJson(rows);
  p["detail_lost_threads"] = detailLostThreadsJson(rows);
  p["runtime_notes"] = runtimeNotes(rows);
  p["input_warnings"] = QJsonArray::fromStringList(i.inputWarnings);
  return p;
}

// Scheduling attributes as last set (ThreadAttr), and how often they changed.
QJsonObject schedJson(const ThreadInfo &t) {
  static const char *const policies[] = {"SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_BATCH",
                                         "SCHED_ISO",   "SCHED_IDLE", "SCHED_DEADLINE"};
  QJsonObject s;
  s["policy"] = t.policy >= 0 && t.policy < 7 ? QString::fromLatin1(policies[t.policy])
                                               : QString::number(t.policy);
  s["priority"] = t.priority;
  s["nice"] = t.nice;
  QJsonArray cpus;
  bool all = t.affinity.empty();
  for (size_t w = 0; w < t.affinity.size(); w++)
    for (int b = 0; b < 64; b++)
      if (t.affinity[w] >> b & 1) cpus.append(int(w * 64 + size_t(b)));
  s["affinity"] = all ? QJsonValue(QStringLiteral("all")) : QJsonValue(cpus);
  s["changes"] = t.attrChanges;
  return s;
}

// A counter as counterJson says, written where it goes.
template <class W>
void writeCounter(W &w, uint64_t v, CounterUnit unit, bool known) {
  if (!known)
    w.null();
  else if (unit == CounterUnit::Ns)
    w.seconds(int64_t(v));
  else
    w.value(qint64(v));
}

// Its members written where they go: built as Qt objects first, a thread's
// 50 members were 200,000 instructions.
template <class W>
void writeThread(W &out, const ReportRows &rows, const ThreadRow &row) {
  const ThreadInfo &t = row.info;
  const StateTimes &st = row.states;
  Members<W> o;
  o.add("states", [&st](W &w) {
    Members<W> states;
    for (int s = 0; s < kFinalStateCount; s++)
      states.add(QLatin1String(finalStateKey(FinalState(s))),
                 [p = st.percent(FinalState(s))](W &v) { v.value(p); });
    states.write(w);
  });
  o.add("lwp", [&rows, &row](W &w) {
    const LwpDelta &d = row.lwp;
    Members<W> lwp;
    // Hardware counters only when the probe could count them (THREADMON_COUNTERS=1).
    const bool hw = rows.info.hasSource(THREADMON__SOURCE__SOURCE_PERF_HARDWARE);
#define TM_LWP_JSON(field, number, index, member, json_key, unit, known, text)                    \
  if (*json_key)                                                                                  \
    lwp.add(QLatin1String(json_key), [v = d.member, hw](W &x) {                                   \
      writeCounter(x, v, CounterUnit::unit, CounterKnown::known != CounterKnown::Hardware || hw); \
    });
#define TM_LWP_COUNTER TM_LWP_JSON
#define TM_LWP_EXTRA TM_LWP_JSON
#include "counters.def"
#undef TM_LWP_JSON
    lwp.set(QStringLiteral("ipc"),
            hw && d.cycles ? QJsonValue(double(d.instructions) / double(d.cycles)) : QJsonValue());
    lwp.write(w);
  });
  o.add("cpus", [&row](W &w) {
    Members<W> cpus;
    const std::vector<int64_t> &per = row.cpuNs;
    for (size_t c = 0; c < per.size(); c++)
      if (per[c] > 0) cpus.add(QString::number(c), [ns = per[c]](W &v) { v.seconds(ns); });
    cpus.write(w);
  });
  o.add("tid", [tid = qint64(t.tid)](W &w) { w.value(tid); });
  o.add("name", [&t](W &w) { w.value(t.name); });
  o.add("start_routine", [&t](W &w) { w.value(t.startRoutine); });
  o.add("probe", [probe = row.probe](W &w) { w.value(probe); });
  o.add("main", [main = t.main](W &w) { w.value(main); });
  // "jvm" for the JVM's own threads (JIT compilers, GC, ...), else "".
  o.set("runtime", runtimeHousekeeping(t));
  o.add("lifetime_s", [ns = st.lifetimeNs](W &w) { w.seconds(ns); });
  o.add("detail_lost_s", [ns = threadDetailLostNs(rows, row)](W &w) { w.seconds(ns); });
  o.set("sched", schedJson(t));
  o.write(out);
}

// A user thread (M:N): its states in the threads' keys (on an LWP, what
// that LWP did) plus "dispatchable", in % of its life; seconds per LWP.
QJsonObject userThreadJson(const UserThreadRow &row) {
  const UserThreadInfo &u = row.info;
  const UserThreadStates &st = row.states;
  QJsonObject states;
  for (int s = 0; s < kFinalStateCount; s++)
    states[finalStateKey(FinalState(s))] = st.percent(st.onLwp.ns[size_t(s)]);
  states["dispatchable"] = st.percent(st.dispatchableNs);
  QJsonObject lwps;
  for (const auto &[tid, ns] : st.lwpNs) lwps[QString::number(tid)] = seconds(ns);
  QJsonObject o;
  o["id"] = qint64(u.id);
  o["name"] = userThreadName(u);
  o["function"] = u.function;
  o["creator_tid"] = qint64(u.creatorTid);
  o["lifetime_s"] = seconds(st.lifetimeNs);
  o["on_lwp_s"] = seconds(st.onLwpNs);
  o["done"] = u.doneNs >= 0;
  o["states"] = states;
  o["lwps"] = lwps;
  return o;
}

QJsonObject cpuJson(int cpu, const CpuDelta &d) {
  // /proc/stat counts in clock ticks: the sum of the parts is the honest
  // denominator (it is the session's duration to within a tick).
  uint64_t all = d.total();
  QJsonObject o;
  o["cpu"] = cpu;
#define TM_CPU_COUNTER(field, number, member, json_key) o[json_key] = pct(d.member, all);
#include "counters.def"
  return o;
}

// Who blocked whom, one cell per pair: the report's bulk (10,000 cells per
// object for 100 threads), written cell by cell in the keys' sorted order.
void writePairs(JsonWriter &w, const std::vector<WaitPair> &pairs) {
  w.beginArray();
  for (const WaitPair &p : pairs)
    w.numbers({{"count", qint64(p.count)},
               {"holder", qint64(p.holder)},
               {"wait_s", int64_t(p.waitNs), true},
               {"waiter", qint64(p.waiter)}});
  w.endArray();
}

void writePairs(JsonTree &w, const std::vector<WaitPair> &pairs) {
  // Each cell a copy of one object with its keys, its values set in place:
  // an object built key by key per cell was 7% of a long capture's report.
  // Its values set through an iterator, in the object's order of keys (it
  // keeps them sorted): a lookup by key per value was half of the cost.
  static const QJsonObject cell{{"count", 0}, {"holder", 0}, {"wait_s", 0.0}, {"waiter", 0}};
  static const bool sorted = cell.keys() == QStringList{"count", "holder", "wait_s", "waiter"};
  QJsonArray a;
  for (const WaitPair &p : pairs) {
    QJsonObject o = cell;
    if (sorted) {
      auto it = o.begin();
      (it++).value() = qint64(p.count);
      (it++).value() = qint64(p.holder);
      (it++).value() = seconds(int64_t(p.waitNs));
      it.value() = qint64(p.waiter);
    } else {
      o[QLatin1String("waiter")] = qint64(p.waiter);
      o[QLatin1String("holder")] = qint64(p.holder);
      o[QLatin1String("count")] = qint64(p.count);
      o[QLatin1String("wait_s")] = seconds(int64_t(p.waitNs));
    }
    a.append(o);
  }
  w.value(a);
}

QString namedByKey(SyncObjectInfo::NamedBy by) {
  switch (by) {
    case SyncObjectInfo::NamedBy::Symbol:
      return QStringLiteral("symbol");
    case SyncObjectInfo::NamedBy::MadeAt:
      return QStringLiteral("made_at");
    case SyncObjectInfo::NamedBy::FirstUse:
      return QStringLiteral("first_use");
    case SyncObjectInfo::NamedBy::Address:
      break;
  }
  return QStringLiteral("address");
}

// The initialiser's call site: the frame as shown and its parts (file and
// line null when the module's debug information is not on this machine).
QJsonValue madeAtJson(const QString &frame, const QString &member) {
  if (frame.isEmpty()) return QJsonValue();
  const SiteName n = siteName(frame);
  return QJsonObject{{"frame", frame},
                     {"member", member.isEmpty() ? QJsonValue() : QJsonValue(member)},
                     {"module", n.module},
                     {"function", n.function},
                     {"file", n.line ? QJsonValue(n.file) : QJsonValue()},
                     {"line", n.line ? QJsonValue(n.line) : QJsonValue()}};
}

template <class W>
void writeSync(W &out, const ReportRows &rows, const SyncRow &row) {
  const SyncObjectInfo &s = row.info;
  const SyncDelta &d = row.delta;
  Members<W> o;
  o.set("id", qint64(s.id));
  o.set("kind", syncKindName(s.kind));
  if (s.runtimeKind) {
    // Found as a futex word, but the program's own: what it acts as.
    o.set("acts_as", syncKindName(s.runtimeKind));
    o.set("runtime", s.runtimeWhat);
  }
  o.set("address", QStringLiteral("0x%1").arg(s.address, 0, 16));
  o.set("module", s.module);
  // symbol: readable, bare; its offset and the name as in the symbol table
  // apart, so scripts need not parse "name+0x10".
  o.set("symbol", s.symbol);
  o.set("symbol_offset", s.symbol.isEmpty() ? QJsonValue() : QJsonValue(qint64(s.symbolOffset)));
  o.set("symbol_raw", s.symbolRaw);
  o.set("symbol_file", s.symbolFile);
  // The member of the global it is (".users.lock"), by the debug information.
  o.set("symbol_member", s.symbolMember.isEmpty() ? QJsonValue() : QJsonValue(s.symbolMember));
  // The name a person uses (SyncObjectInfo::name), what gave it, and where
  // the program made the object (null when the probe saw no initialiser).
  o.set("name", s.name());
  o.set("named_by", namedByKey(s.namedBy()));
  o.set("made_at", madeAtJson(s.madeAt, s.madeMember));
  // No initialiser seen (read from outside, a static initialiser): the
  // first call site seen waiting on it, the best place known to look.
  o.set("first_used_at", s.madeAt.isEmpty() ? madeAtJson(s.callSite(), QString()) : QJsonValue());
  // Unknown is null, never 0: no wrapper counted a hidden lock's
  // acquisitions nor timed its longest wait, and a session read from
  // outside (SOURCE_ATTACH) counted no object's acquisitions nor holds.
  const bool internal = s.kind == THREADMON__SYNC_KIND__KIND_INTERNAL;
  // A futex lock's uncontended takes never enter the kernel: only its waits are known.
  const bool futex = s.kind == THREADMON__SYNC_KIND__KIND_FUTEX;
  const bool counted = rows.info.acquisitionsKnown() && !internal && !futex;
  // Only locks are held (a barrier, cond or semaphore is waited on): null
  // for the others. Every hold timed: exact; else estimated from hold_samples.
  const bool held = isHeldKind(s.kind) && counted;
  auto known = [&](CounterKnown k) {
    switch (k) {
      case CounterKnown::Always:
        return true;
      case CounterKnown::Counted:
        return counted;
      case CounterKnown::Held:
        return held;
      case CounterKnown::Timed:
        return !internal;
      case CounterKnown::Hardware:
        break;
    }
    return false;
  };
#define TM_SYNC_COUNTER(field, number, index, member, merge, json_key, unit, when) \
  if (*json_key)                                                                   \
    o.set(json_key, counterJson(d.member, CounterUnit::unit, known(CounterKnown::when)));
#include "counters.def"
  o.set("hold_exact", held ? QJsonValue(d.holdSamples == d.acquisitions) : QJsonValue());
  o.set("call_site", row.callSite);
  // Only a runtime's housekeeping threads waited on it (listed last).
  o.set("housekeeping", row.housekeeping);
  QJsonArray sites;
  for (const CallSite &c : row.sites) {
    QJsonObject j;
    j["frames"] = QJsonArray::fromStringList(c.frames);
    j["contentions"] = qint64(c.contentions);
    j["wait_s"] = seconds(int64_t(c.waitNs));
    sites.append(j);
  }
  o.set("call_sites", sites);
  if (internal) {
    // No wrapper times an internal lock: its wait is the time estimated
    // lost to it (SessionModel::internalWaiters), asleep on it and in system
    // calls for it, as in the model's delta (wait_s above), its call sites,
    // the display and the exports; the two parts beside it.
    int64_t asleep = 0, kernel = 0;
    for (const InternalWaiter &x : row.internal) {
      asleep += int64_t(x.waitNs);
      kernel += int64_t(x.kernelNs);
    }
    o.set("asleep_s", seconds(asleep));
    o.set("kernel_s", seconds(kernel));
    o.add("waiters", [&row](W &w) {
      w.beginArray();
      for (const InternalWaiter &x : row.internal) {
        w.beginObject();  // keys in sorted order
        w.key("asleep_s");
        w.seconds(int64_t(x.waitNs));
        w.key("inferred");
        w.value(x.inferred);
        w.key("kernel_s");
        w.seconds(int64_t(x.kernelNs));
        w.key("samples");
        w.value(qint64(x.samples));
        w.key("tid");
        w.value(qint64(x.tid));
        w.key("wait_s");
        w.seconds(int64_t(x.waitNs + x.kernelNs));
        w.endObject();
      }
      w.endArray();
    });
  } else {
    o.add("waiters", [&row](W &w) {
      w.beginArray();
      for (const auto &x : row.waiters)
        w.numbers({{"tid", qint64(x.first)}, {"wait_s", int64_t(x.second), true}});
      w.endArray();
    });
  }
  o.add("blocked_by", [&row](W &w) { writePairs(w, row.blockedBy); });
  o.write(out);
}

QJsonObject findingJson(int64_t startNs, const Finding &f) {
  QJsonObject o;
  o["kind"] = findingKindKey(f.kind);
  o["severity"] = severityKey(f.severity);
  o["message"] = f.message;
  o["evidence"] = f.evidence;
  o["view"] = viewKindName(findingInfo(f.kind).view);
  QJsonArray threads, objects;
  for (uint32_t t : f.threads) threads.append(qint64(t));
  for (uint32_t id : f.objects) objects.append(qint64(id));
  o["threads"] = threads;
  o["objects"] = objects;
  o["t0_s"] = seconds(f.t0 - startNs);
  o["t1_s"] = seconds(f.t1 - startNs);
  return o;
}

template <class W>
void writeReport(W &out, const ReportRows &rows, const ThreadFilter *only) {
  Members<W> root;
  root.set("process", processJson(rows));
  root.add("threads", [&](W &w) {
    w.beginArray();
    for (const ThreadRow &t : rows.threads)
      if (!only || only->matches(t.info.tid, t.info.name)) writeThread(w, rows, t);
    w.endArray();
  });
  root.add("user_threads", [&](W &w) {
    w.beginArray();
    for (const UserThreadRow &u : rows.users) w.value(userThreadJson(u));
    w.endArray();
  });
  root.add("cpus", [&](W &w) {
    w.beginArray();
    for (size_t c = 0; c < rows.cpus.size(); c++) w.value(cpuJson(int(c), rows.cpus[c]));
    w.endArray();
  });
  root.add("sync_objects", [&](W &w) {
    w.beginArray();
    for (const SyncRow &s : rows.sync) writeSync(w, rows, s);
    w.endArray();
  });
  root.add("wait_matrix", [&](W &w) { writePairs(w, rows.waitMatrix); });
  root.add("findings", [&](W &w) {
    w.beginArray();
    for (const Finding &f : rows.findings) w.value(findingJson(rows.startNs, f));
    w.endArray();
  });
  root.write(out);
}

}  // namespace

QJsonObject reportJson(const ReportRows &rows) {
  JsonTree tree;
  writeReport(tree, rows, nullptr);
  return tree.take();
}

void writeReportJson(const ReportRows &rows, JsonWriter *out, const ThreadFilter *only) {
  writeReport(*out, rows, only);
}

QJsonObject reportJson(const SessionModel &m) { return reportJson(collectRows(m)); }
