// SessionModel queries about who waited for whom: waits, the waiter x
// holder matrix, call sites, hidden-lock waiters, deadlocks and findings.
#include <QFileInfo>
#include <QHash>
#include <QSet>

#include <algorithm>

#include "runtimesync.h"
#include "sessionmodel.h"
#include "sessionstore.h"
#include "symbolname.h"

namespace tmon {

namespace {
constexpr uint64_t kDefaultTickNs = 10'000'000;  // the probe's default, when Hello lacks it
}

std::vector<WaitRecord> SessionModel::waits(uint32_t objectId, const TimeRange &r) const {
  std::vector<WaitRecord> out;
  store_->activity.waits(objectId, r, latestNs(), &out);
  return out;
}

void SessionModel::waits(uint32_t objectId, const TimeRange &r,
                         std::vector<WaitRecord> *out) const {
  out->clear();
  store_->activity.waits(objectId, r, latestNs(), out);
}

const SyncActivity &SessionModel::syncActivity() const {
  return store_->activity;
}

std::vector<WaitPair> SessionModel::waitMatrix(const TimeRange &r, uint32_t objectId) const {
  return store_->activity.matrix(r, latestNs(), objectId);
}

void SessionModel::waitSums(uint32_t objectId, const TimeRange &r, WaitSums *out) const {
  store_->activity.waitSums(objectId, r, latestNs(), out);
}

void SessionModel::openWaits(std::vector<WaitRecord> *out) const {
  store_->activity.openWaits(latestNs(), out);
}

std::vector<std::pair<uint32_t, int64_t>> SessionModel::waiterNs(uint32_t objectId,
                                                                 const TimeRange &r) const {
  return store_->activity.waiterNs(objectId, r, latestNs());
}

QStringList SessionModel::stack(uint32_t stackId) const {
  return store_->activity.stackFrames(stackId);
}

std::vector<CallSite> SessionModel::callSites(uint32_t objectId, const TimeRange &r) const {
  std::vector<CallSite> sites = store_->activity.callSites(objectId, r);
  int idx = indexOfSyncObject(objectId);
  if (idx < 0 || syncObject(idx).kind != THREADMON__SYNC_KIND__KIND_INTERNAL || sites.empty())
    return sites;
  // A hidden lock's sites count ticks that saw a thread blocked there: share
  // the lock's estimated lost time out by those counts (internalWaiters).
  uint64_t samples = 0, lost = 0;
  for (const CallSite &c : sites) samples += c.contentions;
  for (const InternalWaiter &w : internalWaiters(objectId, r)) lost += w.waitNs + w.kernelNs;
  if (!samples) return sites;
  for (CallSite &c : sites)
    c.waitNs = uint64_t(double(lost) * double(c.contentions) / double(samples));
  return sites;
}

// Waits on a hidden lock are mostly far shorter than a tick, so ticks x
// interval misses most of them. The switch records time every sleep of a
// thread in the kernel exactly; the ticks that found a thread asleep in a
// known syscall say which share of those sleeps was on this word. Only
// threads seen on the word are charged (every std::thread, Rust, JVM and
// CPython thread starts in the same runtime function: pooling by start
// routine charged a condvar waiter with a mutex it never took); those that
// run the same function pool their ticks for the share, which a few ticks
// per thread would make noisy. The same share of their system CPU
// time is the futex calls the lock costs them without any sleep. Captures
// without asleep_syscall: ticks x interval, no kernel time.

SessionModel::HiddenTicks SessionModel::hiddenTicks(int index, uint64_t addr,
                                                    const TimeRange &r) const {
  const ThreadInfo &t = thread(index);
  const SyncActivity &act = store_->activity;
  return HiddenTicks{act.futexTicks(t.tid, addr, r, store_->tickTimes, t.endNs),
                     act.asleepTicks(t.tid, r, store_->tickTimes, t.endNs)};
}

namespace {

// A thread's estimated wait on a hidden lock: seen on it t.seen ticks, its
// pool (it and the threads of its start routine seen on it) as given.
InternalWaiter hiddenShare(const HiddenInputs &t, uint64_t poolSeen, uint64_t poolAsleep,
                           uint64_t tick) {
  InternalWaiter w;
  w.tid = t.tid;
  w.samples = t.seen;
  if (!poolAsleep || !poolSeen) {
    w.waitNs = w.samples * tick;
    return w;
  }
  double share = std::min(1.0, double(poolSeen) / double(poolAsleep));
  w.waitNs = uint64_t(double(t.sleepNs) * share);
  w.kernelNs = uint64_t(double(t.systemNs) * share);
  return w;
}

// SessionModel::unseenPeer's test on a thread's inputs.
bool unseenPeerOf(const HiddenInputs &t, uint64_t tick) {
  return !t.seen && !t.asleep && t.volCtxsw > 0 && t.sleepNs > 0 &&
         uint64_t(t.sleepNs) / t.volCtxsw < tick / 2;
}

}  // namespace

std::vector<InternalWaiter> estimateHiddenWaits(const std::vector<HiddenInputs> &threads,
                                                bool runtimeOwn, uint64_t tick) {
  if (!tick) tick = kDefaultTickNs;
  std::vector<InternalWaiter> out;
  // Threads seen on the word pooled per start routine among them.
  QHash<QString, std::pair<uint64_t, uint64_t>> pools;  // seen, asleep
  for (const HiddenInputs &t : threads) {
    if (!t.seen) continue;
    auto &p = pools[t.routine];
    p.first += t.seen;
    p.second += t.asleep;
  }
  // A runtime's own object (a Rust Mutex, a C++ semaphore) is waited for
  // by the threads that use it, each for its own reasons: no pooling.
  for (const HiddenInputs &t : threads) {
    if (!t.seen) continue;
    const auto pool = runtimeOwn || t.routine.isEmpty() ? std::make_pair(t.seen, t.asleep)
                                                        : pools.value(t.routine);
    InternalWaiter w = hiddenShare(t, pool.first, pool.second, tick);
    if (w.samples || w.waitNs || w.kernelNs) out.push_back(w);
  }
  if (!runtimeOwn && !pools.isEmpty()) {
    for (const HiddenInputs &t : threads) {
      if (t.seen || t.routine.isEmpty()) continue;
      const auto pool = pools.constFind(t.routine);
      if (pool == pools.constEnd() || !unseenPeerOf(t, tick)) continue;
      InternalWaiter w = hiddenShare(t, pool->first, pool->second, tick);
      w.inferred = true;
      if (w.waitNs || w.kernelNs) out.push_back(w);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const InternalWaiter &a, const InternalWaiter &b) {
    return a.waitNs + a.kernelNs > b.waitNs + b.kernelNs;
  });
  return out;
}

HiddenInputs SessionModel::hiddenInputs(int index, const TimeRange &r) const {
  const ThreadInfo &t = thread(index);
  const LwpDelta d = lwpDelta(index, r);
  HiddenInputs in;
  in.tid = t.tid;
  in.routine = t.startRoutine;
  in.asleep = store_->activity.asleepTicks(t.tid, r, store_->tickTimes, t.endNs);
  in.sleepNs = sleepOutsideWrappedNs(index, r);
  in.systemNs = d.systemNs;
  in.volCtxsw = d.volCtxsw;
  return in;
}

std::vector<std::pair<uint32_t, uint64_t>> SessionModel::hiddenSeen(uint32_t objectId,
                                                                    const TimeRange &r) const {
  const int idx = indexOfSyncObject(objectId);
  if (idx < 0 || !syncObject(idx).address) return {};
  return hiddenSeenAt(syncObject(idx).address, r);
}

std::vector<std::pair<uint32_t, uint64_t>> SessionModel::hiddenSeenAt(uint64_t addr,
                                                                      const TimeRange &r) const {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (uint32_t tid : store_->activity.futexThreads(addr)) {
    const int i = indexOfTid(tid);
    if (i < 0) continue;
    const uint64_t seen =
        store_->activity.futexTicks(tid, addr, r, store_->tickTimes, thread(i).endNs);
    if (seen) out.emplace_back(tid, seen);
  }
  return out;
}

InternalWaiter SessionModel::hiddenWait(int index, uint64_t seen, const HiddenTicks &pool,
                                        const TimeRange &r) const {
  const uint64_t tick = info().tickIntervalNs ? info().tickIntervalNs : kDefaultTickNs;
  HiddenInputs t = hiddenInputs(index, r);
  t.seen = seen;
  return hiddenShare(t, pool.seen, pool.asleep, tick);
}

// A thread that runs the function of threads seen on a hidden lock, that no
// tick ever caught asleep in anything, and whose sleeps outside wrapped calls
// are too short to be caught (under half a tick on average) is charged their
// share too. Waits on a hot library lock last microseconds, mostly the
// waker's wake-up of an idle CPU; on a machine with as many busy threads as
// CPUs the sampler takes the CPU a waiter leaves, so the waiter is woken and
// queued behind it before any read: such a thread can go unseen for seconds
// (mutex_loop with rand() on 2 CPUs: 0 to 5 ticks a second catch either
// looper). One caught asleep in anything else is not charged: that is where
// its sleeps went (a condvar waiter among a Rust Mutex's users); nor one with
// longer sleeps, which a tick would have caught (a sibling std::thread that
// slept 50 ms in a call no tick saw did not wait for this lock).
bool SessionModel::unseenPeer(int index, uint64_t addr, const TimeRange &r) const {
  HiddenTicks h = hiddenTicks(index, addr, r);
  if (h.seen || h.asleep) return false;
  return unseenPeerOf(hiddenInputs(index, r),
                      info().tickIntervalNs ? info().tickIntervalNs : kDefaultTickNs);
}

int64_t SessionModel::sleepOutsideWrappedNs(int index, const TimeRange &r) const {
  return std::max<int64_t>(
      0, threadStates(index, r).ns[size_t(FinalState::Sleeping)] - chosenSleepNs(index, r));
}

std::vector<InternalWaiter> SessionModel::internalWaiters(uint32_t objectId,
                                                          const TimeRange &r) const {
  const int idx = indexOfSyncObject(objectId);
  if (idx < 0 || !syncObject(idx).address) return {};
  const uint64_t addr = syncObject(idx).address;
  // Threads seen on the word (a linear pass: a program can have
  // thousands), then, for a lock not a runtime's own, the threads of
  // their start routines that no tick caught asleep (unseenPeer).
  std::vector<HiddenInputs> in;
  std::vector<bool> member(static_cast<size_t>(threadCount()));
  QSet<QString> routines;
  for (const auto &[tid, seen] : hiddenSeen(objectId, r)) {
    const int i = indexOfTid(tid);
    in.push_back(hiddenInputs(i, r));
    in.back().seen = seen;
    member[size_t(i)] = true;
    routines.insert(thread(i).startRoutine);
  }
  const bool own = syncObject(idx).runtimeKind != 0;
  if (!own)
    for (int i = 0; i < threadCount(); i++)
      if (!member[size_t(i)] && !thread(i).startRoutine.isEmpty() &&
          routines.contains(thread(i).startRoutine) && !hiddenTicks(i, addr, r).asleep)
        in.push_back(hiddenInputs(i, r));
  return estimateHiddenWaits(in, own, info().tickIntervalNs);
}

uint64_t SessionModel::internalWaitNs(int index, const TimeRange &r) const {
  const QString &routine = thread(index).startRoutine;
  uint64_t n = 0;
  for (int i = 0; i < syncObjectCount(); i++) {
    const SyncObjectInfo &o = syncObject(i);
    if (o.kind != THREADMON__SYNC_KIND__KIND_INTERNAL || !o.address) continue;
    HiddenTicks own = hiddenTicks(index, o.address, r), pool = own;
    // Never seen on it: not this thread's wait, unless inferred (above).
    if (!own.seen && (routine.isEmpty() || o.runtimeKind || !unseenPeer(index, o.address, r)))
      continue;
    if (!routine.isEmpty() && !o.runtimeKind) {
      const std::lock_guard<std::mutex> lock(poolMutex_);
      if (poolCache_.generation != generation_ || poolCache_.range.t0 != r.t0 ||
          poolCache_.range.t1 != r.t1) {
        poolCache_.pools.clear();
        poolCache_.generation = generation_;
        poolCache_.range = r;
      }
      auto [it, fresh] = poolCache_.pools.try_emplace(PoolKey{routine, o.address});
      if (fresh) {
        for (int k = 0; k < threadCount(); k++) {
          if (thread(k).startRoutine != routine) continue;
          HiddenTicks h = k == index ? own : hiddenTicks(k, o.address, r);
          if (!h.seen) continue;
          it->second.seen += h.seen;
          it->second.asleep += h.asleep;
        }
      }
      pool = it->second;
    }
    n += hiddenWait(index, own.seen, pool, r).waitNs;
  }
  return n;
}

std::vector<StateInterval> SessionModel::spinWaits(int index, const TimeRange &r) const {
  std::vector<StateInterval> out;
  // The runtime's event object the thread slept on most in r.
  uint64_t seen = 0;
  FinalState as = FinalState::Runnable;
  uint32_t object = 0;
  for (int i = 0; i < syncObjectCount(); i++) {
    const SyncObjectInfo &o = syncObject(i);
    FinalState s;
    if (!o.runtimeKind || !o.address || isHeldKind(o.runtimeKind) ||
        !blockedStateOfKind(o.runtimeKind, &s))
      continue;
    // A futex the runtime waits on through syscall(): the thread's exact
    // waits on it, in place of the ticks that saw it there.
    uint64_t on = 0;
    if (o.kind == THREADMON__SYNC_KIND__KIND_FUTEX) {
      for (const WaitRecord &w : waits(o.id, r))
        if (w.waiter == thread(index).tid) on++;
    } else {
      on = hiddenTicks(index, o.address, r).seen;
    }
    if (on > seen) seen = on, as = s, object = o.id;
  }
  if (!seen) return out;
  store_->settle();
  const ThreadTimeline &th = *store_->threads[size_t(index)];
  const int64_t tick = info().tickIntervalNs ? int64_t(info().tickIntervalNs) : kDefaultTickNs;
  for (const StateInterval &iv : intervals(index, r)) {
    if (iv.state != FinalState::Runnable) continue;
    // The readings around it: its yields rose in between (a yield puts a
    // thread back in the run queue: spinning, not preempted work).
    const LwpExtraSeries::Point *a = th.lwpExtra.at(iv.start), *b = th.lwpExtra.at(iv.end);
    if (b && b->t < iv.end) b = th.lwpExtra.after(iv.end - 1);
    if (!b || b->t - iv.end > 2 * tick || (a && b->v[kYields] <= a->v[kYields])) continue;
    out.push_back(StateInterval{iv.start, iv.end, as, object, -1});
  }
  return out;
}

StateTimes SessionModel::threadStatesAttributed(int index, const TimeRange &r) const {
  StateTimes st = threadStates(index, r);
  // Spinning with sched_yield before a runtime's futex wait (libstdc++'s
  // barrier, latch, semaphore, atomic::wait): that wait, from its first spin.
  for (const StateInterval &iv : spinWaits(index, r)) {
    const int64_t d = std::min(iv.end - iv.start, st.ns[size_t(FinalState::Runnable)]);
    st.ns[size_t(FinalState::Runnable)] -= d;
    st.ns[size_t(iv.state)] += d;
  }
  int64_t &asleep = st.ns[size_t(FinalState::Sleeping)];
  for (int i = 0; i < syncObjectCount() && asleep > 0; i++) {
    const SyncObjectInfo &o = syncObject(i);
    if (!o.runtimeKind || !o.address) continue;
    FinalState as;
    if (!blockedStateOfKind(o.runtimeKind, &as)) continue;
    HiddenTicks ticks = hiddenTicks(index, o.address, r);
    if (!ticks.seen) continue;
    int64_t wait = std::min<int64_t>(asleep, int64_t(hiddenWait(index, ticks.seen, ticks, r).waitNs));
    asleep -= wait;
    st.ns[size_t(as)] += wait;
  }
  return st;
}

size_t SessionModel::lwpSampleCount(int index) const {
  return store_->threads[size_t(index)]->lwp.size();
}

int64_t SessionModel::lwpCountedFromNs(int index) const {
  store_->settle();
  const ThreadTimeline &th = *store_->threads[size_t(index)];
  const LwpSeries::Point *p = th.lwp.first();
  return th.countedFromFirstSample && p ? p->t : INT64_MIN;
}

int64_t SessionModel::chosenSleepNs(int index, const TimeRange &r) const {
  return store_->activity.sleepNs(thread(index).tid, r, latestNs());
}

std::array<uint64_t, kAsleepKinds> SessionModel::asleepTicksByKind(int index,
                                                                   const TimeRange &r) const {
  std::array<uint64_t, kAsleepKinds> n{};
  const ThreadInfo &t = thread(index);
  for (int k = 0; k < kAsleepKinds; k++)
    n[size_t(k)] = store_->activity.asleepKindTicks(t.tid, k, r, store_->tickTimes, t.endNs);
  return n;
}

QString SessionModel::objectCallSite(int index, const TimeRange &r) const {
  const SyncObjectInfo &o = syncObject(index);
  if (!o.callSite().isEmpty()) return o.callSite();
  const std::vector<CallSite> sites = callSites(o.id, r);
  const CallSite *site = busiestUnwound(sites);
  return site ? programFrame(site->frames) : QString();
}

QString SessionModel::programFrame(const QStringList &frames) const {
  // "module!function+0xoff (file:line)" -> "module!function".
  auto shortFrame = [](const QString &f) {
    FrameParts p = splitFrame(f);
    p.offset.clear();
    p.location.clear();
    return p.text();
  };
  // The program's own code first: its binary holds the language runtime's
  // templates and std too (a C++20 wait's __platform_wait, Rust's
  // Mutex::lock_contended), which are not where the program called.
  QString exe = QFileInfo(info().exe).fileName();
  QString runtime;
  for (const QString &f : frames) {
    QString module = QFileInfo(splitFrame(f).module).fileName();
    if (exe.isEmpty() || module != exe) continue;
    if (!isRuntimeFrame(f)) return shortFrame(f);
    if (runtime.isEmpty()) runtime = shortFrame(f);
  }
  if (!runtime.isEmpty()) return runtime;
  return frames.isEmpty() ? QString() : shortFrame(frames.first());
}

std::vector<Deadlock> SessionModel::liveDeadlocks() const {
  std::vector<Deadlock> out;
  for (const Deadlock &d : store_->activity.deadlocks())
    if (d.live()) out.push_back(d);
  return out;
}

std::vector<Deadlock> SessionModel::deadlocks() const { return store_->activity.deadlocks(); }

std::vector<Finding> SessionModel::findings(const TimeRange &r) const {
  return computeFindings(*this, r);
}

}  // namespace tmon
