// Findings about language runtimes' own locks (docs/findings.md): threads
// waiting for CPython's GIL (gil_contention), and Java threads blocked on
// monitors or parked by java.util.concurrent (java_lock). Both are invisible
// to the lock rules: the GIL is a cond, and the JVM parks each thread on its
// own cond, so no one object has the waiters of the Java lock.
#include <algorithm>
#include <map>

#include "findings_util.h"
#include "runtimes.h"

namespace tmon {
namespace findings_detail {

namespace {

// The kinds of runtime lock the rules below are about.
bool isRuntimeLock(StackWait k) {
  return k == StackWait::PythonGil || k == StackWait::JavaMonitor || k == StackWait::JavaPark;
}

// A wait in a runtime's own machinery: its object's waits are shared out
// among these kinds by the run's call sites.
bool isRuntimeWait(StackWait k) {
  return isRuntimeLock(k) || k == StackWait::JavaWait || k == StackWait::PythonLock;
}

// Waits of program threads on objects, split by what the objects' call
// sites waited in. An object's wait records are shared out by its call
// sites' wait time per kind (the JVM's park conds are per thread: exact),
// and summed by waiter and releaser: all that the rules below read. in:
// the objects' inputs of a window, to be summed over windows.
struct KindWait {
  uint32_t waiter, releaser;
  int64_t ns;
};

std::map<int, RuntimeWaits> waitsByKind(const SessionModel &m, const TimeRange &r,
                                        const std::set<uint32_t> &program, FindingInputs *in) {
  std::map<int, RuntimeWaits> out;
  // A window's sites may have waited nothing in it (a wait's site counts at
  // its end), or only in a JVM's Object.wait before its monitor's enter was
  // seen, and its program's threads be not the run's: in a runtime's
  // session the run's decide, of every object's waits by every thread.
  bool runtimeSession = false;
  for (int t = 0; in && !runtimeSession && t < m.threadCount(); t++)
    runtimeSession = !runtimeHousekeeping(m.thread(t)).isEmpty();
  for (int oi = 0; in && !runtimeSession && oi < m.syncObjectCount(); oi++)
    runtimeSession = isPythonGilObject(m.syncObject(oi));
  for (int oi = 0; oi < m.syncObjectCount(); oi++) {
    const SyncObjectInfo &o = m.syncObject(oi);
    if (o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL) continue;
    std::map<StackWait, double> share;
    double all = 0;
    for (const CallSite &c : m.callSites(o.id, r)) {
      share[classifyStack(c.frames)] += double(c.waitNs);
      all += double(c.waitNs);
    }
    if (isPythonGilObject(o)) {
      // Stripped pythons (Debian's) show no take_gil frame: the object says it.
      share.clear();
      share[StackWait::PythonGil] = all = 1;
    }
    const bool runtimeSite =
        runtimeSession || std::any_of(share.begin(), share.end(),
                                      [](const auto &s) { return isRuntimeWait(s.first); });
    if (all <= 0 && !(in && runtimeSite)) continue;
    std::vector<WaitRecord> ws;
    for (const WaitRecord &w : m.waits(o.id, r)) {
      if (in && runtimeSite)
        in->runtimeObjects[o.id].byEdge[{w.waiter, w.releaser}] += w.end - w.start;
      if (program.count(w.waiter)) ws.push_back(w);
    }
    if (in && runtimeSite)
      for (const auto &s : share) in->runtimeObjects[o.id].siteWaitNs[int(s.first)] += s.second;
    if (all <= 0 || ws.empty()) continue;
    for (const auto &s : share) {
      if (!isRuntimeLock(s.first) || s.second <= 0) continue;
      RuntimeWaits &k = out[int(s.first)];
      for (const WaitRecord &w : ws)
        k.byEdge[{w.waiter, w.releaser}] += int64_t(double(w.end - w.start) * s.second / all);
      k.objects.push_back(o.id);
    }
  }
  return out;
}

std::vector<KindWait> kindWaits(const std::map<int, RuntimeWaits> &waits, StackWait kind) {
  std::vector<KindWait> out;
  const auto it = waits.find(int(kind));
  if (it != waits.end())
    for (const auto &e : it->second.byEdge)
      out.push_back({e.first.first, e.first.second, e.second});
  return out;
}

std::vector<uint32_t> kindObjects(const std::map<int, RuntimeWaits> &waits, StackWait kind) {
  const auto it = waits.find(int(kind));
  return it == waits.end() ? std::vector<uint32_t>() : it->second.objects;
}

// Threads on a cycle of the undirected graph "woke the other" (each edge
// a wake-up between two different threads). A lock's holders hand it round
// among themselves, so three or more contenders form cycles; a producer and
// its consumers (an executor's submitter waiting on futures and its idle
// pool threads) form a star, whatever wakes whom.
std::set<uint32_t> onWakeCycles(const std::vector<KindWait> &ws) {
  std::map<uint32_t, std::set<uint32_t>> adj;
  for (const KindWait &w : ws)
    if (w.releaser && w.releaser != w.waiter) {
      adj[w.waiter].insert(w.releaser);
      adj[w.releaser].insert(w.waiter);
    }
  std::set<uint32_t> out;
  for (const auto &v : adj)
    for (uint32_t u : v.second) {
      if (out.count(v.first)) break;
      // Is v reachable from u without the edge u-v?
      std::set<uint32_t> seen{u};
      std::vector<uint32_t> todo{u};
      bool found = false;
      while (!todo.empty() && !found) {
        uint32_t x = todo.back();
        todo.pop_back();
        for (uint32_t y : adj[x]) {
          if (x == u && y == v.first) continue;
          if (y == v.first) {
            found = true;
            break;
          }
          if (seen.insert(y).second) todo.push_back(y);
        }
      }
      if (found) out.insert(v.first);
    }
  return out;
}

// The waits along edges that carry a real share of their threads' waits
// (finding::kJavaParkEdgeShare): a rare meeting of two threads that wait
// for something else (an executor's workers on its queue's lock, once in a
// run) is not a hand-off round a lock, and alone it closed a cycle.
std::vector<KindWait> strongEdges(const std::vector<KindWait> &ws) {
  auto key = [](const KindWait &w) {
    return std::make_pair(std::min(w.waiter, w.releaser), std::max(w.waiter, w.releaser));
  };
  std::map<std::pair<uint32_t, uint32_t>, int64_t> edge;
  std::map<uint32_t, int64_t> total;
  for (const KindWait &w : ws) {
    edge[key(w)] += w.ns;
    total[w.waiter] += w.ns;
  }
  std::vector<KindWait> out;
  for (const KindWait &w : ws) {
    const auto k = key(w);
    const int64_t smaller = std::min(total[k.first], total[k.second]);
    if (double(edge[k]) >= finding::kJavaParkEdgeShare * double(smaller)) out.push_back(w);
  }
  return out;
}

// Wait per thread. amongPeers: only the waits of threads on a wake-up
// cycle, woken by another waiter along a strong edge (see onWakeCycles).
std::map<uint32_t, int64_t> perThread(const std::vector<KindWait> &ws, bool amongPeers) {
  std::set<uint32_t> waiters;
  for (const KindWait &w : ws) waiters.insert(w.waiter);
  std::vector<KindWait> peers;
  for (const KindWait &w : ws)
    if (w.releaser != w.waiter && waiters.count(w.releaser)) peers.push_back(w);
  if (amongPeers) peers = strongEdges(peers);
  const std::set<uint32_t> cyclic = amongPeers ? onWakeCycles(peers) : std::set<uint32_t>{};
  std::map<uint32_t, int64_t> out;
  for (const KindWait &w : amongPeers ? peers : ws)
    if (!amongPeers || cyclic.count(w.waiter)) out[w.waiter] += w.ns;
  return out;
}

struct Tally {
  std::vector<uint32_t> tids;
  int64_t wait = 0, life = 0;
  QJsonObject waitS;
  double share() const { return life > 0 ? double(wait) / double(life) : 0; }
};

// The threads of `ns` that waited a share of their lives worth naming,
// with their lifetimes.
Tally tally(const std::map<uint32_t, int64_t> &ns, const std::vector<ProgramThread> &pts) {
  Tally t;
  for (const ProgramThread &p : pts) {
    auto it = ns.find(p.tid);
    if (it == ns.end() || it->second <= 0 ||
        double(it->second) < finding::kRuntimeWaiterMinShare * double(p.st.lifetimeNs))
      continue;
    t.tids.push_back(p.tid);
    t.wait += it->second;
    t.life += p.st.lifetimeNs;
    t.waitS[QString::number(p.tid)] = double(it->second) / 1e9;
  }
  return t;
}

QJsonArray idArray(const std::vector<uint32_t> &ids) {
  QJsonArray a;
  for (uint32_t id : ids) a.append(qint64(id));
  return a;
}

// java_lock's kinds of lock, in the order of its findings.
struct JavaKind {
  StackWait kind;
  const char *key;
  bool amongWaiters;
  const char *what;
};
const JavaKind kJavaKinds[] = {
    {StackWait::JavaMonitor, "synchronized", false,
     "blocked entering synchronized blocks or methods (the JVM's monitor enter, "
     "ObjectMonitor::enter in libjvm.so): only one thread can hold a monitor at a time, so "
     "they run one after another. Hold monitors for less time (move work out of the "
     "synchronized block), split the shared state, or use java.util.concurrent structures."},
    {StackWait::JavaPark, "park", true,
     "parked by java.util.concurrent, woken by each other (Unsafe_Park in libjvm.so: a "
     "ReentrantLock, ReadWriteLock or another synchronizer they hand to each other): they "
     "take turns at it. Hold the lock for less time or split the shared state."},
};

}  // namespace

void runtimeFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out) {
  const std::vector<ProgramThread> pts = programThreads(m, r);
  std::set<uint32_t> program;
  for (const ProgramThread &p : pts) program.insert(p.tid);
  runtimeFindingsOf(
      waitsByKind(m, r, program, inputsFor(m, r)), pts,
      [&m](const std::vector<uint32_t> &tids) { return threadList(m, tids); }, r, out);
}

std::map<int, RuntimeWaits> runtimeWaitsOf(
    const std::map<uint32_t, FindingInputs::RuntimeObject> &objects,
    const std::set<uint32_t> &program) {
  std::map<int, RuntimeWaits> out;
  for (const auto &[id, o] : objects) {
    double all = 0;
    for (const auto &s : o.siteWaitNs) all += s.second;
    const bool waited = std::any_of(o.byEdge.begin(), o.byEdge.end(),
                                    [&](const auto &e) { return program.count(e.first.first); });
    if (all <= 0 || !waited) continue;
    for (const auto &s : o.siteWaitNs) {
      if (!isRuntimeLock(StackWait(s.first)) || s.second <= 0) continue;
      RuntimeWaits &k = out[s.first];
      for (const auto &[edge, ns] : o.byEdge)
        if (program.count(edge.first)) k.byEdge[edge] += int64_t(double(ns) * s.second / all);
      k.objects.push_back(id);
    }
  }
  return out;
}

void runtimeFindingsOf(const std::map<int, RuntimeWaits> &w, const std::vector<ProgramThread> &pts,
                       const std::function<QString(const std::vector<uint32_t> &)> &names,
                       const TimeRange &r, std::vector<Finding> *out) {
  // CPython's GIL: one waiting thread is enough (the main thread may be the
  // one holding it).
  Tally gil = tally(perThread(kindWaits(w, StackWait::PythonGil), false), pts);
  if (!gil.tids.empty() && gil.share() >= finding::kGilShare) {
    Finding f;
    f.kind = FindingKind::GilContention;
    f.severity = severityByShare(gil.share(), finding::kGilShare);
    f.threads = gil.tids;
    f.objects = kindObjects(w, StackWait::PythonGil);
    f.t0 = r.t0;
    f.t1 = r.t1;
    f.message = QStringLiteral(
                    "%1 spent %2 of their time waiting for CPython's global interpreter "
                    "lock (the GIL, taken in take_gil): only one thread runs Python code "
                    "at a time, so these threads take turns instead of running in "
                    "parallel. For CPU-bound work use processes (multiprocessing, "
                    "concurrent.futures.ProcessPoolExecutor) or code that releases the "
                    "GIL while it works (NumPy, I/O, C extensions).")
                    .arg(names(gil.tids), percent(gil.share()));
    f.evidence["waiters"] = tidArray(gil.tids);
    f.evidence["objects"] = idArray(f.objects);
    f.evidence["wait_s"] = double(gil.wait) / 1e9;
    f.evidence["wait_s_by_thread"] = gil.waitS;
    f.evidence["waiters_lifetime_s"] = double(gil.life) / 1e9;
    f.evidence["share"] = gil.share();
    out->push_back(std::move(f));
  }

  // Java: the JVM parks each thread on its own cond, whatever the lock.
  for (const JavaKind &k : kJavaKinds) {
    Tally t = tally(perThread(kindWaits(w, k.kind), k.amongWaiters), pts);
    if (int(t.tids.size()) < finding::kJavaLockMinThreads || t.share() < finding::kJavaLockShare)
      continue;
    Finding f;
    f.kind = FindingKind::JavaLock;
    f.severity = severityByShare(t.share(), finding::kJavaLockShare);
    f.threads = t.tids;
    f.objects = kindObjects(w, k.kind);
    f.t0 = r.t0;
    f.t1 = r.t1;
    f.message = QStringLiteral("Java threads %1 spent %2 of their time %3")
                    .arg(names(t.tids), percent(t.share()), QString::fromLatin1(k.what));
    f.evidence["lock"] = QString::fromLatin1(k.key);
    f.evidence["waiters"] = tidArray(t.tids);
    f.evidence["objects"] = idArray(f.objects);
    f.evidence["wait_s"] = double(t.wait) / 1e9;
    f.evidence["wait_s_by_thread"] = t.waitS;
    f.evidence["waiters_lifetime_s"] = double(t.life) / 1e9;
    f.evidence["share"] = t.share();
    out->push_back(std::move(f));
  }
}

int javaLockRank(const QString &lock) {
  int i = 0;
  for (const JavaKind &k : kJavaKinds) {
    if (lock == QLatin1String(k.key)) return i;
    i++;
  }
  return i;
}

}  // namespace findings_detail
}  // namespace tmon
