#include "streamfindings.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>

#include "findings_util.h"
#include "runtimes.h"
#include "sessionmodel.h"

using namespace tmon;

namespace {

// Evidence figures that add up over windows (a wait's seconds, a barrier's
// rounds, the lifetimes they are shares of); the rest (shares, counts of
// threads, CPUs) only mean something within one window.
const char *const kAdditive[] = {
    "wait_s",     "kernel_s", "threads_lifetime_s", "waiters_lifetime_s",
    "runnable_s", "rounds",   "idle_phase_s",       "run_s",
    "lifetime_s", "asleep_s", "writers_lifetime_s"};

// Threads and objects a merged finding names: at most this many (a
// finding about pools of thousands names them in its message).
constexpr size_t kMaxIds = 1000;

// How bad a finding is within its severity: its rule's main share.
double weight(const Finding &f) {
  for (const char *k : {"share", "others_wait_share", "dispatchable_share", "lifetime_s"})
    if (f.evidence.contains(QLatin1String(k))) return f.evidence[QLatin1String(k)].toDouble();
  return 0;
}

void unite(std::vector<uint32_t> *to, const std::vector<uint32_t> &from) {
  std::set<uint32_t> s(to->begin(), to->end());
  for (uint32_t id : from)
    if (s.size() < kMaxIds && s.insert(id).second) to->push_back(id);
}

// Whole seconds for windows of 5 s or more (the default), tenths below.
QString seconds(double s, double windowS) {
  return QString::number(s, 'f', windowS < 5 ? 1 : 0);
}

}  // namespace

StreamFindingsPart streamFindingsPart(const SessionModel &m, const TimeRange &span,
                                      const KnownWaiterNs &known,
                                      const std::vector<uint32_t> &gappedBefore) {
  StreamFindingsPart p;
  p.span = span;
  p.startNs = m.startNs();
  p.findings = computeFindings(m, span, known, &p.inputs);
  const std::set<uint32_t> program = findings_detail::programTids(m, span);
  p.programTids.assign(program.begin(), program.end());
  p.dataLost = findings_detail::dataLostInputs(m, span);
  // The run's threads with gaps in the order a whole read lists them, its
  // threads' (the model knows every thread begun before it: descriptions).
  std::vector<uint32_t> &g = p.dataLost.gapped;
  std::set<uint32_t> had(g.begin(), g.end());
  for (uint32_t tid : gappedBefore)
    if (had.insert(tid).second) g.push_back(tid);
  std::stable_sort(g.begin(), g.end(), [&m](uint32_t a, uint32_t b) {
    const int i = m.indexOfTid(a), j = m.indexOfTid(b);
    return uint32_t(i) < uint32_t(j);  // unknown (-1) last
  });
  if (!gappedBefore.empty()) p.dataLost.gappedList = findings_detail::threadList(m, g);
  return p;
}

StreamFindings::Key StreamFindings::keyOf(const Finding &f) {
  QStringList subject;
  switch (findingInfo(f.kind).merge) {
    case FindingMerge::Objects:
      for (uint32_t id : f.objects) subject << QString::number(id);
      break;
    case FindingMerge::Threads:
      for (uint32_t tid : f.threads) subject << QString::number(tid);
      break;
    case FindingMerge::Lock:
      subject << f.evidence["lock"].toString();
      break;
    case FindingMerge::Program:
      break;  // one key: the program as a whole
    case FindingMerge::Newest:
    case FindingMerge::Cycle:
      break;  // never merged (add)
  }
  return {int(f.kind), subject.join(',')};
}

void StreamFindings::merge(const Finding &f, const TimeRange &span) {
  auto [it, fresh] = merged_.emplace(keyOf(f), Merged{});
  Merged &m = it->second;
  if (fresh) m.firstNs = span.t0;
  m.lastNs = span.t1;
  m.windows++;
  for (const char *k : kAdditive)
    if (f.evidence[QLatin1String(k)].isDouble())
      m.sums[QLatin1String(k)] += f.evidence[QLatin1String(k)].toDouble();
  const bool worse = fresh || f.severity < m.worst.severity ||
                     (f.severity == m.worst.severity && weight(f) > weight(m.worst));
  std::vector<uint32_t> threads = m.worst.threads, objects = m.worst.objects;
  if (worse) {
    m.worst = f;
    m.worstSpan = span;
  }
  // The worst window's first, then the others' up to the cap.
  unite(&m.worst.threads, threads);
  unite(&m.worst.threads, f.threads);
  unite(&m.worst.objects, objects);
  unite(&m.worst.objects, f.objects);
}

// A cycle that lasts across a window's edge is seen by both windows; the
// later knows more (whether and when it was resolved, as a whole read
// does). A segment's new model sees it form again when its waits, carried
// over the edge, begin (CaptureWindow::waitsOpenAt): that is the cycle the
// windows before saw, which formed when they say.
void StreamFindings::addCycle(const Finding &f) {
  // (The same threads cannot form a cycle again while theirs holds.)
  const auto same = std::find_if(cycles_.begin(), cycles_.end(), [&f](const Finding &d) {
    return d.kind == f.kind && d.threads == f.threads && d.objects == f.objects &&
           (d.t0 == f.t0 || (d.t0 < f.t0 && f.t0 < d.t1));
  });
  if (same == cycles_.end()) {
    cycles_.push_back(f);
    return;
  }
  if (f.t1 < same->t1) return;
  Finding later = f;
  if (same->t0 != f.t0 && f.kind == FindingKind::Deadlock) {
    const bool live = f.evidence["resolved"] == QJsonValue(false);
    const QString tail = findings_detail::deadlockLasted(f.evidence["formed_s"].toDouble(),
                                                         f.evidence["duration_s"].toDouble(), live);
    if (!later.message.endsWith(tail)) return;  // not the words deadlockFindings gives
    const double formed = same->evidence["formed_s"].toDouble(),
                 lasted = double(f.t1 - same->t0) / 1e9;
    later.message.chop(tail.size());
    later.message += findings_detail::deadlockLasted(formed, lasted, live);
    later.t0 = same->t0;
    later.evidence["formed_s"] = formed;
    later.evidence["detected_s"] = same->evidence["detected_s"];
    later.evidence["duration_s"] = lasted;
  }
  *same = later;
}

void StreamFindings::add(const StreamFindingsPart &p, const std::set<uint32_t> &blockedThrough) {
  if (windows_++ == 0) startNs_ = p.startNs;
  std::vector<Finding> newest;
  for (const Finding &f : p.findings) {
    if (f.kind == FindingKind::NeverRuns && !f.threads.empty() &&
        blockedThrough.count(f.threads.front()))
      continue;
    switch (findingInfo(f.kind).merge) {
      case FindingMerge::Newest:
        newest.push_back(f);
        break;
      case FindingMerge::Cycle:
        addCycle(f);
        break;
      case FindingMerge::Objects:
      case FindingMerge::Threads:
      case FindingMerge::Lock:
      case FindingMerge::Program:
        merge(f, p.span);
        break;
    }
  }
  dataLost_ = p.dataLost;
  programTids_.insert(p.programTids.begin(), p.programTids.end());
  const FindingInputs &in = p.inputs;
  runnableBeyondCpusNs_ += in.runnableBeyondCpusNs;
  cpus_ = std::max(cpus_, in.cpus);
  idlePhaseNs_ += in.idlePhaseNs;
  maxOccupying_ = std::max(maxOccupying_, in.maxOccupying);
  if (in.cpuBusy >= 0) {
    cpuBusyNs_ += in.cpuBusy * double(p.span.length());
    cpuKnownNs_ += double(p.span.length());
  }
  for (const FindingInputs::Round &rd : in.rounds)
    findings_detail::barrierTally(&barriers_[rd.object], rd);
  for (const auto &[id, o] : in.runtimeObjects) {
    FindingInputs::RuntimeObject &to = runtime_[id];
    for (const auto &[kind, ns] : o.siteWaitNs) to.siteWaitNs[kind] += ns;
    for (const auto &[edge, ns] : o.byEdge) to.byEdge[edge] += ns;
  }
  for (const Finding &f : in.internalUnder) {
    if (f.objects.empty()) continue;
    const auto [it, fresh] = internalUnder_.try_emplace(f.objects.front(), f);
    if (!fresh && f.evidence["wait_s"].toDouble() > it->second.evidence["wait_s"].toDouble())
      it->second = f;
  }
  sleepKnown_ = sleepKnown_ || in.sleepKnown;
  userSpansBegun_ += in.userSpansBegun;
  for (const FindingInputs::Waiting &w : in.waiting) {
    FindingInputs::Waiting &to = waiting_[w.tid];
    to.tid = w.tid;
    to.internalWaitNs += w.internalWaitNs;
    to.gapNs += w.gapNs;
    to.chosenSleepNs += w.chosenSleepNs;
    for (size_t k = 0; k < to.asleep.size(); k++) to.asleep[k] += w.asleep[k];
    to.sampled = to.sampled || w.sampled;
  }
  for (const FindingInputs::Active &a : in.active) {
    std::pair<int64_t, int64_t> &t = active_[a.tid];
    t.first += a.activeNs;
    t.second += a.lifeNs;
  }
  // A kind the newest window raised replaces that kind's older findings.
  for (const Finding &f : newest)
    newest_.erase(std::remove_if(newest_.begin(), newest_.end(),
                                 [&f](const Finding &o) { return o.kind == f.kind; }),
                  newest_.end());
  newest_.insert(newest_.end(), newest.begin(), newest.end());
}

namespace {
const QString kNoticeStart = QStringLiteral("Read a window at a time (a long capture): ");
}

QString StreamFindings::notice(double windowS) {
  return kNoticeStart +
         QStringLiteral(
             "findings are each %1 s window's, merged (evidence.windows says in how many they "
             "held and when the worst was); a problem spread thinly over the run may stand out "
             "in no window, and one window's burst can; open a span of it in threadmon-display "
             "for the detail.")
             .arg(seconds(windowS, windowS));
}

bool StreamFindings::isNotice(const QString &n) {
  return n.startsWith(kNoticeStart);
}

namespace {

// data_lost of the whole run, as dataLostFindings makes it of a whole read:
// the newest window's counters (the run's so far) with the switch records of
// every window (rows), the threads with gaps of every window, the probe's
// share of the run from the rows summed over every window (its runnable
// time or its run-queue counter, of its life), whether the run was cut
// short decided by that share.
bool dataLostOfRun(const ReportRows &rows, findings_detail::DataLostInputs in, Finding *f) {
  in.switchesLost = rows.info.switchesLost;
  in.switchesReceived = rows.info.switchesReceived;
  in.r = TimeRange{rows.startNs, rows.startNs + std::llround(rows.durationS * 1e9)};
  // The gapped threads' folded time and lives, from the rows (whole-run
  // values, as foldedIn takes them over a whole read).
  in.foldedNs = in.gappedLifeNs = 0;
  for (const ThreadRow &t : rows.threads)
    if (std::find(in.gapped.begin(), in.gapped.end(), t.info.tid) != in.gapped.end()) {
      in.foldedNs += std::llround(t.foldedNs);
      in.gappedLifeNs += t.states.lifetimeNs;
    }
  const auto it = std::find_if(rows.threads.begin(), rows.threads.end(), [&rows](const auto &t) {
    return rows.info.probeTid && t.info.tid == rows.info.probeTid;
  });
  if (it != rows.threads.end() && it->states.lifetimeNs > 0)
    in.probeRunnable = std::min(1.0, std::max(double(it->states.ns[size_t(FinalState::Runnable)]),
                                              double(it->lwp.runqueueNs)) /
                                         double(it->states.lifetimeNs));
  return findings_detail::dataLostFinding(in, f);
}

// A hidden lock's finding in the figures of the whole run: the rows hold
// its waits estimated once from every window's inputs (Merger's
// finishInternal), as a whole read's internalLockFindings takes them, and
// each waiter's life. False when the run's share is under the rule's
// threshold (a whole read has no such finding): it is dropped. Its waiters
// are those of the estimate but the probe's thread; the names in its
// message stay the worst window's.
bool hiddenLockOfRun(const ReportRows &rows, Finding *f) {
  if (f->objects.empty() || !f->evidence.contains(QLatin1String("asleep_s"))) return true;
  const auto s = std::find_if(rows.sync.begin(), rows.sync.end(),
                              [f](const SyncRow &r) { return r.info.id == f->objects.front(); });
  if (s == rows.sync.end() || s->internal.empty()) return true;
  int64_t wait = 0, kernel = 0, life = 0;
  std::vector<uint32_t> tids;
  QJsonObject waitS;
  for (const InternalWaiter &w : s->internal) {
    const auto t = std::find_if(rows.threads.begin(), rows.threads.end(),
                                [&w](const ThreadRow &r) { return r.info.tid == w.tid; });
    if (t == rows.threads.end() || t->probe) continue;
    wait += int64_t(w.waitNs);
    kernel += int64_t(w.kernelNs);
    life += t->states.lifetimeNs;
    tids.push_back(w.tid);
    waitS[QString::number(w.tid)] = double(w.waitNs + w.kernelNs) / 1e9;
  }
  if (life <= 0) return true;
  const double share = double(wait + kernel) / double(life);
  if (share < finding::kInternalShare) return false;
  std::sort(tids.begin(), tids.end());
  using findings_detail::percent;
  f->severity = findings_detail::severityByShare(share, finding::kInternalShare);
  f->message.replace(QRegularExpression(QStringLiteral("lost about \\S+ of their time")),
                     QStringLiteral("lost about %1 of their time").arg(percent(share)));
  f->message.replace(
      QRegularExpression(
          QStringLiteral(": \\S+ asleep waiting for it, \\S+ in system calls for it\\.")),
      QStringLiteral(": %1 asleep waiting for it, %2 in system calls for it.")
          .arg(percent(double(wait) / double(life)), percent(double(kernel) / double(life))));
  f->threads = tids;
  f->evidence["waiters"] = findings_detail::tidArray(tids);
  f->evidence["wait_s"] = double(wait + kernel) / 1e9;
  f->evidence["asleep_s"] = double(wait) / 1e9;
  f->evidence["kernel_s"] = double(kernel) / 1e9;
  f->evidence["wait_s_by_thread"] = waitS;
  f->evidence["waiters_lifetime_s"] = double(life) / 1e9;
  f->evidence["share"] = share;
  return true;
}

// "looper-1 (4242)", or "thread 4242" (findings_detail::threadName) from the
// rows.
QString threadNameOf(const ReportRows &rows, uint32_t tid) {
  const auto t = std::find_if(rows.threads.begin(), rows.threads.end(),
                              [tid](const ThreadRow &r) { return r.info.tid == tid; });
  const QString name = t == rows.threads.end() ? QString() : t->info.name;
  return name.isEmpty() ? QStringLiteral("thread %1").arg(tid)
                        : QStringLiteral("%1 (%2)").arg(name).arg(tid);
}

// Whether the finding is about a hidden lock (KIND_INTERNAL).
bool hiddenLockOf(const ReportRows &rows, const Finding &f) {
  return !f.objects.empty() &&
         std::any_of(rows.sync.begin(), rows.sync.end(), [&f](const SyncRow &r) {
           return r.info.id == f.objects.front() &&
                  r.info.kind == THREADMON__SYNC_KIND__KIND_INTERNAL;
         });
}

// A serialising object's finding in the figures of the whole run, as
// serialisingFindings takes them of a whole read: the program's threads'
// waits on it summed over every window (the rows), over those threads'
// lives in the run (program: the program's threads of every window). False
// when the run's figures are under the rule's thresholds (a whole read has
// no such finding): it is dropped. A message naming more threads than a
// sentence does (by pool) keeps the worst window's names.
bool serialisingOfRun(const ReportRows &rows, const std::set<uint32_t> &program,
                      const SessionModel &names, Finding *f) {
  if (f->objects.empty()) return true;
  const auto s = std::find_if(rows.sync.begin(), rows.sync.end(),
                              [f](const SyncRow &r) { return r.info.id == f->objects.front(); });
  if (s == rows.sync.end()) return true;
  int64_t life = 0;
  for (const ThreadRow &t : rows.threads)
    if (program.count(t.info.tid)) life += t.states.lifetimeNs;
  std::map<uint32_t, int64_t> byWaiter;
  int64_t blocked = 0;
  for (const auto &[tid, ns] : s->waiters) {
    if (!program.count(tid)) continue;
    byWaiter.emplace(tid, ns);
    blocked += ns;
  }
  if (life <= 0) return true;
  const double share = double(blocked) / double(life);
  if (share < finding::kSerialisingShare || int(byWaiter.size()) < finding::kSerialisingMinWaiters)
    return false;
  std::vector<uint32_t> waiters;
  QJsonObject waitS;
  for (const auto &[tid, ns] : byWaiter) {
    waiters.push_back(tid);
    waitS[QString::number(tid)] = double(ns) / 1e9;
  }
  std::map<uint32_t, int64_t> lives;
  for (const ThreadRow &t : rows.threads)
    if (byWaiter.count(t.info.tid)) lives[t.info.tid] += t.states.lifetimeNs;
  const findings_detail::SentenceWaiters named =
      findings_detail::sentenceWaiters(byWaiter, [&lives](uint32_t tid) { return lives[tid]; });
  const double own = findings_detail::ownShare(named.waitedNs, named.lifeNs);
  using findings_detail::percent;
  const int spent = f->message.indexOf(QLatin1String(" spent "));
  const int most = f->message.lastIndexOf(QLatin1String(" Most waiting: "));
  if (spent < 0) return true;  // not the words serialisingFindings gives
  QString head = f->message.left(spent);
  constexpr size_t kNamed = 7;  // threadList names up to so many
  if (named.tids.size() <= kNamed) {
    QStringList said;
    for (uint32_t tid : named.tids) said << threadNameOf(rows, tid);
    const QString last = said.takeLast();
    head = said.isEmpty() ? last : said.join(QStringLiteral(", ")) + QStringLiteral(" and ") + last;
  }
  QString tail = f->message.mid(spent, most < 0 ? -1 : most - spent);
  // Its call site the program's function on the run's busiest site
  // (findings_detail::programFunction); a runtime's lock keeps the worst
  // window's caller.
  if (!f->evidence.contains(QLatin1String("runtime"))) {
    const QString was = f->evidence["call_site"].toString();
    const CallSite *site = busiestUnwound(s->sites);
    const QString fn = names.programFrame(site ? site->frames : s->info.firstContentionStack);
    const QString rest = QStringLiteral(": only one of them can hold it");
    auto taken = [&rest](const QString &in) {
      return (in.isEmpty() ? QString() : QStringLiteral(", taken in %1").arg(in)) + rest;
    };
    if (tail.contains(taken(was))) {
      tail.replace(taken(was), taken(fn));
      f->evidence["call_site"] = fn;
    }
  }
  tail.replace(QRegularExpression(QStringLiteral(
                   "^ spent \\S+ of their time \\(\\S+ of the program's thread time\\)")),
               QStringLiteral(" spent %1 of their time (%2 of the program's thread time)")
                   .arg(percent(own), percent(share)));
  f->message = head + tail;
  if (!s->blockedBy.empty() && s->blockedBy.front().holder)
    f->message += QStringLiteral(" Most waiting: %1 for %2.")
                      .arg(threadNameOf(rows, s->blockedBy.front().waiter),
                           threadNameOf(rows, s->blockedBy.front().holder));
  f->severity = findings_detail::severityByShare(share, finding::kSerialisingShare);
  f->threads = waiters;
  f->evidence["waiters"] = findings_detail::tidArray(waiters);
  f->evidence["wait_s"] = double(blocked) / 1e9;
  f->evidence["wait_s_by_thread"] = waitS;
  f->evidence["threads_lifetime_s"] = double(life) / 1e9;
  f->evidence["share"] = share;
  f->evidence["waiters_lifetime_s"] = double(named.lifeNs) / 1e9;
  f->evidence["waiters_share"] = own;
  return true;
}
}  // namespace

// The oversubscribed finding of the whole run, as schedulingFindings makes
// it of a whole read, from its inputs summed over every window: the threads
// busy over the run (a tenth of their life wanting a CPU) in the rows'
// order, their lives, the runnable time beyond the CPUs. False when the
// run's share is under the rule's threshold.
bool StreamFindings::oversubscribedOfRun(const ReportRows &rows, Finding *f) const {
  std::vector<uint32_t> busy;
  int64_t life = 0;
  for (const ThreadRow &t : rows.threads) {
    const auto a = active_.find(t.info.tid);
    if (a == active_.end() || a->second.second <= 0 ||
        double(a->second.first) < 0.1 * double(a->second.second))
      continue;
    busy.push_back(t.info.tid);
    life += a->second.second;
  }
  const TimeRange run{rows.startNs, rows.startNs + std::llround(rows.durationS * 1e9)};
  return findings_detail::oversubscribedFinding(busy, life, runnableBeyondCpusNs_, cpus_,
                                                cpuKnownNs_ > 0 ? cpuBusyNs_ / cpuKnownNs_ : -1,
                                                run, f);
}

// The undersubscribed finding of the whole run, as schedulingFindings makes
// it of a whole read, from its inputs over every window: the idle phases'
// time summed, the most threads that held a CPU at once, the program's
// threads in the rows' order. False when the run's share is under the
// rule's threshold (a worst window's is no run's).
bool StreamFindings::undersubscribedOfRun(const ReportRows &rows, Finding *f) const {
  std::vector<uint32_t> tids;
  for (const ThreadRow &t : rows.threads)
    if (programTids_.count(t.info.tid)) tids.push_back(t.info.tid);
  const TimeRange run{rows.startNs, rows.startNs + std::llround(rows.durationS * 1e9)};
  return findings_detail::undersubscribedFinding(tids, idlePhaseNs_, maxOccupying_, cpus_,
                                                 cpuKnownNs_ > 0 ? cpuBusyNs_ / cpuKnownNs_ : -1,
                                                 run, f);
}

// A barrier_imbalance finding of the whole run, as barrierFindings makes it
// of a whole read: the rounds of every window tallied in order of release
// (each window's own: those released in it), the threads that waited on it
// from the rows' table, their CPU, sleep and idle shares of the run from
// the rows' states. Its object's name stays the worst window's. False when
// the run's rounds are no imbalance.
bool StreamFindings::barrierOfRun(const ReportRows &rows, Finding *f) const {
  if (f->objects.empty()) return true;
  const QString head = QStringLiteral("At "),
                tail = QStringLiteral(" the threads wait on average ");
  const int at = f->message.indexOf(tail);
  if (!f->message.startsWith(head) || at < 0) return true;  // not barrierFindings' words
  const QJsonValue object = f->evidence["object"];
  if (!barrierOfRun(rows, f->objects.front(), f->message.mid(head.size(), at - head.size()), f))
    return false;
  f->evidence["object"] = object;
  return true;
}

// The same of object, named objectName, into *f; false when the run's
// rounds are no imbalance (or the object is unknown: *f is left as it is).
bool StreamFindings::barrierOfRun(const ReportRows &rows, uint32_t object,
                                  const QString &objectName, Finding *f) const {
  const auto t = barriers_.find(object);
  const auto s = std::find_if(rows.sync.begin(), rows.sync.end(),
                              [object](const SyncRow &r) { return r.info.id == object; });
  if (t == barriers_.end() || s == rows.sync.end()) return true;
  findings_detail::BarrierContext c;
  c.objectName = objectName;
  for (const WaitPair &p : s->blockedBy) c.threads.push_back(p.waiter);
  std::sort(c.threads.begin(), c.threads.end());
  c.threads.erase(std::unique(c.threads.begin(), c.threads.end()), c.threads.end());
  c.threadName = [&rows](uint32_t tid) { return threadNameOf(rows, tid); };
  auto row = [&rows](uint32_t tid) -> const ThreadRow * {
    const auto r = std::find_if(rows.threads.begin(), rows.threads.end(),
                                [tid](const ThreadRow &x) { return x.info.tid == tid; });
    return r == rows.threads.end() ? nullptr : &*r;
  };
  // findings_barrier.cpp's cpuShares, asleepShare and idleShare of the rows.
  c.cpu = [&](uint32_t last, double *cpuLast, double *cpuOthers) {
    *cpuLast = *cpuOthers = 0;
    int n = 0;
    for (const ThreadRow &r : rows.threads) {
      const bool member = std::binary_search(c.threads.begin(), c.threads.end(), r.info.tid);
      if ((r.info.tid != last && !member) || !programTids_.count(r.info.tid)) continue;
      const double on = double(r.states.ns[size_t(FinalState::OnCpu)]);
      if (r.info.tid == last) {
        *cpuLast = on;
      } else {
        *cpuOthers += on;
        n++;
      }
    }
    *cpuOthers = n ? *cpuOthers / n : 0;
  };
  c.asleepShare = [&row](uint32_t tid) {
    const ThreadRow *r = row(tid);
    if (!r || r->states.lifetimeNs <= 0) return 0.0;
    int64_t asleep = 0;
    for (int k = 0; k < kFinalStateCount; k++) {
      const FinalState st = FinalState(k);
      if (st == FinalState::Sleeping || st == FinalState::IoWait || st == FinalState::Idle ||
          (isBlockedState(st) && st != FinalState::BlockedBarrier && st != FinalState::BlockedCond))
        asleep += r->states.ns[size_t(k)];
    }
    if (asleep <= r->states.ns[size_t(FinalState::OnCpu)]) return 0.0;
    return double(asleep) / double(r->states.lifetimeNs);
  };
  c.idleShare = [&row](uint32_t tid) {
    const ThreadRow *r = row(tid);
    return r && r->states.lifetimeNs > 0
               ? double(r->states.ns[size_t(FinalState::Idle)]) / double(r->states.lifetimeNs)
               : 0.0;
  };
  const TimeRange run{rows.startNs, rows.startNs + std::llround(rows.durationS * 1e9)};
  Finding g;
  if (!findings_detail::barrierFinding(object, t->second, c, run, &g)) return false;
  *f = g;
  return true;
}

// As computeFindings drops them of a whole read: a finding whose objects
// only a runtime's own threads waited on, or whose threads are all the
// runtime's, from the rows of the run (a window's model drops its own, but
// a finding made of the run's inputs is no window's: a JVM's compile queue
// read as a barrier of the run).
static bool aboutRuntimeMachinery(const ReportRows &rows, const Finding &f) {
  if (findingInfo(f.kind).runtime == FindingRuntime::Keep) return false;
  bool objects = !f.objects.empty(), threads = !f.threads.empty();
  for (uint32_t id : f.objects) {
    const auto s = std::find_if(rows.sync.begin(), rows.sync.end(),
                                [id](const SyncRow &r) { return r.info.id == id; });
    objects = objects && s != rows.sync.end() && s->housekeeping;
  }
  for (uint32_t tid : f.threads) {
    const auto t = std::find_if(rows.threads.begin(), rows.threads.end(),
                                [tid](const ThreadRow &r) { return r.info.tid == tid; });
    threads = threads && t != rows.threads.end() && !runtimeHousekeeping(t->info).isEmpty();
  }
  return objects || threads;
}

// The program's threads in the run, as findings_detail::programThreads
// picks them of a whole read (the rows' order is the model's): every
// thread but the probe's, a runtime's housekeeping threads only when they
// used more CPU than the rest.
static std::vector<findings_detail::ProgramThread> programOfRun(const ReportRows &rows) {
  std::vector<findings_detail::ProgramThread> all;
  std::vector<bool> housekeeping;
  for (size_t i = 0; i < rows.threads.size(); i++) {
    const ThreadRow &t = rows.threads[i];
    if (t.probe || (rows.info.probeTid && t.info.tid == rows.info.probeTid)) continue;
    all.push_back({int(i), t.info.tid, t.states});
    housekeeping.push_back(!runtimeHousekeeping(t.info).isEmpty());
  }
  return findings_detail::chooseProgramThreads(all, housekeeping);
}

// A gil_contention or java_lock finding of the whole run, as runtimeFindings
// makes it of a whole read: the waits of every window summed by waiter and
// releaser, the program's threads' lives in the run from the rows. A
// message naming more threads than a sentence does (by pool) keeps the
// worst window's names. False when the run's figures are under the rule's
// thresholds.
bool StreamFindings::runtimeOfRun(const ReportRows &rows, Finding *f) const {
  const std::vector<findings_detail::ProgramThread> pts = programOfRun(rows);
  std::set<uint32_t> program;
  for (const findings_detail::ProgramThread &p : pts) program.insert(p.tid);
  const QString worstNames = f->message.left(f->message.indexOf(QLatin1String(" spent ")));
  auto names = [&](const std::vector<uint32_t> &tids) {
    constexpr size_t kNamed = 7;  // threadList names up to so many
    if (tids.size() > kNamed) {
      const QString java = QStringLiteral("Java threads ");
      return worstNames.startsWith(java) ? worstNames.mid(java.size()) : worstNames;
    }
    QStringList named;
    for (uint32_t tid : tids) named << threadNameOf(rows, tid);
    const QString last = named.takeLast();
    return named.isEmpty() ? last
                           : named.join(QStringLiteral(", ")) + QStringLiteral(" and ") + last;
  };
  const TimeRange run{rows.startNs, rows.startNs + std::llround(rows.durationS * 1e9)};
  std::vector<Finding> found;
  findings_detail::runtimeFindingsOf(findings_detail::runtimeWaitsOf(runtime_, program), pts, names,
                                     run, &found);
  for (Finding &g : found)
    // value(): operator[] of a non-const object would add a null "lock" to
    // a GIL finding's evidence.
    if (g.kind == f->kind &&
        g.evidence.value(QLatin1String("lock")) == f->evidence.value(QLatin1String("lock"))) {
      *f = std::move(g);
      return true;
    }
  return false;
}

// The never_runs findings of the whole run, as neverRunsFindings makes them
// of a whole read: the run's program threads with their states from the
// rows (which hold the blocked time the merge carried over a segment's
// edge), their waits summed over every window. A thread no window found
// may be the run's; one a window found may not.
std::vector<Finding> StreamFindings::neverRunsOfRun(const ReportRows &rows) const {
  std::vector<Finding> out;
  const TimeRange run{rows.startNs, rows.startNs + std::llround(rows.durationS * 1e9)};
  auto name = [&rows](uint32_t tid) { return threadNameOf(rows, tid); };
  for (const findings_detail::ProgramThread &p : programOfRun(rows)) {
    const auto w = waiting_.find(p.tid);
    if (w == waiting_.end()) continue;  // no window's program thread
    Finding f;
    if (findings_detail::neverRunsFinding(
            p, [&w] { return w->second; }, sleepKnown_, name, run, &f) &&
        !aboutRuntimeMachinery(rows, f))
      out.push_back(std::move(f));
  }
  return out;
}

// user_threads_share_lwps and user_thread_handoff of the whole run, as
// userThreadFindings makes them of a whole read: of the rows' user threads
// (each one's states summed over every window) and of the rows of the LWPs
// they ran on, with the times they were put on an LWP summed over the
// windows.
static bool isUserThreads(FindingKind k) {
  return k == FindingKind::UserThreadsShareLwps || k == FindingKind::UserThreadHandoff;
}

std::vector<Finding> StreamFindings::userThreadsOfRun(const ReportRows &rows) const {
  findings_detail::UserPool p;
  std::set<uint32_t> lwps;
  for (const UserThreadRow &u : rows.users)
    if (u.states.onLwpNs + u.states.dispatchableNs > 0)
      findings_detail::addUser(&p, u.info.id, u.states, &lwps);
  p.lwps.assign(lwps.begin(), lwps.end());
  p.spans = userSpansBegun_;
  for (const ThreadRow &t : rows.threads) {
    if (!lwps.count(t.info.tid)) continue;
    for (size_t k = 0; k < t.states.ns.size(); k++) p.lwpStates.ns[k] += t.states.ns[k];
    p.lwpStates.lifetimeNs += t.states.lifetimeNs;
    p.lwpNs += t.states.lifetimeNs;
  }
  std::vector<Finding> out;
  const TimeRange run{rows.startNs, rows.startNs + std::llround(rows.durationS * 1e9)};
  findings_detail::userPoolFindings(p, cpus_, run, &out);
  return out;
}

std::vector<Finding> StreamFindings::findings(ReportRows *rows, const SessionModel &names) const {
  std::vector<Finding> out;
  for (const Finding &f : newest_)
    if (f.kind != FindingKind::DataLost) out.push_back(f);
  Finding lost;
  if (windows_ && dataLostOfRun(*rows, dataLost_, &lost)) out.push_back(std::move(lost));
  out.insert(out.end(), cycles_.begin(), cycles_.end());
  auto sec = [this](int64_t t) { return double(t - startNs_) / 1e9; };
  const double windowS = double(windowNs_) / 1e9;
  auto ofRunWords = [&](int held) {
    return QStringLiteral(" In %1 of %2 windows of %3 s; these figures are %4.")
        .arg(held)
        .arg(windows_)
        .arg(seconds(windowS, windowS),
             fromDetail_ ? QStringLiteral("the kept detail's") : QStringLiteral("the whole run's"));
  };
  // A finding of the run's figures that no window raised.
  auto addHeldInNoWindow = [&](Finding f) {
    QJsonObject w;
    w["held"] = 0;
    w["of"] = windows_;
    w["window_s"] = windowS;
    f.evidence["windows"] = w;
    f.message += ofRunWords(0);
    out.push_back(std::move(f));
  };
  std::set<uint32_t> barriersTold;
  for (const auto &kv : merged_) {
    const Merged &m = kv.second;
    Finding f = m.worst;
    if (f.kind == FindingKind::NeverRuns || isUserThreads(f.kind)) continue;  // the run's: below
    // A runtime's lock whose waits are a hidden lock's estimate (a Rust
    // std Mutex: internalLockFindings) keeps its worst window's figures.
    const bool serialising =
        f.kind == FindingKind::SerialisingObject && !hiddenLockOf(*rows, f);
    const bool ofRun = f.kind == FindingKind::InternalLock || serialising ||
                       f.kind == FindingKind::Oversubscribed ||
                       f.kind == FindingKind::Undersubscribed ||
                       f.kind == FindingKind::BarrierImbalance ||
                       f.kind == FindingKind::GilContention || f.kind == FindingKind::JavaLock;
    if (f.kind == FindingKind::BarrierImbalance && !barrierOfRun(*rows, &f)) continue;
    if ((f.kind == FindingKind::GilContention || f.kind == FindingKind::JavaLock) &&
        !runtimeOfRun(*rows, &f))
      continue;
    if (f.kind == FindingKind::Oversubscribed && !oversubscribedOfRun(*rows, &f)) continue;
    if (f.kind == FindingKind::Undersubscribed && !undersubscribedOfRun(*rows, &f)) continue;
    if (f.kind == FindingKind::InternalLock && !hiddenLockOfRun(*rows, &f)) continue;
    if (serialising && !serialisingOfRun(*rows, programTids_, names, &f)) continue;
    if (ofRun && aboutRuntimeMachinery(*rows, f)) continue;
    QJsonObject w;
    w["held"] = m.windows;
    w["of"] = windows_;
    w["window_s"] = double(windowNs_) / 1e9;
    w["worst_s"] = QJsonArray{sec(m.worstSpan.t0), sec(m.worstSpan.t1)};
    for (const auto &s : m.sums) w[s.first] = s.second;
    // The share over the windows it held in (the whole run's when it held
    // in all): waits over the lifetimes they are a share of, the rule's
    // (all the program's threads) when a finding gives both.
    for (const char *life : {"threads_lifetime_s", "waiters_lifetime_s", "writers_lifetime_s"})
      if (m.sums.count(life) && m.sums.count("wait_s") && m.sums.at(life) > 0) {
        w["share"] = m.sums.at("wait_s") / m.sums.at(life);
        break;
      }
    f.evidence["windows"] = w;
    if (f.kind == FindingKind::BarrierImbalance && !f.objects.empty())
      barriersTold.insert(f.objects.front());
    f.message +=
        ofRun ? ofRunWords(m.windows)
              : QStringLiteral(
                    " In %1 of %2 windows of %3 s; worst %4–%5 s, whose figures these are.")
                    .arg(m.windows)
                    .arg(windows_)
                    .arg(seconds(windowS, windowS), seconds(sec(m.worstSpan.t0), windowS),
                         seconds(sec(m.worstSpan.t1), windowS));
    f.t0 = ofRun ? rows->startNs : m.firstNs;
    f.t1 = ofRun ? rows->startNs + std::llround(rows->durationS * 1e9) : m.lastNs;
    out.push_back(std::move(f));
  }
  // A hidden lock under the rule's share in every window may be over it for
  // the run: judged on the run's estimate, as a whole read does.
  for (const auto &[id, under] : internalUnder_) {
    const uint32_t object = id;
    if (std::any_of(out.begin(), out.end(), [object](const Finding &f) {
          return f.kind == FindingKind::InternalLock && !f.objects.empty() &&
                 f.objects.front() == object;
        }))
      continue;
    Finding f = under;
    if (!hiddenLockOfRun(*rows, &f) || f.evidence["share"].toDouble() < finding::kInternalShare ||
        aboutRuntimeMachinery(*rows, f))
      continue;
    f.t0 = rows->startNs;
    f.t1 = rows->startNs + std::llround(rows->durationS * 1e9);
    addHeldInNoWindow(std::move(f));
  }
  // Rounds longer than a third of a window make no window's finding
  // (kBarrierMinRounds in each), yet may make the run's.
  for (const auto &kv : barriers_) {
    const auto s = std::find_if(rows->sync.begin(), rows->sync.end(),
                                [&kv](const SyncRow &r) { return r.info.id == kv.first; });
    Finding f;  // the object is known here: true means *f is its finding
    if (barriersTold.count(kv.first) || s == rows->sync.end() ||
        !barrierOfRun(*rows, kv.first, findings_detail::objectName(s->info), &f) ||
        aboutRuntimeMachinery(*rows, f))
      continue;
    addHeldInNoWindow(std::move(f));
  }
  // undersubscribed wants several threads on CPUs at once: it may hold
  // over the run and in no window (one thread at a time in each of 1 s
  // windows, 1.5 over the run). (oversubscribed's run inputs are not ready
  // for this: a starved swarm's read 631% where a whole read has none.)
  Finding under;
  if (std::none_of(out.begin(), out.end(),
                   [](const Finding &f) { return f.kind == FindingKind::Undersubscribed; }) &&
      undersubscribedOfRun(*rows, &under) && !aboutRuntimeMachinery(*rows, under))
    addHeldInNoWindow(std::move(under));
  std::vector<Finding> ofRun = neverRunsOfRun(*rows);
  for (Finding &f : userThreadsOfRun(*rows)) ofRun.push_back(std::move(f));
  for (Finding &f : ofRun) {
    const auto m = merged_.find(keyOf(f));
    const int held = m == merged_.end() ? 0 : m->second.windows;
    QJsonObject w;
    w["held"] = held;
    w["of"] = windows_;
    w["window_s"] = windowS;
    if (held) {
      w["worst_s"] = QJsonArray{sec(m->second.worstSpan.t0), sec(m->second.worstSpan.t1)};
      for (const auto &s : m->second.sums) w[s.first] = s.second;
    }
    f.evidence["windows"] = w;
    f.message += ofRunWords(held);
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding &a, const Finding &b) {
    if (a.severity != b.severity) return a.severity < b.severity;
    if (a.kind != b.kind || a.kind != FindingKind::JavaLock) return a.kind < b.kind;
    using findings_detail::javaLockRank;
    return javaLockRank(a.evidence["lock"].toString()) <
           javaLockRank(b.evidence["lock"].toString());
  });
  rows->info.notices << notice(double(windowNs_) / 1e9);
  return out;
}
