// The findings engine: naming helpers, ordering, and the lock rules
// (deadlock, serialising_object, internal_lock). docs/findings.md explains
// every threshold.
#include "findings.h"

#include <QFileInfo>
#include <QHash>
#include <QSet>
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "findings_util.h"
#include "pools.h"
#include "runtimes.h"
#include "runtimesync.h"
#include "sessionmodel.h"
#include "wirestate.h"

namespace tmon {

const char *severityKey(Severity s) {
  switch (s) {
    case Severity::High: return "high";
    case Severity::Medium: return "medium";
    case Severity::Low: return "low";
  }
  return "low";
}

namespace findings_detail {

namespace {

// The program's threads over the range computeFindings was asked for, kept
// for its call: most rules ask for them, and each answer walks every state
// interval of the range (a tenth of a streamed report's CPU). With them,
// the waiters' sums its caller had (asking again was 3% of the report's).
struct ProgramThreadsMemo {
  const SessionModel *model;
  TimeRange range;
  std::vector<ProgramThread> threads;
  const KnownWaiterNs *waiters;  // what the caller gave
  FindingInputs *inputs;         // to fill, when the caller asked
};
thread_local const ProgramThreadsMemo *memo = nullptr;

bool memoFor(const SessionModel &m, const TimeRange &r) {
  return memo && memo->model == &m && memo->range.t0 == r.t0 && memo->range.t1 == r.t1;
}

std::vector<ProgramThread> findProgramThreads(const SessionModel &m, const TimeRange &r) {
  std::vector<ProgramThread> all;
  std::vector<bool> housekeeping;
  for (int i = 0; i < m.threadCount(); i++) {
    const ThreadInfo &t = m.thread(i);
    if (t.probe || (m.info().probeTid && t.tid == m.info().probeTid)) continue;
    all.push_back(ProgramThread{i, t.tid, m.threadStates(i, r)});
    housekeeping.push_back(!runtimeHousekeeping(t).isEmpty());
  }
  return chooseProgramThreads(all, housekeeping);
}

}  // namespace

std::vector<ProgramThread> chooseProgramThreads(const std::vector<ProgramThread> &all,
                                                const std::vector<bool> &housekeeping) {
  std::vector<ProgramThread> out, runtime;
  int64_t programCpu = 0, runtimeCpu = 0;
  for (size_t k = 0; k < all.size(); k++) {
    const ProgramThread &p = all[k];
    if (p.st.lifetimeNs <= 0) continue;
    // A runtime's own threads (the JVM's JIT compilers, GC, ...) wait for
    // work by design: they are left out unless they used more CPU than the
    // program's threads (a GC that thrashes is the program's problem).
    (housekeeping[k] ? runtime : out).push_back(p);
    (housekeeping[k] ? runtimeCpu : programCpu) += p.st.ns[size_t(FinalState::OnCpu)];
  }
  if (runtimeCpu > programCpu) {
    out.insert(out.end(), runtime.begin(), runtime.end());
    std::sort(out.begin(), out.end(),
              [](const ProgramThread &a, const ProgramThread &b) { return a.index < b.index; });
  }
  return out;
}

std::vector<ProgramThread> programThreads(const SessionModel &m, const TimeRange &r) {
  if (memoFor(m, r)) return memo->threads;
  return findProgramThreads(m, r);
}

FindingInputs *inputsFor(const SessionModel &m, const TimeRange &r) {
  return memoFor(m, r) ? memo->inputs : nullptr;
}

std::set<uint32_t> programTids(const SessionModel &m, const TimeRange &r) {
  std::set<uint32_t> out;
  for (const ProgramThread &p : programThreads(m, r)) out.insert(p.tid);
  return out;
}

std::vector<std::pair<uint32_t, int64_t>> waiterNs(const SessionModel &m, uint32_t objectId,
                                                   const TimeRange &r) {
  if (memoFor(m, r)) {
    const auto it = memo->waiters->find(objectId);
    if (it != memo->waiters->end()) return *it->second;
  }
  return m.waiterNs(objectId, r);
}

QString threadName(const SessionModel &m, uint32_t tid) {
  int i = m.indexOfTid(tid);
  QString name = i >= 0 ? m.thread(i).name : QString();
  return name.isEmpty() ? QStringLiteral("thread %1").arg(tid)
                        : QStringLiteral("%1 (%2)").arg(name).arg(tid);
}

namespace {
// "a (1), b (2) and c (3)": every one named.
QString namedList(const SessionModel &m, const std::vector<uint32_t> &tids) {
  QStringList names;
  for (uint32_t t : tids) names << threadName(m, t);
  if (names.size() <= 1) return names.join(QString());
  QString last = names.takeLast();
  return names.join(QStringLiteral(", ")) + QStringLiteral(" and ") + last;
}

// Many threads by pool: the pools of at least Pool::kMinGrouped named with
// how many of their threads are meant, largest first; the rest counted.
QString pooledList(const SessionModel &m, const std::vector<uint32_t> &tids) {
  constexpr size_t kNamed = 6;  // of the threads in no pool
  const QHash<QString, int> poolSize = poolSizes(m);
  std::map<QString, std::vector<uint32_t>> byPool;
  std::vector<uint32_t> loose;
  for (uint32_t tid : tids) {
    const int i = m.indexOfTid(tid);
    const ThreadInfo *t = i >= 0 ? &m.thread(i) : nullptr;
    const QString key = t && !t->main && !t->probe ? poolKey(t->startRoutine, t->name) : QString();
    if (!key.isEmpty() && poolSize.value(key) >= Pool::kMinGrouped) byPool[key].push_back(tid);
    else loose.push_back(tid);
  }
  std::vector<std::pair<QString, std::vector<uint32_t>>> pools(byPool.begin(), byPool.end());
  std::stable_sort(pools.begin(), pools.end(),
                   [](const auto &a, const auto &b) { return a.second.size() > b.second.size(); });
  QStringList parts;
  for (const auto &[key, members] : pools) {
    Pool p;
    p.routine = key.section(QLatin1Char('\n'), 0, 0);
    p.pattern = key.section(QLatin1Char('\n'), 1);
    const int size = poolSize.value(key);
    parts << (int(members.size()) == size
                  ? QStringLiteral("all %1 %2 threads").arg(size).arg(p.label())
                  : QStringLiteral("%1 of the %2 %3 threads").arg(members.size()).arg(size).arg(p.label()));
  }
  if (loose.size() > kNamed + 1) {
    QStringList some;
    for (size_t k = 0; k < kNamed; ++k) some << threadName(m, loose[k]);
    parts << QStringLiteral("%1 other threads (%2 and %3 more)")
                 .arg(loose.size())
                 .arg(some.join(QStringLiteral(", ")))
                 .arg(loose.size() - kNamed);
  } else if (!loose.empty()) {
    parts << namedList(m, loose);
  }
  if (parts.size() <= 1) return parts.join(QString());
  QString last = parts.takeLast();
  return parts.join(QStringLiteral(", ")) + QStringLiteral(" and ") + last;
}
}  // namespace

QString threadList(const SessionModel &m, const std::vector<uint32_t> &tids) {
  // A sentence names a few, and many by pool; the evidence lists them all.
  constexpr size_t kNamed = 6;
  if (tids.size() > kNamed + 1) return pooledList(m, tids);
  return namedList(m, tids);
}


// C's stdio functions, which lock the FILE they are given: their remedy is
// not a reentrant variant.
static bool isStdioFunction(const QString &fn) {
  static const QSet<QString> names{
      QStringLiteral("printf"),  QStringLiteral("fprintf"), QStringLiteral("vprintf"),
      QStringLiteral("vfprintf"), QStringLiteral("puts"),   QStringLiteral("fputs"),
      QStringLiteral("putc"),    QStringLiteral("fputc"),   QStringLiteral("putchar"),
      QStringLiteral("fwrite"),  QStringLiteral("fflush"),  QStringLiteral("getc"),
      QStringLiteral("fgetc"),   QStringLiteral("getchar"), QStringLiteral("fgets"),
      QStringLiteral("fread"),   QStringLiteral("fscanf"),  QStringLiteral("scanf"),
      QStringLiteral("getline"), QStringLiteral("getdelim"), QStringLiteral("fseek"),
      QStringLiteral("ftell"),   QStringLiteral("perror")};
  return names.contains(fn);
}

QString objectName(const SessionModel &m, uint32_t objectId) {
  int i = m.indexOfSyncObject(objectId);
  return i < 0 ? QStringLiteral("object %1").arg(objectId) : objectName(m.syncObject(i));
}

QString objectName(const SyncObjectInfo &o) {
  QString module = QFileInfo(o.module).fileName();
  QString symbol = o.symbolText();
  QString addr = QStringLiteral("0x%1").arg(o.address, 0, 16);
  if (o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL) {
    // In no module's data (a FILE's lock is in the heap): where it lies.
    if (symbol.isEmpty() && module.startsWith(u'['))
      return QStringLiteral("a lock in %1 memory at %2").arg(module, addr);
    QString lib = module.isEmpty() ? QStringLiteral("a library") : module;
    return symbol.isEmpty() ? QStringLiteral("a lock inside %1 at %2").arg(lib, addr)
                            : QStringLiteral("a lock inside %1 (%2)").arg(lib, symbol);
  }
  QString kind = syncKindName(o.kind);
  // A runtime's own objects, by what they are to its users.
  if (isPythonGilObject(o))
    return QStringLiteral("CPython's GIL (%1 %2!%3)").arg(kind, module, symbol);
  if (o.kind == THREADMON__SYNC_KIND__KIND_SEM &&
      classifyStack(o.firstContentionStack) == StackWait::PythonLock)
    return QStringLiteral("a Python lock (threading.Lock or RLock; sem at %1)").arg(addr);
  if (!symbol.isEmpty() && !module.isEmpty() && !module.startsWith('['))
    return QStringLiteral("%1 %2!%3").arg(kind, module, symbol);
  // A heap or stack object: where the program made it, or first used it.
  const SyncObjectInfo::NamedBy by = o.namedBy();
  if (by == SyncObjectInfo::NamedBy::MadeAt || by == SyncObjectInfo::NamedBy::FirstUse)
    return QStringLiteral("%1 %2").arg(kind, o.name());
  if (!module.isEmpty()) return QStringLiteral("%1 at %2 (%3)").arg(kind, addr, module);
  return QStringLiteral("%1 at %2").arg(kind, addr);
}

QString programFunction(const SessionModel &m, uint32_t objectId, const TimeRange &r) {
  const std::vector<CallSite> sites = m.callSites(objectId, r);
  if (const CallSite *site = busiestUnwound(sites)) return m.programFrame(site->frames);
  int i = m.indexOfSyncObject(objectId);
  if (i < 0) return QString();
  return m.programFrame(m.syncObject(i).firstContentionStack);
}

double sessionSeconds(const SessionModel &m, int64_t t) { return double(t - m.startNs()) / 1e9; }

QString percent(double share) {
  // "0%" of something that happened reads as "never": small shares keep a decimal.
  double p = 100.0 * share;
  return QString::number(p, 'f', p > 0 && p < 9.95 ? 1 : 0) + '%';
}

QJsonArray tidArray(const std::vector<uint32_t> &tids) {
  QJsonArray a;
  for (uint32_t t : tids) a.append(qint64(t));
  return a;
}

Severity severityByShare(double share, double threshold) {
  return share >= finding::kHighFactor * threshold ? Severity::High : Severity::Medium;
}

namespace {

// What most of an object's contention waited in, by its call sites' names
// (weighted by samples for hidden locks, by wait time for the others).
StackWait objectWait(const SessionModel &m, const SyncObjectInfo &o, const TimeRange &r) {
  std::map<StackWait, double> weight;
  for (const CallSite &c : m.callSites(o.id, r))
    weight[classifyStack(c.frames)] +=
        o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL ? double(c.contentions) : double(c.waitNs) + 1;
  if (weight.empty()) return classifyStack(o.firstContentionStack);
  return std::max_element(weight.begin(), weight.end(),
                          [](const auto &a, const auto &b) { return a.second < b.second; })
      ->first;
}

// A CPython lock (threading.Lock, RLock) is a semaphore to the probe. It is
// used as a lock when the threads that release its waiters wait on it too
// (they took it); a Condition's waiter locks, released by the notifier,
// are not. At least half the wait time must be released that way.
// A semaphore used as a lock (one slot, as CPython's locks and many C
// programs use one): its waits are mostly ended by other threads that
// waited on it too, posting when they are done, as an unlock would.
// Producers posting to consumers never wait on it themselves.
bool semaphoreUsedAsLock(const SessionModel &m, const SyncObjectInfo &o, const TimeRange &r) {
  if (o.kind != THREADMON__SYNC_KIND__KIND_SEM) return false;
  std::vector<WaitRecord> ws = m.waits(o.id, r);
  std::set<uint32_t> waiters;
  for (const WaitRecord &w : ws) waiters.insert(w.waiter);
  int64_t all = 0, byWaiters = 0;
  for (const WaitRecord &w : ws) {
    all += w.end - w.start;
    if (w.releaser && w.releaser != w.waiter && waiters.count(w.releaser)) byWaiters += w.end - w.start;
  }
  return all > 0 && 2 * byWaiters >= all;
}

}  // namespace

QString deadlockLasted(double formedS, double lastedS, bool live) {
  return live ? QStringLiteral(" It formed at %1 s and still held at the end (%2 s later).")
                    .arg(formedS, 0, 'f', 3)
                    .arg(lastedS, 0, 'f', 3)
              : QStringLiteral(
                    " It formed at %1 s and lasted %2 s until one wait gave up "
                    "(e.g. a timed lock).")
                    .arg(formedS, 0, 'f', 3)
                    .arg(lastedS, 0, 'f', 3);
}

void deadlockFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out) {
  for (const Deadlock &d : m.deadlocks()) {
    int64_t end = d.live() ? m.latestNs() : d.resolvedNs;
    if (d.formedNs >= r.t1 || end < r.t0) continue;
    size_t n = d.threads.size();
    QStringList chain;
    QJsonArray sites;
    for (size_t i = 0; i < n; i++) {
      QString fn = programFunction(m, d.objects[i], TimeRange{m.startNs(), m.latestNs()});
      chain << QStringLiteral("%1 waits%2 for %3, held by %4")
                   .arg(threadName(m, d.threads[i]),
                        fn.isEmpty() ? QString() : QStringLiteral(" in %1").arg(fn),
                        objectName(m, d.objects[i]), threadName(m, d.threads[(i + 1) % n]));
      sites.append(fn);
    }
    Finding f;
    f.kind = FindingKind::Deadlock;
    f.severity = Severity::High;
    f.threads = d.threads;
    f.objects = d.objects;
    f.t0 = d.formedNs;
    f.t1 = end;
    double formed = sessionSeconds(m, d.formedNs), lasted = double(end - d.formedNs) / 1e9;
    f.message = QStringLiteral("Deadlock: %1. None of them can go on.").arg(chain.join("; "));
    f.message += deadlockLasted(formed, lasted, d.live());
    f.evidence["threads"] = tidArray(d.threads);
    QJsonArray objs;
    for (uint32_t o : d.objects) objs.append(qint64(o));
    f.evidence["objects"] = objs;
    f.evidence["call_sites"] = sites;
    f.evidence["formed_s"] = formed;
    f.evidence["detected_s"] = sessionSeconds(m, d.detectedNs);
    f.evidence["resolved_s"] = d.live() ? QJsonValue() : QJsonValue(sessionSeconds(m, d.resolvedNs));
    f.evidence["duration_s"] = lasted;
    f.evidence["resolved"] = !d.live();
    out->push_back(std::move(f));
  }
}

// Where the program took a lock its runtime made: past the runtime's own
// frames, in the program (an optimised build may have inlined it into the
// runtime's thread start: then nothing is named rather than the runtime).
static QString runtimeCaller(const SessionModel &m, const QStringList &frames) {
  QStringList own;
  const QString exe = QFileInfo(m.info().exe).fileName();
  for (const QString &fr : frames)
    if (!isRuntimeFrame(fr) && QFileInfo(fr.section('!', 0, 0)).fileName() == exe) own << fr;
  return own.isEmpty() ? QString() : m.programFrame(own);
}

// "a Rust std::sync::Mutex (0x5641c6222b40)": a runtime's lock by what it is.
static QString runtimeObjectText(const SyncObjectInfo &o) {
  return QStringLiteral("a %1 (%2)").arg(o.runtimeWhat, o.symbol.isEmpty()
                                                            ? QStringLiteral("0x%1").arg(o.address, 0, 16)
                                                            : o.symbol);
}

double ownShare(int64_t waitedNs, int64_t waitersLifeNs) {
  return waitersLifeNs > 0 ? double(waitedNs) / double(waitersLifeNs) : 0.0;
}

SentenceWaiters sentenceWaiters(const std::map<uint32_t, int64_t> &byWaiter,
                                const std::function<int64_t(uint32_t)> &lifeOf) {
  SentenceWaiters much, all;
  auto add = [](SentenceWaiters *w, uint32_t tid, int64_t ns, int64_t life) {
    w->tids.push_back(tid);
    w->waitedNs += ns;
    w->lifeNs += life;
  };
  for (const auto &[tid, ns] : byWaiter) {
    const int64_t life = lifeOf(tid);
    add(&all, tid, ns, life);
    if (ns * 100 >= life) add(&much, tid, ns, life);
  }
  return much.tids.empty() ? all : much;
}

QString serialisingMessage(const QString &waiters, double ownShare, double programShare,
                           const QString &object, const QString &takenIn) {
  return QStringLiteral("%1 spent %2 of their time (%3 of the program's thread time) waiting for "
                        "%4%5: only one of them can hold it at a time, so they run one after "
                        "another.")
      .arg(waiters, percent(ownShare), percent(programShare), object,
           takenIn.isEmpty() ? QString() : QStringLiteral(", taken in %1").arg(takenIn));
}

// A rwlock's waits, clipped to r and summed by waiter: those behind readers
// (no holder at their start: the probe names a holding writer, never its
// readers) and those behind a writer.
struct RwlockWaits {
  std::map<uint32_t, int64_t> behindReaders, behindWriter;
  int64_t longestBehindReaders = 0;
};

RwlockWaits rwlockWaits(const SessionModel &m, uint32_t objectId, const TimeRange &r) {
  RwlockWaits out;
  for (const WaitRecord &w : m.waits(objectId, r)) {
    const int64_t ns = std::min(w.end, r.t1) - std::max(w.start, r.t0);
    if (ns <= 0) continue;
    (w.holder ? out.behindWriter : out.behindReaders)[w.waiter] += ns;
    if (!w.holder) out.longestBehindReaders = std::max(out.longestBehindReaders, ns);
  }
  return out;
}

// A rwlock's writer held off by readers. glibc's rwlock prefers readers: a
// reader gets in while a writer waits, so readers whose reads keep
// overlapping hold a writer out for as long as they overlap (a C++ program
// with three readers of a std::shared_mutex and one writer ran 84 s instead
// of 1, the writer blocked 99% of it, and nothing was reported:
// serialising_object wants two waiters). A writer's wait behind readers is
// the one with no holder at its start (no writer held it).
void starvedWriterFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out) {
  std::unordered_map<uint32_t, int64_t> lives;
  for (const ProgramThread &p : programThreads(m, r)) lives[p.tid] = p.st.lifetimeNs;
  for (int oi = 0; oi < m.syncObjectCount(); oi++) {
    const SyncObjectInfo &o = m.syncObject(oi);
    if (o.kind != THREADMON__SYNC_KIND__KIND_RWLOCK) continue;
    const RwlockWaits waits = rwlockWaits(m, o.id, r);
    const std::map<uint32_t, int64_t> &byWaiter = waits.behindReaders;
    std::vector<uint32_t> starved;
    int64_t waited = 0, life = 0;
    for (const auto &[tid, ns] : byWaiter) {
      const auto found = lives.find(tid);  // program threads only
      const int64_t l = found == lives.end() ? 0 : found->second;
      if (l <= 0 || double(ns) < finding::kStarvedWriterShare * double(l)) continue;
      starved.push_back(tid);
      waited += ns;
      life += l;
    }
    if (starved.empty()) continue;
    const double share = double(waited) / double(life);
    Finding f;
    f.kind = FindingKind::StarvedWriter;
    f.severity = severityByShare(share, finding::kStarvedWriterShare);
    f.threads = starved;
    f.objects = {o.id};
    f.t0 = r.t0;
    f.t1 = r.t1;
    const QString fn = programFunction(m, o.id, r);
    f.message = QStringLiteral(
                    "%1 spent %2 of %3 time waiting to write-lock %4 while readers held it "
                    "(%5the longest wait %6 s): glibc's rwlock lets readers in while a writer "
                    "waits, so readers whose reads overlap keep a writer out. Make the lock "
                    "prefer writers (pthread_rwlockattr_setkind_np with "
                    "PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), or hold reads for less "
                    "time.")
                    .arg(threadList(m, starved), percent(share),
                         starved.size() == 1 ? QStringLiteral("its") : QStringLiteral("their"),
                         objectName(m, o.id),
                         fn.isEmpty() ? QString() : QStringLiteral("taken in %1; ").arg(fn),
                         QString::number(double(waits.longestBehindReaders) / 1e9, 'f', 3));
    QJsonObject waitS;
    for (uint32_t tid : starved) waitS[QString::number(tid)] = double(byWaiter.at(tid)) / 1e9;
    f.evidence["object"] = qint64(o.id);
    f.evidence["writers"] = tidArray(starved);
    f.evidence["wait_s"] = double(waited) / 1e9;
    f.evidence["wait_s_by_thread"] = waitS;
    f.evidence["writers_lifetime_s"] = double(life) / 1e9;
    f.evidence["share"] = share;
    f.evidence["longest_wait_s"] = double(waits.longestBehindReaders) / 1e9;
    f.evidence["call_site"] = fn;
    out->push_back(std::move(f));
  }
}

// A rwlock's waits behind a writer, by waiter: those behind readers are
// starved_writer's, and "only one of them can hold it at a time" is not
// true of readers.
std::vector<std::pair<uint32_t, int64_t>> behindWriterNs(const SessionModel &m, uint32_t objectId,
                                                         const TimeRange &r) {
  const std::map<uint32_t, int64_t> sums = rwlockWaits(m, objectId, r).behindWriter;
  return {sums.begin(), sums.end()};
}

void serialisingFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out) {
  std::vector<ProgramThread> pts = programThreads(m, r);
  // Hashed: looked up for every wait in the range.
  std::unordered_set<uint32_t> program;
  int64_t life = 0;
  for (const ProgramThread &p : pts) {
    program.insert(p.tid);
    life += p.st.lifetimeNs;
  }
  if (life <= 0) return;
  for (int oi = 0; oi < m.syncObjectCount(); oi++) {
    const SyncObjectInfo &o = m.syncObject(oi);
    // A futex a runtime made (waited on through syscall()) is what the
    // runtime made of it: a lock if a Mutex or RwLock, else never.
    const bool runtime = o.kind == THREADMON__SYNC_KIND__KIND_FUTEX && o.runtimeKind;
    if (runtime ? !isHeldKind(o.runtimeKind) : !isHeldKind(o.kind) && !semaphoreUsedAsLock(m, o, r))
      continue;
    // Summed where they lie (a copy of every wait, sorted, and a hash
    // lookup a wait were a twentieth of a streamed report).
    std::map<uint32_t, int64_t> byWaiter;
    int64_t blocked = 0;
    for (const auto &[tid, ns] : o.kind == THREADMON__SYNC_KIND__KIND_RWLOCK
                                     ? behindWriterNs(m, o.id, r)
                                     : waiterNs(m, o.id, r)) {
      if (!program.count(tid)) continue;
      byWaiter.emplace_hint(byWaiter.end(), tid, ns);
      blocked += ns;
    }
    double share = double(blocked) / double(life);
    if (share < finding::kSerialisingShare || int(byWaiter.size()) < finding::kSerialisingMinWaiters)
      continue;
    std::vector<uint32_t> waiters;
    for (const auto &b : byWaiter) waiters.push_back(b.first);
    // The rule weighs the program's time; the sentence says what the
    // waiters lost of their own.
    std::unordered_map<uint32_t, int64_t> lives;
    for (const ProgramThread &p : pts)
      if (byWaiter.count(p.tid)) lives[p.tid] = p.st.lifetimeNs;
    const SentenceWaiters named =
        sentenceWaiters(byWaiter, [&lives](uint32_t tid) { return lives[tid]; });
    std::vector<WaitPair> pairs = m.waitMatrix(r, o.id);
    QString fn = programFunction(m, o.id, r);
    if (runtime) {
      const std::vector<CallSite> sites = m.callSites(o.id, r);
      const CallSite *site = busiestUnwound(sites);
      fn = runtimeCaller(m, site ? site->frames : o.firstContentionStack);
    }
    Finding f;
    f.kind = FindingKind::SerialisingObject;
    f.severity = severityByShare(share, finding::kSerialisingShare);
    f.threads = waiters;
    f.objects = {o.id};
    f.t0 = r.t0;
    f.t1 = r.t1;
    const double own = ownShare(named.waitedNs, named.lifeNs);
    f.message = serialisingMessage(threadList(m, named.tids), own, share,
                                   runtime ? runtimeObjectText(o) : objectName(m, o.id), fn);
    if (!pairs.empty() && pairs.front().holder)
      f.message += QStringLiteral(" Most waiting: %1 for %2.")
                       .arg(threadName(m, pairs.front().waiter), threadName(m, pairs.front().holder));
    QJsonObject waitS;
    for (const auto &b : byWaiter) waitS[QString::number(b.first)] = double(b.second) / 1e9;
    f.evidence["object"] = qint64(o.id);
    if (runtime) f.evidence["runtime"] = o.runtimeWhat;
    f.evidence["waiters"] = tidArray(waiters);
    f.evidence["wait_s"] = double(blocked) / 1e9;
    f.evidence["wait_s_by_thread"] = waitS;
    f.evidence["threads_lifetime_s"] = double(life) / 1e9;
    f.evidence["share"] = share;
    f.evidence["waiters_lifetime_s"] = double(named.lifeNs) / 1e9;
    f.evidence["waiters_share"] = own;
    f.evidence["call_site"] = fn;
    out->push_back(std::move(f));
  }
}

void internalLockFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out) {
  const std::set<uint32_t> program = programTids(m, r);
  for (int oi = 0; oi < m.syncObjectCount(); oi++) {
    const SyncObjectInfo &o = m.syncObject(oi);
    if (o.kind != THREADMON__SYNC_KIND__KIND_INTERNAL) continue;
    // A runtime's semaphore, barrier or condition wait is the program's own
    // logic, like its pthread equivalents: no finding. Its mutex or rwlock
    // serialises like any lock the program wrote.
    const bool runtimeLock = isHeldKind(o.runtimeKind);
    if (o.runtimeKind && !runtimeLock) continue;
    // Other futexes that wait for an event (a JVM park, a Go M parked by its
    // scheduler) are no lock either: nobody holds them.
    if (!o.runtimeKind && isEventLikeWait(objectWait(m, o, r))) continue;
    std::vector<InternalWaiter> ws = m.internalWaiters(o.id, r);
    int64_t wait = 0, kernel = 0, life = 0;
    std::vector<uint32_t> tids;
    QJsonObject waitS;
    for (const InternalWaiter &w : ws) {
      int ti = m.indexOfTid(w.tid);
      if (ti < 0 || !program.count(w.tid)) continue;
      wait += int64_t(w.waitNs);
      kernel += int64_t(w.kernelNs);
      life += m.threadStates(ti, r).lifetimeNs;
      tids.push_back(w.tid);
      // The time lost to it, as the object's wait says everywhere.
      waitS[QString::number(w.tid)] = double(w.waitNs + w.kernelNs) / 1e9;
    }
    if (life <= 0) continue;
    double share = double(wait + kernel) / double(life);
    FindingInputs *in = runtimeLock ? nullptr : inputsFor(m, r);
    const bool under = share < (runtimeLock ? finding::kSerialisingShare : finding::kInternalShare);
    if (under && !in) continue;
    if (runtimeLock && int(tids.size()) < finding::kSerialisingMinWaiters) continue;
    std::sort(tids.begin(), tids.end());
    // The call site: the program's function, and the library function it
    // called (the frame just inside it), which is what takes the lock.
    const std::vector<CallSite> sites = m.callSites(o.id, r);
    const CallSite *site = busiestUnwound(sites);
    QStringList frames = site ? site->frames : o.firstContentionStack;
    QString fn = m.programFrame(frames), via;
    int at = -1;
    for (int k = 0; k < frames.size(); k++)
      if (m.programFrame(QStringList{frames[k]}) == fn) {
        at = k;
        break;
      }
    if (at > 0) via = m.programFrame(QStringList{frames[at - 1]}).section('!', 1);
    // A lock whose slow path is the program's own function (Rust's std
    // Mutex, a futex lock compiled into the executable) is the program's;
    // syscall() says nothing about which library call took it. So is a word
    // in the program's own data, and one on the heap that the program's own
    // code waits on (a raw system call: glibc's syscall() is seen at the
    // call); a library's heap lock is waited on by the library's code.
    const QString exe = QFileInfo(m.info().exe).fileName();
    const bool programWaits =
        !frames.isEmpty() && QFileInfo(frames.front().section('!', 0, 0)).fileName() == exe;
    const bool ownLock =
        (classifyStack(QStringList{fn + QStringLiteral("+0x0")}) == StackWait::Lock &&
         fn.section('!', 0, 0) == exe) ||
        QFileInfo(o.module).fileName() == exe ||
        (o.module == QLatin1String("[heap]") && programWaits);
    if (ownLock || via == QLatin1String("syscall")) via.clear();
    Finding f;
    if (runtimeLock) {
      fn = runtimeCaller(m, frames);
      f.kind = FindingKind::SerialisingObject;
      f.severity = severityByShare(share, finding::kSerialisingShare);
      f.message = QStringLiteral("%1 spent about %2 of their time waiting for %3%4: only "
                                 "one of them can hold it at a time, so they run one after another.")
                      .arg(threadList(m, tids), percent(share), runtimeObjectText(o),
                           fn.isEmpty() ? QString() : QStringLiteral(", taken in %1").arg(fn));
    } else {
      f.kind = FindingKind::InternalLock;
      f.severity = severityByShare(share, finding::kInternalShare);
    }
    f.threads = tids;
    f.objects = {o.id};
    f.t0 = r.t0;
    f.t1 = r.t1;
    if (runtimeLock) {
      f.evidence["object"] = qint64(o.id);
      f.evidence["runtime"] = o.runtimeWhat;
      f.evidence["waiters"] = tidArray(tids);
      f.evidence["wait_s"] = double(wait + kernel) / 1e9;
      f.evidence["wait_s_by_thread"] = waitS;
      f.evidence["threads_lifetime_s"] = double(life) / 1e9;
      f.evidence["share"] = share;
      f.evidence["call_site"] = fn;
      out->push_back(std::move(f));
      continue;
    }
    f.message = QStringLiteral("%1 lost about %2 of their time to %3")
                    .arg(threadList(m, tids), percent(share), objectName(m, o.id));
    if (!fn.isEmpty()) f.message += QStringLiteral(", reached from %1").arg(fn);
    if (!via.isEmpty()) f.message += QStringLiteral(" via %1()").arg(via);
    f.message += QStringLiteral(": %1 asleep waiting for it, %2 in system calls for it.")
                     .arg(percent(double(wait) / double(life)), percent(double(kernel) / double(life)));
    if (ownLock) {
      f.message += QStringLiteral(
          " It is a lock of the program's own code (or its language's "
          "standard library) that threadmon sees only by sampling its "
          "futex (raw system calls: glibc's syscall() it sees at the "
          "call): these threads take turns at it.");
    } else {
      f.message += QStringLiteral(" The program never wrote this lock: the library takes it for "
                                  "shared state, so these threads take turns.");
    }
    if (isStdioFunction(via))
      f.message += QStringLiteral(" %1() locks its FILE: threads writing through a FILE of their "
                                  "own, or handing their output to one thread, do not wait for "
                                  "each other.")
                       .arg(via);
    else if (!via.isEmpty())
      f.message += QStringLiteral(" A variant that keeps its state per thread (such as %1_r(), "
                                  "if the library has one) removes the wait.")
                       .arg(via);
    f.evidence["object"] = qint64(o.id);
    f.evidence["module"] = o.module;
    f.evidence["symbol"] = o.symbol;
    f.evidence["waiters"] = tidArray(tids);
    f.evidence["wait_s"] = double(wait + kernel) / 1e9;
    f.evidence["asleep_s"] = double(wait) / 1e9;
    f.evidence["kernel_s"] = double(kernel) / 1e9;
    f.evidence["wait_s_by_thread"] = waitS;
    f.evidence["waiters_lifetime_s"] = double(life) / 1e9;
    f.evidence["share"] = share;
    f.evidence["call_site"] = QJsonArray::fromStringList(frames);
    f.evidence["program_function"] = fn;
    f.evidence["library_function"] = via;
    f.evidence["own_lock"] = ownLock;
    if (under)
      in->internalUnder.push_back(std::move(f));
    else
      out->push_back(std::move(f));
  }
}

}  // namespace findings_detail

namespace findings_detail {

// The probe drops and counts rather than block the program: when it did,
// say so before any number built on what was lost.
// The probe's thread counts as starved from this share of its time waiting
// for a CPU.
constexpr double kProbeStarvedShare = 0.2;

int64_t foldedIn(const std::vector<FoldPoint> &folds, const TimeRange &r) {
  int64_t before = 0, through = 0;
  for (const FoldPoint &p : folds) {
    if (p.t < r.t0) before = aliveNs(p.ns);
    if (p.t <= r.t1) through = aliveNs(p.ns);
  }
  return std::max<int64_t>(0, through - before);
}

DataLostInputs dataLostInputs(const SessionModel &m, const TimeRange &r) {
  DataLostInputs in;
  const SessionInfo &info = m.info();
  in.eventsDropped = info.eventsDropped;
  in.eventsFolded = info.eventsFolded;
  in.switchesLost = info.switchesLost;
  in.switchesReceived = info.switchesReceived;
  in.framesDropped = info.framesDropped;
  in.ended = info.ended;
  in.goodbyeSeen = info.goodbyeSeen;
  in.r = r;
  for (int i = 0; i < m.threadCount(); i++) {
    const std::vector<int64_t> &g = m.thread(i).eventGaps;
    if (!std::any_of(g.begin(), g.end(), [&r](int64_t t) { return t >= r.t0 && t < r.t1; }))
      continue;
    in.gapped.push_back(m.thread(i).tid);
    in.foldedNs += foldedIn(m.thread(i).folds, r);
    in.gappedLifeNs += m.threadStates(i, r).lifetimeNs;
  }
  if (!in.gapped.empty()) in.gappedList = threadList(m, in.gapped);
  // How much of the window the probe's own thread spent waiting for a CPU,
  // from the kernel's run-queue counter: its switch records cannot show the
  // wait after its timer woke it (that reads as sleep).
  int probe = m.indexOfTid(info.probeTid);
  if (probe >= 0) {
    StateTimes st = m.threadStates(probe, r);
    if (st.lifetimeNs > 0)
      in.probeRunnable = std::min(1.0, std::max(double(st.ns[size_t(FinalState::Runnable)]),
                                                double(m.lwpDelta(probe, r).runqueueNs)) /
                                           double(st.lifetimeNs));
  }
  // A flight recorder's snapshot (a trigger's, SIGUSR1's) is written while
  // the program runs on, and says so: it is not cut short.
  in.snapshot = std::any_of(info.notices.begin(), info.notices.end(), [](const QString &n) {
    return n.contains(QLatin1String("without the program's Goodbye"));
  });
  return in;
}

bool dataLostFinding(const DataLostInputs &in, Finding *f) {
  // The input ended without the program's Goodbye while the probe was kept
  // off the CPUs: what it had not written when the program ended is gone,
  // and no counter can say how much.
  const bool cutShort =
      in.ended && !in.goodbyeSeen && !in.snapshot && in.probeRunnable >= kProbeStarvedShare;
  if (in.eventsDropped == 0 && in.eventsFolded == 0 && in.switchesLost == 0 &&
      in.framesDropped == 0 && !cutShort)
    return false;
  const std::vector<uint32_t> &gapped = in.gapped;
  QStringList lost;
  // Older probes sent no UNKNOWN transitions: only the count says it.
  if (in.eventsDropped)
    lost << (gapped.empty() ? QStringLiteral("%1 state changes").arg(in.eventsDropped)
                            : QStringLiteral("%1 state changes of %2")
                                  .arg(in.eventsDropped)
                                  .arg(in.gappedList));
  // Folded (rings full): totals per state kept, the order within the gaps not.
  if (in.eventsFolded)
    lost << (gapped.empty() ? QStringLiteral("the order of %1 state changes").arg(in.eventsFolded)
                            : QStringLiteral("the order of %1 state changes of %2")
                                  .arg(in.eventsFolded)
                                  .arg(in.gappedList)) +
                QStringLiteral(" (folded into counters: their totals per state are exact)");
  if (in.switchesLost) lost << QStringLiteral("%1 context-switch records").arg(in.switchesLost);
  if (in.framesDropped) lost << QStringLiteral("%1 frames to the display").arg(in.framesDropped);
  if (cutShort) lost << QStringLiteral("the end of the run (the capture stops without the program's exit)");
  if (lost.isEmpty()) return false;
  f->kind = FindingKind::DataLost;
  // A few switch records lost in a burst blur a few switches; lost state
  // changes or frames, or many records, change what the views say.
  uint64_t records = in.switchesLost + in.switchesReceived;
  bool minor = in.eventsDropped == 0 && in.framesDropped == 0 && !cutShort &&
               double(in.switchesLost) < finding::kDataLostMinorShare * double(records);
  // Folded changes keep every total; what a gap hides is who held and woke,
  // which matters when the gaps hold a share of the threads' time (a
  // memcached worker's 271 folded changes held 12 ms of its 23 s).
  const bool foldsMatter = in.eventsFolded && !(in.gappedLifeNs > 0 &&
                                                double(in.foldedNs) < finding::kDataLostMinorShare *
                                                                          double(in.gappedLifeNs));
  f->severity = !minor ? Severity::High : foldsMatter ? Severity::Medium : Severity::Low;
  f->threads = gapped;
  f->t0 = in.r.t0;
  f->t1 = in.r.t1;
  QString what = lost.takeLast();
  if (!lost.isEmpty()) what = lost.join(QStringLiteral(", ")) + QStringLiteral(", and ") + what;
  f->message = QStringLiteral("threadmon lost %1, rather than slow the program down: ").arg(what);
  f->message += in.probeRunnable >= kProbeStarvedShare
      ? QStringLiteral("its own thread waited for a CPU %1 of the time (the program's threads kept "
                       "the CPUs busy, or ran at a higher priority). ")
            .arg(percent(in.probeRunnable))
      : QStringLiteral("the program changed state faster than it could record. ");
  f->message += QStringLiteral("Where data is missing the states shown are estimates from the "
                               "kernel's counters; lock waits may be missing.");
  f->evidence["events_dropped"] = qint64(in.eventsDropped);
  f->evidence["events_folded"] = qint64(in.eventsFolded);
  if (in.eventsFolded && in.gappedLifeNs > 0)
    f->evidence["folded_share"] = double(in.foldedNs) / double(in.gappedLifeNs);
  f->evidence["switch_records_lost"] = qint64(in.switchesLost);
  f->evidence["frames_dropped"] = qint64(in.framesDropped);
  f->evidence["threads_with_gaps"] = tidArray(gapped);
  f->evidence["probe_runnable_share"] = in.probeRunnable;
  f->evidence["ends_without_exit"] = cutShort;
  return true;
}

void dataLostFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out) {
  Finding f;
  if (dataLostFinding(dataLostInputs(m, r), &f)) out->push_back(std::move(f));
}

}  // namespace findings_detail

namespace {

// The finding's objects were waited on by a runtime's own threads only, or
// the threads it is about are all the runtime's.
bool aboutRuntimeMachinery(const SessionModel &m, const TimeRange &r, const Finding &f) {
  if (findingInfo(f.kind).runtime == FindingRuntime::Keep) return false;
  bool objects = !f.objects.empty(), threads = !f.threads.empty();
  for (uint32_t id : f.objects) {
    const int k = m.indexOfSyncObject(id);
    objects = objects && k >= 0 && m.housekeepingObject(k, r);
  }
  for (uint32_t tid : f.threads) {
    const int i = m.indexOfTid(tid);
    threads = threads && i >= 0 && m.housekeepingThread(i);
  }
  return objects || threads;
}

}  // namespace

std::vector<Finding> computeFindings(const SessionModel &m, const TimeRange &r) {
  return computeFindings(m, r, KnownWaiterNs());
}

std::vector<Finding> computeFindings(const SessionModel &m, const TimeRange &asked,
                                     const KnownWaiterNs &known, FindingInputs *inputs) {
  using namespace findings_detail;
  std::vector<Finding> out;
  // A flight recorder keeps detail for its last window only: before it a
  // thread's states are estimates from the counters, its waits read as
  // sleep (mutex_hold's waiters "49% of their time" waiting, in truth 98%).
  // Findings are about the detail.
  TimeRange r = asked;
  const int64_t detailFrom = m.info().flightRecorder ? m.info().flightDetailFromNs : 0;
  if (detailFrom > r.t0) r.t0 = std::min(detailFrom, r.t1);
  if (r.length() <= 0) return out;
  const ProgramThreadsMemo kept{&m, r, findProgramThreads(m, r), &known, inputs};
  struct Keep {
    explicit Keep(const ProgramThreadsMemo *k) { memo = k; }
    ~Keep() { memo = nullptr; }
  } keep(&kept);
  dataLostFindings(m, r, &out);
  deadlockFindings(m, r, &out);
  serialisingFindings(m, r, &out);
  starvedWriterFindings(m, r, &out);
  internalLockFindings(m, r, &out);
  runtimeFindings(m, r, &out);
  schedulingFindings(m, r, &out);
  // A round's last arrival never blocks: only wrappers see its arrival.
  if (m.info().acquisitionsKnown()) barrierFindings(m, r, &out);
  neverRunsFindings(m, r, &out);
  userThreadFindings(m, r, &out);
  // No finding is about a runtime's own machinery: its threads join the
  // rules when they use more CPU than the program's (a GC that thrashes),
  // and then jshell's JIT compile queue, broadcast to its compiler threads,
  // read as a HIGH barrier_imbalance. Only the program-wide rules may count
  // them.
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const Finding &f) { return aboutRuntimeMachinery(m, r, f); }),
            out.end());
  std::stable_sort(out.begin(), out.end(), [](const Finding &a, const Finding &b) {
    return a.severity != b.severity ? a.severity < b.severity : a.kind < b.kind;
  });
  return out;
}

}  // namespace tmon
