#include "reportstream.h"

#include <QFileInfo>
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "capturewindow.h"
#include "celltable.h"
#include "largeblocks.h"
#include "modelinvariants.h"
#include "sessionmodel.h"
#include "streamfindings.h"
#include "wirestate.h"

using namespace tmon;

namespace {

// What one window's model says, over the window's span [t0, t1); counters
// as their cumulative values (newest, and at the session start).
// A thread blocked in a wrapped call across a segment's edge for longer
// than the warm-up: the segment's first window has no transition of it
// before its unblocking and shows the kernel's view (asleep) until then.
// The merge carries the blocked state over that head (Merger::carry).
// Inside a segment the model itself carries it.
struct Blocked {
  bool valid = false;
  FinalState state = FinalState::Sleeping;
  uint32_t object = 0;
  uint32_t holder = 0;
};

struct ThreadPart {
  ThreadRow row;  // states and CPUs over the span
  bool hasLwp = false;
  LwpDelta newest, atStart;
  LwpDelta atFrom;     // at the span's start, in the first window of a flight capture's detail
  Blocked atEnd;       // its state at the span's end
  // Its time folded in waits on objects by its newest sample (cumulative:
  // the merge keeps the largest), which the objects' counters hold and no
  // wait does (checkMergedWaits).
  int64_t foldedWaitNs = 0;
  // End of the asleep run the span starts with (t0: none); found only for
  // a thread the merge carries blocked into the span (Merger::carrying).
  int64_t headEnd = 0;
  // Its inputs to hidden locks' estimates over the span (a model with a
  // hidden lock only), summed by the merge, which estimates once over the
  // whole run as a whole read does.
  HiddenInputs hidden;
};

struct SyncPart {
  SyncObjectInfo info;
  bool hasCounters = false;
  SyncDelta newest, atStart;
  std::vector<CallSite> sitesNewest, sitesAtStart;
  SyncDelta atFrom;  // as ThreadPart::atFrom
  std::vector<CallSite> sitesAtFrom;
  std::vector<InternalWaiter> internal;
  std::vector<std::pair<uint32_t, int64_t>> waits;  // each waiter's ns, by tid
  uint64_t pieces = 0;                              // of so many waits
  bool anyWait = false, onlyHousekeeping = true;
  std::vector<WaitPair> blockedBy;  // in no order: the merge adds them up
};

// A wait open at a window's end that nobody is blamed for yet (a barrier's,
// a condition's: their releaser comes at the end), its part in the window.
// The merge holds it (Merger::pending_) until a later window says who
// released it, as a whole read blames the whole wait.
struct OpenPiece {
  uint32_t waiter = 0, object = 0;
  uint64_t ns = 0;
  bool began = false;  // in the window (counted there)
};

// The continuation, in the next window, of a wait the merge holds: whom
// the window's model blames for it now.
struct WaitHead {
  uint32_t waiter = 0, object = 0;
  WaitRecord wait;  // clipped to the window
};

struct Part {
  TimeRange span;
  CaptureLoadResult res;
  SessionInfo info;
  int64_t startNs = 0, latestNs = 0;
  bool jvm = false, go = false;
  std::vector<ThreadPart> threads;
  std::vector<UserThreadRow> users;
  std::vector<CpuDelta> cpus;
  std::vector<SyncPart> sync;
  // Each hidden lock's ticks that saw threads on its word: (id, by tid).
  std::vector<std::pair<uint32_t, std::vector<std::pair<uint32_t, uint64_t>>>> hiddenSeen;
  std::vector<OpenPiece> openAtEnd;
  std::vector<WaitHead> heads;
  StreamFindingsPart findings;
  QStringList violations;  // modelinvariants.h over the window
};

// Counters at t: a delta from before any sample.
constexpr int64_t kBeforeAll = INT64_MIN;

Blocked blockedAt(const SessionModel &m, int index, int64_t t) {
  Blocked b;
  StateInterval iv;
  if (!m.stateAt(index, t - 1, &iv) || !isBlockedState(iv.state)) return b;
  b.valid = true;
  b.state = iv.state;
  b.object = iv.object;
  if (iv.object)  // a join's has none
    for (const WaitRecord &w : m.waits(iv.object, TimeRange{t - 1, t}))
      if (w.waiter == m.thread(index).tid) b.holder = w.holder;
  return b;
}

// Where the run of asleep intervals that starts at span.t0 ends (t0: none).
int64_t asleepHead(const SessionModel &m, int index, const TimeRange &span) {
  int64_t end = span.t0;
  // Most threads change within a millisecond: look at the whole span only
  // for those that do not.
  for (int64_t len : {int64_t(1'000'000), span.length()}) {
    end = span.t0;
    for (const StateInterval &iv : m.intervals(index, TimeRange{span.t0, span.t0 + len})) {
      if (iv.state != FinalState::Sleeping || iv.start != end) break;
      end = iv.end;
    }
    if (end < span.t0 + len) break;
  }
  return std::min(end, span.t1);
}

// A window refused: records whose times are too few to cut windows by (all
// forged unknown) put a whole capture in one model.
Part refusedPart(int64_t a, int64_t b, uint64_t bytes) {
  Part p;
  p.span = TimeRange{a, b};
  p.res.status = CaptureLoadResult::Damaged;
  p.res.message = QStringLiteral(
                      "%1 MB of records fall in one window (their times are too "
                      "few to cut windows by): not read")
                      .arg(double(bytes) / 1e6, 0, 'f', 0);
  return p;
}

// What the model says over the window [a, b) (the whole run's start in the
// first, its end in the last); carrying: whether the merge carries a tid
// blocked into the window (its asleep head is looked for).
// The waits open at the span's end that nobody is blamed for (OpenPiece),
// and the continuations of those the merge holds (held: waiter, object).
void openEdges(const SessionModel &m, const TimeRange &span,
               const std::vector<std::pair<uint32_t, uint32_t>> &held, Part *p) {
  std::vector<WaitRecord> ws;
  m.openWaits(&ws);
  for (const WaitRecord &w : ws)
    if (!w.blamed() && w.start < span.t1)
      p->openAtEnd.push_back(OpenPiece{
          w.waiter, w.object,
          uint64_t(std::max<int64_t>(0, std::min(w.end, span.t1) - std::max(w.start, span.t0))),
          w.start >= span.t0});
  for (const auto &[waiter, object] : held) {
    m.waits(object, TimeRange{span.t0, span.t0 + 1}, &ws);
    for (const WaitRecord &w : ws)
      if (w.waiter == waiter) p->heads.push_back(WaitHead{waiter, object, w});
  }
}

// hidden: the hidden locks the capture describes, (id, address); gappedBefore:
// the threads with gaps in the windows before (data_lost); detailFirst: the
// window starts a flight capture's kept detail (counters at its start too).
Part partOf(const SessionModel &m, int64_t a, int64_t b, bool first, bool last, bool detailFirst,
            const std::function<bool(uint32_t)> &carrying,
            const std::vector<std::pair<uint32_t, uint32_t>> &held,
            const std::vector<std::pair<uint32_t, uint64_t>> &hidden,
            const std::vector<uint32_t> &gappedBefore) {
  Part p;
  p.info = m.info();
  p.startNs = m.startNs();
  p.latestNs = m.latestNs();
  p.jvm = isJvmSession(m);
  p.go = isGoSession(m);
  // The first window starts at the session's start; the last ends where the
  // session's data does (as SessionModel::resolve(wholeRun) of a whole read).
  // Records timed before the start (a Hello's start after them: a capture
  // of the fuzz corpus whose first record is 1,400 s before it) are outside
  // the run, as read whole: no window starts before it.
  const int64_t t0 = first ? p.startNs : std::max(a, p.startNs);
  const int64_t t1 = last ? p.latestNs : std::min(b, p.latestNs);
  const TimeRange span{t0, std::max(t0, t1)};
  p.span = span;
  // Cumulative values: the newest the window holds (the whole run's end in
  // the last one), and those at the session's start.
  const int64_t newest = last ? p.latestNs : INT64_MAX;
  const SessionModel::StatesMemo memo(m, span);  // rows, findings and checks ask alike
  for (int i = 0; i < m.threadCount(); i++) {
    ThreadPart t;
    t.row.info = m.thread(i);
    t.row.probe = t.row.info.probe || (m.info().probeTid && t.row.info.tid == m.info().probeTid);
    t.row.states = m.threadStatesAttributed(i, span);
    t.row.cpuNs = m.threadCpuTimes(i, span);
    if (!t.row.info.folds.empty()) {
      t.row.folded = true;
      t.row.foldedNs = double(aliveNs(t.row.info.folds.back().ns));
      t.foldedWaitNs = objectWaitNs(t.row.info.folds.back().ns);
    }
    t.hasLwp = m.lwpSampleCount(i) > 0;
    t.newest = m.lwpDelta(i, TimeRange{kBeforeAll, newest});
    // A thread an attach found counts from its first sample (lwpDelta).
    if (first)
      t.atStart = m.lwpDelta(i, TimeRange{kBeforeAll, std::max(p.startNs, m.lwpCountedFromNs(i))});
    if (detailFirst)
      t.atFrom = m.lwpDelta(i, TimeRange{kBeforeAll, std::max(span.t0, m.lwpCountedFromNs(i))});
    t.atEnd = blockedAt(m, i, span.t1);
    t.headEnd = carrying(t.row.info.tid) ? asleepHead(m, i, span) : span.t0;
    if (!hidden.empty()) t.hidden = m.hiddenInputs(i, span);
    p.threads.push_back(std::move(t));
  }
  for (int i = 0; i < m.userThreadCount(); i++)
    p.users.push_back(UserThreadRow{m.userThread(i), m.userThreadStates(i, span)});
  for (int c = 0; c < m.cpuCount(); c++) p.cpus.push_back(m.cpuDelta(c, span));
  // Each object's waits and cells, asked once for the rows and the checks.
  std::vector<ObjectWaitSums> asked(size_t(m.syncObjectCount()));
  WaitSums waits;
  for (int i = 0; i < m.syncObjectCount(); i++) {
    SyncPart s;
    s.info = m.syncObject(i);
    const bool internal = s.info.kind == THREADMON__SYNC_KIND__KIND_INTERNAL;
    s.newest = m.syncDelta(i, TimeRange{kBeforeAll, newest});
    s.hasCounters = s.newest.acquisitions || s.newest.contentions || s.newest.waitNs ||
                    s.newest.waitSamples || s.newest.holdSamples;
    s.sitesNewest = m.callSites(s.info.id, TimeRange{kBeforeAll, newest});
    if (first) {
      s.atStart = m.syncDelta(i, TimeRange{kBeforeAll, p.startNs});
      s.sitesAtStart = m.callSites(s.info.id, TimeRange{kBeforeAll, p.startNs});
    }
    if (detailFirst) {
      s.atFrom = m.syncDelta(i, TimeRange{kBeforeAll, span.t0});
      s.sitesAtFrom = m.callSites(s.info.id, TimeRange{kBeforeAll, span.t0});
    }
    if (internal) {
      s.internal = m.internalWaiters(s.info.id, span);
      s.anyWait = !s.internal.empty();
      for (const InternalWaiter &w : s.internal)
        s.onlyHousekeeping = s.onlyHousekeeping && m.housekeepingThread(m.indexOfTid(w.tid));
      s.blockedBy = m.waitMatrix(span, s.info.id);
    } else {
      // Summed where they lie: the merge adds them up in any order.
      m.waitSums(s.info.id, span, &waits);
      asked[size_t(i)] = sumWaits(waits);
      s.anyWait = waits.pieces > 0;
      for (size_t k = 0; k < waits.waiters.size() && s.onlyHousekeeping; k++)
        s.onlyHousekeeping = m.housekeepingThread(m.indexOfTid(waits.waiters[k].first));
      s.waits = std::move(waits.waiters);
      s.pieces = waits.pieces;
      s.blockedBy = std::move(waits.cells);
    }
    p.sync.push_back(std::move(s));
  }
  for (const auto &[id, addr] : hidden) p.hiddenSeen.emplace_back(id, m.hiddenSeenAt(addr, span));
  openEdges(m, span, held, &p);
  KnownWaiterNs known;  // the findings' wait inputs, asked above
  for (const SyncPart &s : p.sync)
    if (s.info.kind != THREADMON__SYNC_KIND__KIND_INTERNAL) known.emplace(s.info.id, &s.waits);
  p.findings = streamFindingsPart(m, span, known, gappedBefore);
  std::vector<StateTimes> attributed;
  for (const ThreadPart &t : p.threads) attributed.push_back(t.row.states);
  p.violations = checkInvariants(m, span, CounterCheck::WindowOnly, asked, attributed);
  return p;
}

uint64_t sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// An object's pieces of waits counted one by one up to this many (then
// one a waiter: SyncAcc::pieces).
constexpr uint64_t kMaxPieces = 4096;

// The rows being summed, window after window in time order.
class Merger {
 public:
  // fromDetail: the rows of a flight capture's kept detail, from the first
  // window added on (its counters from that window's start).
  Merger(ReportRows *rows, int64_t windowNs, bool fromDetail = false)
      : rows_(rows), fromDetail_(fromDetail), findings_(windowNs, fromDetail) {}

  void add(Part &p, bool first) {
    if (first) rows_->startNs = fromDetail_ ? p.span.t0 : p.startNs;
    rows_->info = p.info;
    latest_ = p.latestNs;
    rows_->jvm = rows_->jvm || p.jvm;
    rows_->go = rows_->go || p.go;
    // Set once, by the window that saw the probe stop its records.
    if (stoppedNs_ < 0) stoppedNs_ = p.info.switchesStoppedNs;
    switchesLost_ += p.info.switchesLost;
    switchesReceived_ += p.info.switchesReceived;
    for (const QString &w : p.info.inputWarnings)
      if (!warnings_.contains(w)) warnings_ << w;
    for (const QString &n : p.info.notices)
      if (!notices_.contains(n)) notices_ << n;
    addDetailLost(p);
    for (ThreadPart &t : p.threads) addThread(t);
    for (UserThreadRow &u : p.users) addUser(u);
    if (rows_->cpus.size() < p.cpus.size()) rows_->cpus.resize(p.cpus.size());
    for (size_t c = 0; c < p.cpus.size(); c++) {
      CpuDelta &d = rows_->cpus[c];
      const CpuDelta &e = p.cpus[c];
#define TM_CPU_COUNTER(field, number, member, ...) d.member += e.member;
#include "counters.def"
    }
    for (SyncPart &s : p.sync) addSync(s);
    for (const auto &[id, seen] : p.hiddenSeen)
      for (const auto &[tid, ticks] : seen) hiddenSeen_[id][tid] += ticks;
    addOpenEdges(p);
    std::set<uint32_t> blocked;
    for (ThreadPart &t : p.threads)
      if (2 * carry(t, p) >= p.span.length()) blocked.insert(t.row.info.tid);
    findings_.add(p.findings, blocked);
  }

  void finish(const SessionModel &names) {
    rows_->durationS = double(latest_ - rows_->startNs) / 1e9;
    rows_->info.switchesStoppedNs = stoppedNs_;
    rows_->info.detailLost = detailLost_;
    rows_->info.switchesLost = switchesLost_;
    rows_->info.switchesReceived = switchesReceived_;
    rows_->info.inputWarnings = warnings_;
    // Waits still open at the capture's end: nobody released them.
    while (!pending_.empty()) unblame(pending_.begin());
    for (size_t i = 0; i < threads_.size(); i++) {
      ThreadRow &t = rows_->threads[i];
      t.lwp = threads_[i].hasLwp ? lwpBetween(threads_[i].atStart, threads_[i].newest) : LwpDelta{};
    }
    std::vector<MergedWaits> merged;
    for (SyncAcc &a : sync_) {
      SyncRow s;
      s.info = a.info;
      const bool internal = s.info.kind == THREADMON__SYNC_KIND__KIND_INTERNAL;
      s.delta = deltaOf(a);
      s.housekeeping = a.anyWait && a.onlyHousekeeping;
      std::vector<size_t> rank;
      for (const uint32_t id : a.siteOrder) {
        const SiteAcc &c = a.sites[id];
        CallSite site;
        site.stackId = id;
        site.frames = c.frames;
        site.contentions = sub(c.newest.contentions, c.atStart.contentions);
        site.waitNs = sub(c.newest.waitNs, c.atStart.waitNs);
        if (site.contentions || site.waitNs) {
          s.sites.push_back(std::move(site));
          rank.push_back(c.rank);
        }
      }
      if (internal) {
        // In the order of their counters (the newest window's), as a whole
        // read's: their waits here are the model's estimates.
        std::vector<size_t> order(s.sites.size());
        for (size_t k = 0; k < order.size(); k++) order[k] = k;
        std::stable_sort(order.begin(), order.end(),
                         [&rank](size_t x, size_t y) { return rank[x] < rank[y]; });
        std::vector<CallSite> sorted;
        for (size_t k : order) sorted.push_back(std::move(s.sites[k]));
        s.sites = std::move(sorted);
      } else {
        std::stable_sort(s.sites.begin(), s.sites.end(), [](const CallSite &x, const CallSite &y) {
          return x.waitNs != y.waitNs ? x.waitNs > y.waitNs : x.contentions > y.contentions;
        });
      }
      if (internal) {
        finishInternal(a, &s);
        const CallSite *site = busiestUnwound(s.sites);
        s.callSite = !s.info.callSite().isEmpty() || !site ? s.info.callSite()
                                                           : names.programFrame(site->frames);
      } else {
        s.waiters = waitersByTime({a.waitNs.begin(), a.waitNs.end()});
        s.callSite = s.info.callSite();
      }
      s.blockedBy = a.blockedBy.sorted();
      if (!internal) merged.push_back(mergedWaits(a, s.delta));
      const SyncDelta &d = s.delta;
      if (d.acquisitions || d.contentions || d.waitNs || d.waitSamples)
        rows_->sync.push_back(std::move(s));
    }
    checkMerged(merged);
    sortSyncRows(&rows_->sync);
    // The whole table is the objects' tables added up, once at the end.
    CellTable matrix;
    for (const SyncAcc &a : sync_) matrix.add(a.blockedBy.cells());
    rows_->waitMatrix = matrix.sorted();
    rows_->findings = findings_.findings(rows_, names);
  }

  // The waits whose blame waits for a later window (OpenPiece), by
  // (waiter, object): one a waiting thread.
  std::vector<std::pair<uint32_t, uint32_t>> held() const {
    std::vector<std::pair<uint32_t, uint32_t>> out;
    for (const auto &kv : pending_) out.push_back(kv.first);
    return out;
  }

  // The threads with a gap in their events in the windows so far.
  const std::vector<uint32_t> &gapped() const { return findings_.gapped(); }

  // Whether the window before left tid blocked (carry looks at its head).
  bool carrying(uint32_t tid) const {
    const auto it = carried_.find(tid);
    return it != carried_.end() && it->second.valid;
  }

 private:
  struct SiteAcc {
    QStringList frames;
    CallSite newest, atStart;
    // Its place in the newest window's list of the object's sites: a
    // hidden lock's are ordered by their counters there, whose waits the
    // model then replaces by its estimate (SessionModel::callSites).
    size_t rank = 0;
  };
  struct SyncAcc {
    SyncObjectInfo info;
    SyncDelta newest, atStart;
    std::map<uint32_t, SiteAcc> sites;
    std::vector<uint32_t> siteOrder;  // by first sight, as the model keeps them
    // Each waiter's time in waits on it, and the pieces (a wait, or its
    // part in one window) that made it up, counted as a list of them cut
    // to one a waiter when longer than kMaxPieces would be.
    std::unordered_map<uint32_t, int64_t> waitNs;
    uint64_t pieces = 0;
    bool anyWait = false, onlyHousekeeping = true;
    CellTable blockedBy;
  };

  void addThread(ThreadPart &t) {
    auto [it, fresh] = threadIndex_.emplace(t.row.info.tid, rows_->threads.size());
    if (fresh) {
      rows_->threads.push_back(ThreadRow{});
      threads_.push_back(ThreadPart{});
      threads_.back().atStart = fromDetail_ ? t.atFrom : t.atStart;
    }
    ThreadRow &r = rows_->threads[it->second];
    ThreadPart &acc = threads_[it->second];
    r.info = t.row.info;
    r.probe = t.row.probe;
    // Cumulative: a later segment's model may hold none of its fold points.
    r.folded = r.folded || t.row.folded;
    r.foldedNs = std::max(r.foldedNs, t.row.foldedNs);
    for (size_t k = 0; k < r.states.ns.size(); k++) r.states.ns[k] += t.row.states.ns[k];
    r.states.lifetimeNs += t.row.states.lifetimeNs;
    if (r.cpuNs.size() < t.row.cpuNs.size()) r.cpuNs.resize(t.row.cpuNs.size());
    for (size_t c = 0; c < t.row.cpuNs.size(); c++) r.cpuNs[c] += t.row.cpuNs[c];
    if (t.hasLwp) {
      acc.hasLwp = true;
      acc.newest = t.newest;
    }
    acc.foldedWaitNs = std::max(acc.foldedWaitNs, t.foldedWaitNs);
    HiddenInputs &h = acc.hidden;
    h.tid = r.info.tid;
    h.routine = r.info.startRoutine;
    h.asleep += t.hidden.asleep;
    h.sleepNs += t.hidden.sleepNs;
    h.systemNs += t.hidden.systemNs;
    h.volCtxsw += t.hidden.volCtxsw;
  }

  // The head of a window asleep for a thread the window before left blocked
  // was that wait going on (struct Blocked): its time moves from asleep to
  // the blocked state, and into the waits on the object. Returns the time
  // carried.
  int64_t carry(const ThreadPart &t, const Part &p) {
    const uint32_t tid = t.row.info.tid;
    Blocked &c = carried_[tid];
    const int64_t len = t.headEnd - p.span.t0;
    const int64_t carried = c.valid && len > 0 ? len : 0;
    if (carried) {
      StateTimes &st = rows_->threads[threadIndex_[tid]].states;
      st.ns[size_t(FinalState::Sleeping)] -= len;
      st.ns[size_t(c.state)] += len;
      auto it = c.object ? syncIndex_.find(c.object) : syncIndex_.end();
      if (it != syncIndex_.end()) {
        SyncAcc &a = sync_[it->second];
        a.waitNs[tid] += len;
        a.pieces++;
        a.anyWait = true;
        a.blockedBy.add(WaitPair{tid, c.holder, 0, uint64_t(len)});
      }
      if (t.headEnd >= p.span.t1) return len;  // blocked all through: carried on
    }
    c = t.atEnd;
    return carried;
  }

  void addUser(UserThreadRow &u) {
    auto [it, fresh] = userIndex_.emplace(u.info.id, rows_->users.size());
    if (fresh) rows_->users.push_back(UserThreadRow{});
    UserThreadRow &r = rows_->users[it->second];
    r.info = u.info;
    UserThreadStates &a = r.states;
    const UserThreadStates &b = u.states;
    for (size_t k = 0; k < a.onLwp.ns.size(); k++) a.onLwp.ns[k] += b.onLwp.ns[k];
    a.onLwp.lifetimeNs += b.onLwp.lifetimeNs;
    a.onLwpNs += b.onLwpNs;
    a.dispatchableNs += b.dispatchableNs;
    a.lifetimeNs += b.lifetimeNs;
    std::unordered_map<uint32_t, int64_t> per(a.lwpNs.begin(), a.lwpNs.end());
    for (const auto &l : b.lwpNs) per[l.first] += l.second;
    a.lwpNs.assign(per.begin(), per.end());
    std::sort(a.lwpNs.begin(), a.lwpNs.end(), [](const auto &x, const auto &y) {
      return x.second != y.second ? x.second > y.second : x.first < y.first;
    });
  }

  using PendingMap = std::map<std::pair<uint32_t, uint32_t>, WaitPair>;

  // A held wait's parts to the cell of whom the window blames for it (the
  // cell of nobody: unknown); none when it was a barrier's last arrival,
  // which a whole read leaves out of the table (SyncActivity's addCell).
  void blame(PendingMap::iterator it, const WaitRecord &w) {
    const bool self = !w.holder && w.releaser == w.waiter;
    const auto s = syncIndex_.find(it->first.second);
    if (!self && s != syncIndex_.end())
      sync_[s->second].blockedBy.add(
          WaitPair{it->first.first, w.blamed(), it->second.count, it->second.waitNs});
    pending_.erase(it);
  }
  void unblame(PendingMap::iterator it) {
    WaitRecord nobody;
    nobody.waiter = it->first.first;
    blame(it, nobody);
  }

  // The window's open waits of nobody's blame leave the unknown cell for
  // pending_; the held ones it continues go to whom it blames, or stay
  // held while still open; those it does not continue (a segment's model
  // that lost them) go back to the unknown cell.
  void addOpenEdges(const Part &p) {
    std::set<std::pair<uint32_t, uint32_t>> continued;
    for (const WaitHead &h : p.heads) {
      const auto it = pending_.find({h.waiter, h.object});
      if (it == pending_.end() || !continued.insert(it->first).second) continue;
      if (!h.wait.open || h.wait.blamed()) blame(it, h.wait);
    }
    for (auto it = pending_.begin(); it != pending_.end();)
      if (!continued.count(it->first))
        unblame(it++);
      else
        ++it;
    for (const OpenPiece &o : p.openAtEnd) {
      const auto s = syncIndex_.find(o.object);
      if (s == syncIndex_.end()) continue;
      WaitPair &c = sync_[s->second].blockedBy.at(o.waiter, 0);
      const uint64_t count = o.began && c.count ? 1 : 0, ns = std::min(o.ns, c.waitNs);
      c.count -= count;
      c.waitNs -= ns;
      WaitPair &held = pending_[{o.waiter, o.object}];
      held.count += count;
      held.waitNs += ns;
    }
  }

  void addSync(SyncPart &s) {
    auto [it, fresh] = syncIndex_.emplace(s.info.id, sync_.size());
    if (fresh) {
      sync_.push_back(SyncAcc{});
      sync_.back().atStart = fromDetail_ ? s.atFrom : s.atStart;
      for (const CallSite &c : fromDetail_ ? s.sitesAtFrom : s.sitesAtStart) {
        SiteAcc &site = sync_.back().sites[c.stackId];
        site.atStart = c;
      }
    }
    SyncAcc &a = sync_[it->second];
    a.info = s.info;
    if (s.hasCounters) a.newest = s.newest;
    for (size_t k = 0; k < s.sitesNewest.size(); k++) {
      const CallSite &c = s.sitesNewest[k];
      auto sit = a.sites.emplace(c.stackId, SiteAcc{}).first;
      sit->second.rank = k;
      if (std::find(a.siteOrder.begin(), a.siteOrder.end(), c.stackId) == a.siteOrder.end())
        a.siteOrder.push_back(c.stackId);
      sit->second.frames = c.frames;
      sit->second.newest = c;
    }
    for (const auto &[tid, ns] : s.waits) a.waitNs[tid] += ns;
    a.pieces += s.pieces;
    if (a.pieces > kMaxPieces) a.pieces = a.waitNs.size();
    a.anyWait = a.anyWait || s.anyWait;
    if (s.anyWait) a.onlyHousekeeping = a.onlyHousekeeping && s.onlyHousekeeping;
    a.blockedBy.add(s.blockedBy);
  }

  static SyncDelta deltaOf(const SyncAcc &a) { return syncBetween(a.atStart, a.newest); }

  // A hidden lock's estimate over the whole run from its threads' inputs
  // summed over the windows (SessionModel::internalWaiters: the threads
  // seen on it by tid, then the others); its sites share the estimated
  // loss by their samples (SessionModel::callSites).
  void finishInternal(const SyncAcc &a, SyncRow *s) const {
    std::vector<HiddenInputs> in;
    static const std::map<uint32_t, uint64_t> none;
    const auto seen = hiddenSeen_.find(a.info.id);
    const std::map<uint32_t, uint64_t> &bySeen = seen == hiddenSeen_.end() ? none : seen->second;
    for (const auto &[tid, ticks] : bySeen) {
      const auto it = threadIndex_.find(tid);
      if (it == threadIndex_.end() || !ticks) continue;
      in.push_back(threads_[it->second].hidden);
      in.back().seen = ticks;
    }
    for (const ThreadPart &t : threads_)
      if (!bySeen.count(t.hidden.tid)) in.push_back(t.hidden);
    s->internal = estimateHiddenWaits(in, a.info.runtimeKind != 0, rows_->info.tickIntervalNs);
    uint64_t lost = 0, samples = 0, siteSamples = 0;
    for (const InternalWaiter &w : s->internal) {
      lost += w.waitNs + w.kernelNs;
      samples += w.samples;
    }
    s->delta.waitNs = lost;
    s->delta.contentions = samples;
    for (const CallSite &c : s->sites) siteSamples += c.contentions;
    if (siteSamples)
      for (CallSite &c : s->sites)
        c.waitNs = uint64_t(double(lost) * double(c.contentions) / double(siteSamples));
  }

  // An object's waits as the windows gave them, to check against its
  // counters (a window alone cannot: modelinvariants.h).
  MergedWaits mergedWaits(const SyncAcc &a, const SyncDelta &d) const {
    MergedWaits w;
    w.info = a.info;
    w.hasCounters = d.acquisitions || d.contentions || d.waitNs || d.waitSamples;
    w.counterNs = int64_t(d.waitNs);
    w.holdNs = int64_t(d.holdNs);
    std::set<uint32_t> openAtEnd;
    for (const auto &kv : carried_)
      if (kv.second.valid && kv.second.object == a.info.id) openAtEnd.insert(kv.first);
    for (const auto &[tid, ns] : a.waitNs) {
      w.waiters.insert(tid);
      w.waitsNs += ns;
      if (openAtEnd.count(tid)) w.openBoundNs += ns;
    }
    w.pieces = a.pieces;
    return w;
  }

  void checkMerged(const std::vector<MergedWaits> &objects) {
    int64_t lives = 0, foldedWaitNs = 0;
    for (const ThreadRow &t : rows_->threads) lives += t.states.lifetimeNs;
    for (const ThreadPart &t : threads_) foldedWaitNs += t.foldedWaitNs;
    SessionInfo seen = rows_->info;
    seen.notices = notices_;
    for (const QString &v : checkMergedWaits(
             objects, latest_ - rows_->startNs, lives, rows_->threads.size(),
             int64_t(rows_->info.tickIntervalNs), countersComparable(seen), foldedWaitNs))
      rows_->violations << QStringLiteral("over the whole run: %1").arg(v);
  }

  ReportRows *rows_;
  bool fromDetail_ = false;
  // Each window's spans of lost detail inside its own span, joined where
  // they touch across windows. A pause that began before a segment's
  // warm-up is not in its model: it goes on, from the window before, until
  // the model's first switch record.
  void addDetailLost(const Part &p) {
    bool paused = false, carried = pausedAtEnd_;
    for (DetailLoss d : p.info.detailLost) {
      if (d.what == DetailLoss::RecordsPaused && d.fromNs <= p.span.t0) carried = false;
      if (d.what == DetailLoss::RecordsPaused && (d.toNs < 0 || d.toNs >= p.span.t1)) paused = true;
      d.fromNs = std::max(d.fromNs, p.span.t0);
      d.toNs = d.toNs < 0 || d.toNs > p.span.t1 ? p.span.t1 : d.toNs;
      if (d.fromNs < d.toNs) addDetailLoss(&detailLost_, d);
    }
    if (carried) {
      const int64_t resumed = p.info.firstSwitchNs;
      const bool none = resumed < p.span.t0 || resumed >= p.span.t1;
      addDetailLoss(&detailLost_,
                    {DetailLoss::RecordsPaused, p.span.t0, none ? p.span.t1 : resumed, 0});
      paused = paused || none;
    }
    pausedAtEnd_ = paused;
  }

  QStringList notices_;  // every window's: a gap's is in its window only
  DetailLosses detailLost_;
  bool pausedAtEnd_ = false;  // the last window ended with the records paused
  int64_t latest_ = 0;
  int64_t stoppedNs_ = -1;
  uint64_t switchesLost_ = 0, switchesReceived_ = 0;
  QStringList warnings_;
  std::unordered_map<uint32_t, size_t> threadIndex_, userIndex_, syncIndex_;
  std::unordered_map<uint32_t, Blocked> carried_;  // by tid
  PendingMap pending_;                             // addOpenEdges
  // Hidden locks' ticks on their words, by id and tid, from every window
  // (also those before a window's model knew the lock).
  std::unordered_map<uint32_t, std::map<uint32_t, uint64_t>> hiddenSeen_;
  std::vector<ThreadPart> threads_;  // the counters of rows_->threads, same order
  std::vector<SyncAcc> sync_;
  StreamFindings findings_;
};

}  // namespace

namespace {
// A year of 10 s windows; a 16 MB list.
constexpr double kMaxWindows = 4e6;
// Windows a record may make beyond the first kFreeWindows: a writer sends a
// record at least every 32 s (the display's 64 KiB blocks of an idle
// program; the probe's every 50 ms to 640 ms). A forged time 77 hours on
// made 55,000 windows: 15 s in a 2.6 KB capture, 52 s of CPU in 73 MB
// (a window of 100 threads costs about 1 ms).
constexpr double kFreeWindows = 1024, kWindowsPerRecord = 16;
}  // namespace

namespace {
// Plain frames (format 1) whose span fits a window are read whole up to a
// larger bound (CaptureWindow::kPlainWholeUpToBytes); past it, or longer, by
// windows as any capture.
qint64 wholeBytesOf(const CaptureWindow &cw, qint64 wholeUpToBytes) {
  return cw.plainFrames() ? std::min(wholeUpToBytes << 2, CaptureWindow::kPlainWholeUpToBytes)
                          : wholeUpToBytes;
}

bool wantedBy(const CaptureWindow &cw, qint64 size, qint64 wholeUpToBytes) {
  // Forged times reach INT64_MIN: the span is taken without overflow.
  const int64_t first = cw.firstNs(), last = cw.lastNs();
  const bool longSpan =
      last > first && uint64_t(last) - uint64_t(first) > uint64_t(StreamedReport::kWholeUpToNs);
  return longSpan || size > wholeBytesOf(cw, wholeUpToBytes);
}
}  // namespace

bool StreamedReport::wanted(const QString &path, qint64 wholeUpToBytes) {
  CaptureWindow cw;
  return cw.open(path) && wantedBy(cw, QFileInfo(path).size(), wholeUpToBytes);
}

CaptureLoadResult StreamedReport::rows(const QString &path, ReportRows *rows, Mode mode,
                                       int64_t chunkNs, qint64 wholeUpToBytes,
                                       int64_t segmentNs) {
  const qint64 size = QFileInfo(path).size();
  CaptureWindow cw;  // its index, checked (format 1's made by a scan at its Ticks)
  const bool opened = mode != Mode::Stream && cw.open(path);
  const bool stream =
      mode == Mode::Stream || (mode == Mode::Auto && opened && wantedBy(cw, size, wholeUpToBytes));
  if (opened) wholeUpToBytes = wholeBytesOf(cw, wholeUpToBytes);
  CaptureLoadResult res;
  if (mode == Mode::Auto && !opened && size > wholeUpToBytes) {
    res.message = QStringLiteral("%1 (at %2 MB not read whole: --whole to insist)")
                      .arg(cw.error())
                      .arg(double(size) / 1e6, 0, 'f', 0);
    return res;
  }
  if (stream) res = read(path, rows, chunkNs, segmentNs);
  if (stream && res.status == CaptureLoadResult::Unreadable && mode == Mode::Auto &&
      size > wholeUpToBytes) {
    res.message += QStringLiteral(" (at %1 MB not read whole: --whole to insist)")
                       .arg(double(size) / 1e6, 0, 'f', 0);
    return res;
  }
  if (!stream || (res.status == CaptureLoadResult::Unreadable && mode == Mode::Auto)) {
    // What made the windows refuse it (a forged time), or a forged index
    // that a whole read does not need, is said, and the capture counts as
    // damaged.
    QString refused = stream ? res.message : cw.note();
    refused.remove(QStringLiteral(": read by a scan of its records"));
    SessionModel model;
    res = CaptureReader::load(path, &model);
    if (res.status != CaptureLoadResult::Unreadable) *rows = collectRows(model);
    if (res.status == CaptureLoadResult::Complete && !refused.isEmpty()) {
      res.status = CaptureLoadResult::Damaged;
      res.message = refused + QStringLiteral(": read whole");
    }
  }
  return res;
}

CaptureLoadResult StreamedReport::read(const QString &path, ReportRows *rows, int64_t chunkNs,
                                       int64_t segmentNs) {
  CaptureLoadResult res;
  CaptureWindow names;
  if (!names.open(path)) {
    res.message = names.error();
    return res;
  }
  const int64_t first = names.firstNs(), last = names.lastNs();
  // Times from the file: a forged one spans centuries (a 7.5 KB capture
  // made billions of windows and never ended).
  const double windowsWanted = (double(last) - double(first)) / double(chunkNs);
  const double windowsAllowed =
      std::min(kMaxWindows, kFreeWindows + kWindowsPerRecord * double(names.records()));
  if (windowsWanted > windowsAllowed) {
    res.message = QStringLiteral(
                      "its %1 records' times span %2 s: more than %3 windows, not "
                      "trusted")
                      .arg(names.records())
                      .arg((double(last) - double(first)) / 1e9, 0, 'g', 3)
                      .arg(windowsAllowed, 0, 'f', 0);
    return res;
  }
  const CaptureWindow &cw = names;
  const std::vector<std::pair<uint32_t, uint64_t>> hidden = cw.hiddenLocks();
  const uint64_t maxBytes =
      uint64_t(kMaxWindowBytes) * uint64_t(std::max<int64_t>(1, chunkNs / kChunkNs));
  // Names of call sites need the program's name (Hello), from the start.
  SessionModel hello;
  // (Its first record alone when the window at the start holds too much:
  // times too few, every record in it; a 73 MB capture took 559 MB here.)
  const int64_t helloAt = names.bytesOf(first, first) <= maxBytes ? first : INT64_MIN / 2;
  names.load(helloAt, helloAt, &hello);
  // A flight recorder's capture keeps detail from detailFrom on (its first
  // records say so): before it, states are estimates from the counters. A
  // window edge falls there, and the findings are those of the windows
  // from there, as a whole read judges the kept detail alone.
  const int64_t detailFrom = hello.info().flightRecorder ? hello.info().flightDetailFromNs : 0;
  const bool detailOnly = detailFrom > first && detailFrom < last;
  std::vector<std::pair<int64_t, int64_t>> spans;
  auto cut = [&spans, chunkNs](int64_t from, int64_t to) {
    for (int64_t a = from; a < to || spans.empty(); a += chunkNs)
      spans.emplace_back(a, std::min(to, a + chunkNs));
  };
  if (detailOnly) cut(first, detailFrom);
  cut(detailOnly ? detailFrom : first, last);

  Merger merger(rows, chunkNs);
  ReportRows detailRows;
  Merger detail(&detailRows, chunkNs, true);
  bool inDetail = false;
  res.status = CaptureLoadResult::Complete;
  auto take = [&](Part &p, size_t k) {
    res.frames += p.res.frames;
    if (p.res.status != CaptureLoadResult::Complete && res.status == CaptureLoadResult::Complete) {
      res.status = p.res.status;
      res.message = p.res.message;
    }
    for (const QString &v : p.violations)
      rows->violations << QStringLiteral("in %1 s to %2 s: %3")
                              .arg(double(p.span.t0 - first) / 1e9, 0, 'f', 1)
                              .arg(double(p.span.t1 - first) / 1e9, 0, 'f', 1)
                              .arg(v);
    merger.add(p, k == 0);
    if (detailOnly && spans[k].first >= detailFrom) {
      detail.add(p, !inDetail);
      inDetail = true;
    }
  };
  // The windows of a segment are read into one model, window after window:
  // every record decoded and folded once, each thread's state, its open
  // wait and the counters carried across the windows' edges by the model.
  // A segment starts as a window read alone does (descriptions, warm-up),
  // and is dropped at its end, so memory follows the segment.
  const size_t perSegment =
      size_t(std::max<int64_t>(1, segmentNs / std::max<int64_t>(1, chunkNs)));
  // A dropped model's large buffers kept for the next one: its pages were
  // faulted in again otherwise (a fifth of the CPU, in the kernel).
  const largeblocks::KeepFreed keepFreed;
  std::unique_ptr<SessionModel> model;
  std::unique_ptr<CaptureWindow::Sequence> seq;
  uint64_t lostBefore = 0, receivedBefore = 0;
  size_t inSegment = 0;
  bool seqWhole = false;  // the segment's model read without damage
  // Where the window before ended: its model's newest time when that came
  // before the window's end (records a tick's gap apart). The next window
  // of the same model starts there, so that no span falls between two
  // windows (mariadb of the e2e tests in 1 s windows: 1.5 s of its 7).
  int64_t endedAt = INT64_MIN;
  for (size_t k = 0; k < spans.size(); k++) {
    const auto [a, b] = spans[k];
    const bool isFirst = k == 0, isLast = k + 1 == spans.size();
    const uint64_t bytes = cw.bytesOf(isFirst ? INT64_MIN / 2 : a, b);
    if (bytes > maxBytes) {
      Part p = refusedPart(a, b, bytes);
      take(p, k);
      seq.reset();  // the next window starts a segment of its own
      endedAt = INT64_MIN;
      continue;
    }
    if (!seq || inSegment == perSegment) {
      // The waits open at its start that began before its first record,
      // from the segment before (read through a, whole): the new model
      // would not see them begin (docs/architecture.md, "Window edges").
      std::vector<CaptureWindow::CarriedWait> carried;
      const bool carry = seq && !isFirst && seqWhole;
      if (carry) carried = cw.waitsOpenAt(*model, a);
      seq.reset();
      // Kept until the new one has each thread's last sample in it.
      const std::unique_ptr<SessionModel> before = carry ? std::move(model) : nullptr;
      model = std::make_unique<SessionModel>();
      // Its switch records counted once: those from its first window's
      // start to its last one's end (its read goes on past it: readPast).
      const size_t lastOfSegment = std::min(spans.size(), k + perSegment) - 1;
      model->countSwitchesIn(isFirst ? INT64_MIN : a, lastOfSegment + 1 == spans.size()
                                                          ? INT64_MAX
                                                          : spans[lastOfSegment].second);
      seq = std::make_unique<CaptureWindow::Sequence>(cw, model.get(),
                                                      isFirst ? INT64_MIN / 2 : a, &carried);
      if (before) seq->carrySamplesFrom(*before);
      lostBefore = receivedBefore = 0;
      inSegment = 0;
      endedAt = INT64_MIN;
    }
    inSegment++;
    // Through the tick after the window's end: the spans before it are
    // final only then (a tick's split of a thread's time between its
    // samples; ticks seconds apart in a quiet program's capture).
    const CaptureLoadResult r = seq->readPast(b);
    seqWhole = r.status == CaptureLoadResult::Complete;
    model->settleNow();
    Part p = partOf(
        *model, endedAt > INT64_MIN && endedAt < a ? endedAt : a, b, isFirst, isLast,
        detailOnly && !inDetail && a >= detailFrom,
        [&merger](uint32_t tid) { return merger.carrying(tid); }, merger.held(), hidden,
        merger.gapped());
    p.res = r;
    endedAt = p.span.t1;
    // Damage (a length word that lies, a frame that is no frame) ends the
    // model's stream: the next window starts a segment of its own, after
    // the damage, as a window read alone would.
    if (r.status != CaptureLoadResult::Complete) inSegment = perSegment;
    // The model's switch counts are the segment's so far: the window's share.
    p.info.switchesLost -= lostBefore;
    p.info.switchesReceived -= receivedBefore;
    lostBefore = model->info().switchesLost;
    receivedBefore = model->info().switchesReceived;
    take(p, k);
  }
  // A capture whose writer was killed has no index at its end: the records
  // found by a scan were read, the rest is lost.
  if (!names.note().isEmpty()) {
    res.status = CaptureLoadResult::Damaged;
    res.message = names.note();
  } else if (names.lostItsIndex() && res.status == CaptureLoadResult::Complete) {
    res.status = CaptureLoadResult::Damaged;
    res.message = QStringLiteral("cut short (no index at its end): reporting its %1 whole records")
                      .arg(names.records());
  }
  merger.finish(hello);
  if (inDetail) {
    detail.finish(hello);
    rows->findings = std::move(detailRows.findings);
  }
  return res;
}
