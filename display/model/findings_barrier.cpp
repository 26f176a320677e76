// barrier_imbalance: rounds at a barrier (or a cond broadcast used as one)
// where the last arrival hardly waits and the others wait long
// (docs/findings.md).
#include <algorithm>
#include <functional>
#include <map>

#include "findings_util.h"

namespace tmon {
namespace findings_detail {

namespace {

// A round: the waits pending when the first of them was released, by the
// same releaser, woken within this span (wake-ups queue on a busy machine).
constexpr int64_t kRoundWakeNs = 50'000'000;
// The same thread must arrive last in at least this share of the rounds:
// a last arrival that changes at random is scheduling noise, not uneven work.
constexpr double kUsualLastShare = 0.75;
// The usual last arrival used at least this many times the others' CPU
// time: it had more to do (or a slower CPU). Below, it had about as much
// and was held up waiting for a CPU (or the hypervisor).
constexpr double kMoreCpuRatio = 1.15;

// On-CPU time over r of the usual last arrival and the others' average (the
// threads that waited; members is sorted), in ns; others is 0 when unknown.
struct CpuShares {
  double last = 0, others = 0;
  double ratio() const { return others > 0 ? last / others : 0; }
};

CpuShares cpuShares(const SessionModel &m, const TimeRange &r, uint32_t last,
                    const std::vector<uint32_t> &members) {
  CpuShares c;
  int n = 0;
  for (const ProgramThread &p : programThreads(m, r)) {
    if (p.tid != last && !std::binary_search(members.begin(), members.end(), p.tid)) continue;
    double on = double(p.st.ns[size_t(FinalState::OnCpu)]);
    if (p.tid == last) {
      c.last = on;
    } else {
      c.others += on;
      n++;
    }
  }
  c.others = n ? c.others / n : 0;
  return c;
}

// The usual last arrival asleep (or blocked elsewhere) more than this share
// of its life, and more than on a CPU: it sleeps, whatever its CPU time.
constexpr double kAsleepCause = 0.25;

// The share of r the thread spent asleep or blocked on anything but a
// barrier, when that is more than its time on a CPU; else 0.
double asleepShare(const SessionModel &m, const TimeRange &r, uint32_t tid) {
  const int i = m.indexOfTid(tid);
  if (i < 0) return 0;
  const StateTimes st = m.threadStatesAttributed(i, r);
  if (st.lifetimeNs <= 0) return 0;
  int64_t asleep = 0;
  for (int k = 0; k < kFinalStateCount; k++) {
    const FinalState s = FinalState(k);
    if (s == FinalState::Sleeping || s == FinalState::IoWait || s == FinalState::Idle ||
        (isBlockedState(s) && s != FinalState::BlockedBarrier && s != FinalState::BlockedCond))
      asleep += st.ns[size_t(k)];
  }
  if (asleep <= st.ns[size_t(FinalState::OnCpu)]) return 0;
  return double(asleep) / double(st.lifetimeNs);
}

// The share of r the thread spent idle, waiting for events.
double idleShare(const SessionModel &m, const TimeRange &r, uint32_t tid) {
  const int i = m.indexOfTid(tid);
  if (i < 0) return 0;
  const StateTimes st = m.threadStates(i, r);
  return st.lifetimeNs > 0 ? double(st.ns[size_t(FinalState::Idle)]) / double(st.lifetimeNs) : 0;
}
// A cond's usual last arrival idle this share of its life feeds a pool.
constexpr double kIdleReleaser = 0.5;

struct Round {
  int64_t end = 0;        // release time
  uint32_t releaser = 0;
  uint32_t last = 0;      // the last arrival (releaser, or the shortest waiter)
  double lastWait = 0;    // ns
  double othersWait = 0;  // average ns
  int waiters = 0;
};

// A sweep over the waits in order of their end (their index in ws): a
// round takes the waits pending at its release (begun before it, in no
// round yet) that end within kRoundWakeNs. `pending`, a min-heap of
// indices fed in order of start as the release moves on, hands a round
// only its own candidates, not every wait that ends near it: with 1,000
// threads on one cond that scan was most of the findings' time.
std::vector<Round> roundsOf(std::vector<WaitRecord> ws) {
  std::sort(ws.begin(), ws.end(), [](const WaitRecord &a, const WaitRecord &b) { return a.end < b.end; });
  std::vector<std::pair<int64_t, size_t>> byStart(ws.size());
  for (size_t k = 0; k < ws.size(); k++) byStart[k] = {ws[k].start, k};
  std::sort(byStart.begin(), byStart.end());
  std::vector<size_t> pending, near;
  auto pend = [&pending](size_t j) {
    pending.push_back(j);
    std::push_heap(pending.begin(), pending.end(), std::greater<size_t>());
  };
  size_t started = 0;
  std::vector<bool> used(ws.size(), false);
  std::vector<Round> rounds;
  for (size_t i = 0; i < ws.size(); i++) {
    if (used[i]) continue;
    int64_t release = ws[i].end;
    for (; started < byStart.size() && byStart[started].first < release; started++)
      if (byStart[started].second > i) pend(byStart[started].second);
    // The pending waits of this round's span, in order of their end.
    near.clear();
    while (!pending.empty() && ws[pending.front()].end - release <= kRoundWakeNs) {
      const size_t j = pending.front();
      std::pop_heap(pending.begin(), pending.end(), std::greater<size_t>());
      pending.pop_back();
      if (j > i && !used[j]) near.push_back(j);
    }
    // A wait whose releaser is unknown (the probe could not tell) belongs
    // to the round whose named releaser ended it, woken with the others.
    uint32_t rel = ws[i].releaser;
    for (size_t k = 0; !rel && k < near.size(); k++) rel = ws[near[k]].releaser;
    std::vector<std::pair<int64_t, uint32_t>> w;
    bool releaserWaited = false;
    auto take = [&](size_t j) {
      if (ws[j].releaser != rel && ws[j].releaser) return false;
      used[j] = true;
      w.emplace_back(ws[j].end - ws[j].start, ws[j].waiter);
      releaserWaited = releaserWaited || ws[j].waiter == rel;
      return true;
    };
    if (ws[i].start < release) take(i);
    for (size_t j : near)
      if (!take(j)) pend(j);  // another releaser's: a later round's
    // Only a wait that ended as it began (blocked and released at one
    // instant) leaves nobody who waited: no round.
    if (w.empty()) continue;
    Round rd;
    rd.end = release;
    rd.releaser = rel;
    std::sort(w.begin(), w.end());
    size_t others = 0;
    if (rel && !releaserWaited) {
      rd.last = rel;  // arrived last and never blocked
    } else {
      rd.last = w.front().second;
      rd.lastWait = double(w.front().first);
      others = 1;
    }
    double sum = 0;
    for (size_t k = others; k < w.size(); k++) sum += double(w[k].first);
    rd.waiters = int(w.size() - others);
    rd.othersWait = rd.waiters ? sum / rd.waiters : 0;
    rounds.push_back(rd);
  }
  return rounds;
}

}  // namespace

void barrierTally(BarrierTally *t, const FindingInputs::Round &rd) {
  const double len = double(rd.end - t->prevEnd);
  // A cond counts as a barrier only in rounds that release several threads.
  const int minWaiters = rd.barrier ? 1 : 2;
  if (t->hasPrev && rd.waiters >= minWaiters && len > 0) {
    t->othersShare += std::min(1.0, rd.othersWait / len);
    t->lastShare += std::min(1.0, rd.lastWait / len);
    t->lastCount[rd.last]++;
    t->releasers[rd.releaser]++;
    t->n++;
  }
  t->barrier = rd.barrier;
  t->hasPrev = true;
  t->prevEnd = rd.end;
}

bool barrierFinding(uint32_t object, const BarrierTally &t, const BarrierContext &c,
                    const TimeRange &r, Finding *f) {
  const int n = t.n;
  if (n < finding::kBarrierMinRounds) return false;
  const double othersShare = t.othersShare / n, lastShare = t.lastShare / n;
  if (othersShare < finding::kBarrierWaitShare || lastShare >= finding::kBarrierLastShare)
    return false;
  auto slowest = std::max_element(t.lastCount.begin(), t.lastCount.end(),
                                  [](const auto &a, const auto &b) { return a.second < b.second; });
  if (slowest->second < kUsualLastShare * n) return false;
  // One thread always broadcasting to the others is a producer feeding
  // consumers, not a barrier: a cond barrier is released by its members.
  if (!t.barrier && t.releasers.size() < 2) return false;
  // Released by a thread that is idle, waiting for events (an event loop
  // in epoll_wait that queues what it reads, a listener in accept): the
  // waiters are a pool waiting for work from outside, not for a slow
  // member (an event_server's workers read as a HIGH imbalance of 70%).
  if (!t.barrier && c.idleShare(slowest->first) >= kIdleReleaser) return false;
  f->kind = FindingKind::BarrierImbalance;
  f->severity = severityByShare(othersShare, finding::kBarrierWaitShare);
  f->objects = {object};
  f->t0 = r.t0;
  f->t1 = r.t1;
  f->threads = c.threads;
  // More work, or the same work and less of a CPU: different cures.
  CpuShares cpu;
  c.cpu(slowest->first, &cpu.last, &cpu.others);
  const bool moreCpu = cpu.others <= 0 || cpu.ratio() >= kMoreCpuRatio;
  // Or it sleeps between rounds (a sleep call, a read, a lock of its own)
  // more than it works: then its CPU time says nothing of the cause.
  const double asleep = c.asleepShare(slowest->first);
  const QString cause =
      asleep > kAsleepCause
          ? QStringLiteral(
                "it sleeps %1 of its time outside the barrier (in a sleep call, a "
                "read, or waiting for something else), longer than it works: the "
                "others wait for its sleep, not for more work.")
                .arg(percent(asleep))
      : cpu.others <= 0 ? QStringLiteral(
                              "the work between rounds is split unevenly. Give each thread an "
                              "equal share, or hand out smaller pieces.")
      : moreCpu ? QStringLiteral(
                      "it used %1× the CPU time of the others. Its share of the work is "
                      "larger (or its CPU slower: a busy hyperthread sibling, or a host "
                      "running other guests on it). Give each thread an equal share, or "
                      "hand out smaller pieces.")
                      .arg(cpu.ratio(), 0, 'f', 1)
                : QStringLiteral(
                      "it used about the CPU time of the others (%1×), so it was held up "
                      "waiting for a CPU, not by more work: other threads or processes "
                      "share its CPU.")
                      .arg(cpu.ratio(), 0, 'f', 1);
  f->message = QStringLiteral(
                   "At %1 the threads wait on average %2 of each round for the last one "
                   "to arrive (%3 arrived last in %4 of %5 rounds): %6")
                   .arg(c.objectName, percent(othersShare), c.threadName(slowest->first))
                   .arg(slowest->second)
                   .arg(n)
                   .arg(cause);
  f->evidence["object"] = qint64(object);
  f->evidence["rounds"] = n;
  f->evidence["others_wait_share"] = othersShare;
  f->evidence["last_wait_share"] = lastShare;
  f->evidence["usual_last"] = qint64(slowest->first);
  f->evidence["usual_last_rounds"] = slowest->second;
  f->evidence["usual_last_cpu_s"] = cpu.last / 1e9;
  f->evidence["others_cpu_s"] = cpu.others > 0 ? QJsonValue(cpu.others / 1e9) : QJsonValue();
  f->evidence["cpu_ratio"] = cpu.others > 0 ? QJsonValue(cpu.ratio()) : QJsonValue();
  f->evidence["usual_last_asleep_share"] = asleep;
  return true;
}

void barrierFindings(const SessionModel &m, const TimeRange &r, std::vector<Finding> *out) {
  // A runtime's housekeeping waits (the JVM's compile queue, broadcast to
  // its compiler threads by whichever thread queued a method) are not the
  // program's barriers.
  const std::set<uint32_t> program = programTids(m, r);
  FindingInputs *in = inputsFor(m, r);
  for (int oi = 0; oi < m.syncObjectCount(); oi++) {
    const SyncObjectInfo &o = m.syncObject(oi);
    bool barrier = o.kind == THREADMON__SYNC_KIND__KIND_BARRIER;
    if (!barrier && o.kind != THREADMON__SYNC_KIND__KIND_COND) continue;
    std::vector<WaitRecord> ws;
    for (const WaitRecord &w : m.waits(o.id, r))
      if (!w.open && program.count(w.waiter)) ws.push_back(w);
    auto roundOf = [&](const Round &rd) {
      FindingInputs::Round x;
      x.object = o.id;
      x.barrier = barrier;
      x.end = rd.end;
      x.releaser = rd.releaser;
      x.last = rd.last;
      x.lastWait = rd.lastWait;
      x.othersWait = rd.othersWait;
      x.waiters = rd.waiters;
      return x;
    };
    BarrierTally tally;
    for (const Round &rd : roundsOf(ws)) barrierTally(&tally, roundOf(rd));
    if (in) {
      // The rounds a window of a stream tallies: those released from
      // kRoundWakeNs before r to kRoundWakeNs before its end (the last
      // window: to its end), so that the model knows each round's waits
      // to their ends (it reads a tick past r; a wait open at its end
      // would read as ended there, and join a round it is not in). Their
      // waits read whole from before r (waits are clipped to the range
      // asked), further back while a wait of a tallied round is cut at
      // the read's start (rounds of seconds in 1 s windows).
      const int64_t lo = r.t0 - std::min(kRoundWakeNs, r.t0 - INT64_MIN / 2);
      const int64_t hi = m.latestNs() <= r.t1 ? INT64_MAX
                         : r.t1 < INT64_MIN + kRoundWakeNs ? INT64_MIN
                                                            : r.t1 - kRoundWakeNs;
      for (int64_t reach = r.length();; reach = reach > INT64_MAX / 4 ? INT64_MAX / 2 : 2 * reach) {
        const int64_t from = lo - std::min(reach, lo - INT64_MIN / 2);
        bool cut = false;
        ws.clear();
        for (const WaitRecord &w : m.waits(o.id, TimeRange{from, INT64_MAX / 2}))
          if (!w.open && program.count(w.waiter)) {
            ws.push_back(w);
            cut = cut || (w.start <= from && w.end >= lo);
          }
        if (!cut || from <= INT64_MIN / 2) break;
      }
      for (const Round &rd : roundsOf(std::move(ws)))
        if (rd.end >= lo && rd.end < hi) in->rounds.push_back(roundOf(rd));
    }
    if (tally.n < finding::kBarrierMinRounds) continue;
    BarrierContext c;
    c.objectName = objectName(m, o.id);
    for (const WaitPair &p : m.waitMatrix(r, o.id)) c.threads.push_back(p.waiter);
    std::sort(c.threads.begin(), c.threads.end());
    c.threads.erase(std::unique(c.threads.begin(), c.threads.end()), c.threads.end());
    c.threadName = [&m](uint32_t tid) { return threadName(m, tid); };
    c.cpu = [&](uint32_t last, double *cpuLast, double *cpuOthers) {
      const CpuShares s = cpuShares(m, r, last, c.threads);
      *cpuLast = s.last;
      *cpuOthers = s.others;
    };
    c.asleepShare = [&](uint32_t tid) { return asleepShare(m, r, tid); };
    c.idleShare = [&](uint32_t tid) { return idleShare(m, r, tid); };
    Finding f;
    if (barrierFinding(o.id, tally, c, r, &f)) out->push_back(std::move(f));
  }
}

}  // namespace findings_detail
}  // namespace tmon
