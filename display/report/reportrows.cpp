#include "reportrows.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "modelinvariants.h"
#include "runtimes.h"
#include "sessionmodel.h"
#include "wirestate.h"

using namespace tmon;

bool isJvmSession(const SessionModel &m) {
  for (int t = 0; t < m.threadCount(); t++)
    if (!runtimeHousekeeping(m.thread(t)).isEmpty()) return true;
  return false;
}

bool isGoSession(const SessionModel &m) {
  for (int k = 0; k < m.syncObjectCount(); k++) {
    const SyncObjectInfo &o = m.syncObject(k);
    if (o.symbol.startsWith(QLatin1String("runtime.")) ||
        o.callSite().contains(QLatin1String("!runtime.futex")))
      return true;
  }
  return false;
}

void sortSyncRows(std::vector<SyncRow> *rows) {
  std::stable_sort(rows->begin(), rows->end(), [](const SyncRow &x, const SyncRow &y) {
    if (x.housekeeping != y.housekeeping) return y.housekeeping;
    if (x.delta.waitNs != y.delta.waitNs) return x.delta.waitNs > y.delta.waitNs;
    return x.delta.contentions > y.delta.contentions;
  });
}

std::vector<std::pair<uint32_t, int64_t>> waitersByTime(
    const std::vector<std::pair<uint32_t, int64_t>> &sums) {
  // Hashed, then ordered by tid once (one std::map lookup per wait was 4%
  // of a streamed report).
  std::unordered_map<uint32_t, int64_t> byTid;
  for (const auto &s : sums) byTid[s.first] += s.second;
  std::vector<std::pair<uint32_t, int64_t>> v(byTid.begin(), byTid.end());
  std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return v;
}

ReportRows collectRows(const SessionModel &m) {
  ReportRows rows;
  const TimeRange whole = m.resolve(Window::wholeRun());
  rows.info = m.info();
  rows.startNs = m.startNs();
  rows.durationS = m.durationSeconds();
  rows.jvm = isJvmSession(m);
  rows.go = isGoSession(m);
  for (int i = 0; i < m.threadCount(); i++) {
    ThreadRow t;
    t.info = m.thread(i);
    t.probe = t.info.probe || (m.info().probeTid && t.info.tid == m.info().probeTid);
    t.states = m.threadStatesAttributed(i, whole);
    t.lwp = m.lwpDelta(i, whole);
    t.cpuNs = m.threadCpuTimes(i, whole);
    if (!t.info.folds.empty()) {
      t.folded = true;
      t.foldedNs = double(aliveNs(t.info.folds.back().ns));
    }
    rows.threads.push_back(std::move(t));
  }
  for (int i = 0; i < m.userThreadCount(); i++)
    rows.users.push_back(UserThreadRow{m.userThread(i), m.userThreadStates(i, whole)});
  for (int c = 0; c < m.cpuCount(); c++) rows.cpus.push_back(m.cpuDelta(c, whole));
  for (int i : m.syncObjectsByWait(whole)) {
    SyncRow s;
    s.info = m.syncObject(i);
    s.delta = m.syncDelta(i, whole);
    s.housekeeping = m.housekeepingObject(i, whole);
    s.sites = m.callSites(s.info.id, whole);
    if (s.info.kind == THREADMON__SYNC_KIND__KIND_INTERNAL) {
      s.internal = m.internalWaiters(s.info.id, whole);
      s.callSite = m.objectCallSite(i, whole);
    } else {
      std::vector<std::pair<uint32_t, int64_t>> sums;
      for (const WaitRecord &w : m.waits(s.info.id, whole))
        sums.emplace_back(w.waiter, w.end - w.start);
      s.waiters = waitersByTime(sums);
      s.callSite = s.info.callSite();
    }
    s.blockedBy = m.waitMatrix(whole, s.info.id);
    rows.sync.push_back(std::move(s));
  }
  rows.waitMatrix = m.waitMatrix(whole);
  rows.findings = m.findings(whole);
  std::vector<StateTimes> attributed;  // asked once, for the rows and the checks
  for (const ThreadRow &t : rows.threads) attributed.push_back(t.states);
  rows.violations = checkInvariants(m, whole, CounterCheck::Compare, {}, attributed);
  return rows;
}
