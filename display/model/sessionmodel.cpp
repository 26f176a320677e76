#include "sessionmodel.h"

#include <QElapsedTimer>
#include <algorithm>

#include "runtimes.h"
#include "sessionstore.h"

namespace tmon {

namespace {
constexpr int kCoalesceMs = 50;  // at most ~20 changed() per second
// Applying what waited: this much at a time, then back to the event loop.
constexpr qint64 kSliceNs = 8'000'000;
constexpr qint64 kSettleEveryMs = kCoalesceMs;
uint64_t sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

// A CPU's /proc/stat counters at t, from its samples at or before t (a) and
// after it (b). The probe may read /proc/stat only every few ticks: a
// counter at t is interpolated between the samples around it, so a window
// between two samples gets its share. /proc/stat counts from boot: before
// the first sample, the first sample is the baseline; after the last, the
// last holds.
CpuSeries::Values cpuValues(const CpuSeries &s, const CpuSeries::Point *a,
                            const CpuSeries::Point *b, int64_t t) {
  if (!a) return s.first()->v;
  if (!b || t == a->t) return a->v;
  const double frac = double(t - a->t) / double(b->t - a->t);
  CpuSeries::Values v = a->v;
  for (size_t k = 0; k < v.size(); k++)
    v[k] += uint64_t(double(sub(b->v[k], a->v[k])) * frac + 0.5);
  return v;
}

// A thread's counters as read at a sample of each series (all 0 before
// its first).
LwpDelta lwpAt(const LwpSeries::Point *p, const LwpExtraSeries::Point *e) {
  LwpDelta d;
#define TM_LWP_COUNTER(field, number, index, member, ...) d.member = p ? p->v[k##index] : 0;
#define TM_LWP_EXTRA(field, number, index, member, ...) d.member = e ? e->v[k##index] : 0;
#include "counters.def"
  return d;
}

// An object's counters as read at one sample (all 0 before the first).
SyncDelta syncAt(const SyncSeries::Point *p) {
  SyncDelta d;
#define TM_SYNC_COUNTER(field, number, index, member, ...) d.member = p ? p->v[k##index] : 0;
#include "counters.def"
  return d;
}

CpuDelta cpuDeltaOf(const CpuSeries::Values &v0, const CpuSeries::Values &v1) {
  CpuDelta d;
  size_t k = 0;
#define TM_CPU_COUNTER(field, number, member, ...) d.member = sub(v1[k], v0[k]), k++;
#include "counters.def"
  return d;
}

}  // namespace

SessionModel::SessionModel(QObject *parent) : QObject(parent), store_(new SessionStore) {
  coalesce_.setSingleShot(true);
  coalesce_.setInterval(kCoalesceMs);
  // No changed() while frames wait to be applied: the views would start new
  // background reads, hold the feed again and starve the catch-up.
  connect(&coalesce_, &QTimer::timeout, this, [this] {
    if (deferredHead_ >= deferred_.size()) emit changed();
  });
  drain_.setSingleShot(true);
  drain_.setInterval(0);
  connect(&drain_, &QTimer::timeout, this, &SessionModel::drainDeferred);
}

void SessionModel::settleNow(int threads) { store_->settle(threads); }

// Derived as frames are applied: left to the next background read, a second
// of 1,000 threads' frames (what arrives while the findings compute) took
// that read's start 100-150 ms of the GUI thread. Not after every batch: a
// settle visits every thread, and views read at most 20 times a second.
void SessionModel::settleEvery() {
  if (sinceSettle_.isValid() && sinceSettle_.elapsed() < kSettleEveryMs) return;
  store_->settle();
  sinceSettle_.start();
}

void SessionModel::beginBackgroundRead() {
  store_->settle();  // the one lazy write a query makes: done before anyone reads
  readers_++;
}

void SessionModel::endBackgroundRead() {
  if (readers_ > 0 && --readers_ == 0 && deferredHead_ < deferred_.size()) drain_.start();
}

void SessionModel::drainDeferred() {
  if (readers_ > 0) return;
  QElapsedTimer slice;
  slice.start();
  draining_ = true;
  while (deferredHead_ < deferred_.size() && slice.nsecsElapsed() < kSliceNs) {
    Deferred d = std::move(deferred_[deferredHead_++]);
    if (d.frame)
      applyNow(*d.frame);
    else if (!d.error.isEmpty())
      setError(d.error);
    else if (d.end) markEnded();
    else applyPayload(reinterpret_cast<const uint8_t *>(d.payload.constData()), size_t(d.payload.size()));
  }
  settleEvery();
  draining_ = false;
  if (deferredHead_ < deferred_.size()) {
    drain_.start();
  } else {
    deferred_.clear();
    deferredHead_ = 0;
    touch();  // the changed() held back meanwhile
  }
}

SessionModel::~SessionModel() = default;

void SessionModel::touch() {
  if (!filledOffThread_ && !coalesce_.isActive()) coalesce_.start();
}

void SessionModel::apply(Threadmon__Frame &frame) {
  if (deferring()) {
    QByteArray payload(qsizetype(threadmon__frame__get_packed_size(&frame)), '\0');
    threadmon__frame__pack(&frame, reinterpret_cast<uint8_t *>(payload.data()));
    deferred_.push_back({OwnedFrame(), std::move(payload), QString(), false});
    return;
  }
  applyNow(frame);
}

void SessionModel::applyNow(Threadmon__Frame &frame) {
  if (hasError()) return;  // a broken session keeps what it had, unchanged
  QString err = store_->apply(frame);
  framesApplied_++;
  generation_++;
  if (!err.isEmpty()) setError(err);
  if (store_->deadlockFormed) {
    store_->deadlockFormed = false;
    emit deadlockDetected();
  }
  touch();
}

void SessionModel::applyFrames(FrameBatch &frames) {
  size_t i = 0;
  if (!deferring()) {
    QElapsedTimer slice;
    slice.start();
    for (; i < frames.size() && slice.nsecsElapsed() < kSliceNs; ++i) applyNow(*frames[i]);
    if (i > 0) settleEvery();
  }
  if (i == frames.size()) return;
  for (; i < frames.size(); ++i)
    deferred_.push_back({std::move(frames[i]), QByteArray(), QString(), false});
  if (readers_ == 0) drain_.start();
}

bool SessionModel::applyPayload(const uint8_t *data, size_t len) {
  if (deferring()) {
    deferred_.push_back({OwnedFrame(),
                         QByteArray(reinterpret_cast<const char *>(data), qsizetype(len)),
                         QString(), false});
    return !hasError();
  }
  Threadmon__Frame *f = threadmon__frame__unpack(nullptr, len, data);
  if (!f) {
    setError(QStringLiteral("malformed protobuf frame (%1 bytes)").arg(len));
    return false;
  }
  applyNow(*f);
  threadmon__frame__free_unpacked(f, nullptr);
  return !hasError();
}

void SessionModel::markEnded() {
  if (deferring()) {
    deferred_.push_back({OwnedFrame(), QByteArray(), QString(), true});
    return;
  }
  generation_++;
  store_->markEnded();
  touch();
}

void SessionModel::knownFrom(int64_t t) {
  generation_++;
  store_->knownFrom(t);
  touch();
}

std::vector<SessionModel::CarriedSample> SessionModel::samplesBefore(int64_t t) const {
  std::vector<CarriedSample> out;
  for (const auto &th : store_->threads) {
    if (th->info.endNs >= 0 && th->info.endNs < t) continue;
    const LwpSeries::Point *p = th->lwp.at(t - 1);
    // Not sampled before t (its counters did not move; its first reading
    // may be after t, read past the segment's end): its first reading, in
    // the next model, counts from its start, as in a whole read.
    if (!p && th->countersZeroNs() != INT64_MIN && th->countersZeroNs() < t) {
      CarriedSample c;
      c.tid = th->info.tid;
      c.t = th->countersZeroNs();
      c.zeroReading = true;
      out.push_back(std::move(c));
      continue;
    }
    if (!p) continue;
    CarriedSample c{th->info.tid, p->t, p->aux, p->extra, {p->v.begin(), p->v.end()}};
    const ThreadTimeline::WaitBeforeBaseline &w = th->waitBefore;
    c.baselineNs = w.sampleNs;
    if (p->t >= w.droppedFromNs) {  // not a drop found after t
      c.droppedFromNs = w.droppedFromNs;
      c.runqueueDropped = w.runqueueNs;
    }
    out.push_back(std::move(c));
  }
  return out;
}

void SessionModel::carrySamples(const std::vector<CarriedSample> &samples) {
  generation_++;
  for (const CarriedSample &s : samples) {
    if (s.zeroReading) store_->carryZeroReading(s.tid, s.t);
    if (s.v.size() != size_t(kLwpCounters)) continue;
    LwpSeries::Point p{s.t, s.aux, s.extra, {}};
    std::copy(s.v.begin(), s.v.end(), p.v.begin());
    store_->carrySample(s.tid, p, {s.baselineNs, s.droppedFromNs, s.runqueueDropped});
  }
  touch();
}

void SessionModel::setError(const QString &message) {
  if (deferring()) {
    deferred_.push_back(
        {OwnedFrame(), QByteArray(), message.isEmpty() ? QStringLiteral("error") : message, false});
    return;
  }
  if (hasError()) return;
  error_ = message;
  touch();
}

const SessionInfo &SessionModel::info() const { return store_->info; }
int64_t SessionModel::startNs() const { return store_->startNs(); }

int64_t SessionModel::latestNs() const {
  int64_t h = store_->horizon();
  return h == INT64_MIN ? startNs() : std::max(h, startNs());
}

double SessionModel::durationSeconds() const { return double(latestNs() - startNs()) / 1e9; }

TimeRange SessionModel::resolve(const Window &w) const {
  switch (w.kind) {
    case Window::Last: return TimeRange{std::max(startNs(), latestNs() - w.lastNs), latestNs()};
    case Window::Range: return w.range;
    case Window::WholeRun: break;
  }
  return TimeRange{startNs(), latestNs()};
}

int SessionModel::threadCount() const { return int(store_->threads.size()); }
const ThreadInfo &SessionModel::thread(int index) const {
  return store_->threads[size_t(index)]->info;
}
int SessionModel::indexOfTid(uint32_t tid) const {
  return store_->tidIndex.find(tid);
}

namespace {

// Folded time per wire state that fell in r: each sample's growth since the
// one before (the first: since the thread's start) is spread evenly over
// that interval and r takes its overlap's share. A window inside one
// interval (a user thread's span on its LWP) would otherwise be charged the
// whole interval's folded waits, up to its own length.
std::array<int64_t, kWireStates> foldedIn(const std::vector<FoldPoint> &folds, int64_t startNs,
                                          const TimeRange &r) {
  std::array<int64_t, kWireStates> in{};
  auto first = std::upper_bound(folds.begin(), folds.end(), r.t0,
                                [](int64_t x, const FoldPoint &p) { return x < p.t; });
  for (auto it = first; it != folds.end(); ++it) {
    const FoldPoint *before = it == folds.begin() ? nullptr : &*(it - 1);
    const int64_t from = before ? before->t : std::min(startNs, it->t);
    if (from >= r.t1) break;
    const int64_t overlap = std::min(r.t1, it->t) - std::max(r.t0, from);
    if (overlap <= 0) continue;
    const int64_t length = it->t - from;
    for (size_t w = 0; w < in.size(); w++) {
      const uint64_t was = before ? before->ns[w] : 0;
      if (it->ns[w] <= was) continue;
      const int64_t grew = int64_t(it->ns[w] - was);
      in[w] += overlap >= length ? grew : int64_t(double(grew) * double(overlap) / double(length));
    }
  }
  return in;
}

// A gap's time (its ring was full) reads, from the kernel's view, as on a
// CPU, runnable or asleep; what the thread folded says how much of it it
// spent blocked in each wrapped call. That much moves to the blocked
// states, taken from asleep first (a waiter sleeps on its futex), then
// runnable (woken, waiting for a CPU: still in the call), then on a CPU
// (spinning before it slept), never below what it folded asleep itself.
void applyFolds(const ThreadInfo &info, const TimeRange &r, StateTimes *st) {
  if (info.folds.empty()) return;
  const std::array<int64_t, kWireStates> folded = foldedIn(info.folds, info.startNs, r);
  int64_t keepAsleep = folded[THREADMON__THREAD_STATE__STATE_SLEEPING];
  for (int wire = 0; wire < kWireStates; wire++) {
    FinalState to;
    if (wire == THREADMON__THREAD_STATE__STATE_SLEEPING || !finalStateOfWire(wire, &to)) continue;
    int64_t want = folded[size_t(wire)];
    for (FinalState from : {FinalState::Sleeping, FinalState::Runnable, FinalState::OnCpu}) {
      int64_t &have = st->ns[size_t(from)];
      int64_t spare = from == FinalState::Sleeping ? std::max<int64_t>(0, have - keepAsleep) : have;
      int64_t moved = std::min(want, spare);
      have -= moved;
      st->ns[size_t(to)] += moved;
      want -= moved;
    }
  }
}

}  // namespace

namespace {
thread_local SessionModel::StatesMemo *statesMemo = nullptr;
}  // namespace

SessionModel::StatesMemo::StatesMemo(const SessionModel &m, const TimeRange &r)
    : model_(&m), range_(r), entries_(size_t(m.threadCount())) {
  statesMemo = this;
}

SessionModel::StatesMemo::~StatesMemo() {
  statesMemo = nullptr;
}

const SessionModel::StatesMemo::Entry *SessionModel::memoised(int index, const TimeRange &r) const {
  StatesMemo *memo = statesMemo;
  if (!memo || memo->model_ != this || memo->range_.t0 != r.t0 || memo->range_.t1 != r.t1 ||
      size_t(index) >= memo->entries_.size())
    return nullptr;
  StatesMemo::Entry &e = memo->entries_[size_t(index)];
  if (!e.known) {
    store_->settle();
    const ThreadTimeline &th = *store_->threads[size_t(index)];
    e.cpu.assign(size_t(cpuCount()), 0);
    th.stateAndCpuTimes(r, store_->tickTimes, &e.states, &e.cpu);
    applyFolds(th.info, r, &e.states);
    e.known = true;
  }
  return &e;
}

int64_t SessionModel::foldedObjectWaitNs(int index, const TimeRange &r) const {
  const ThreadInfo &info = thread(index);
  if (info.folds.empty()) return 0;
  return objectWaitNs(foldedIn(info.folds, info.startNs, r));
}

StateTimes SessionModel::threadStates(int index, const TimeRange &r) const {
  if (const StatesMemo::Entry *e = memoised(index, r)) return e->states;
  store_->settle();
  StateTimes st;
  const ThreadTimeline &th = *store_->threads[size_t(index)];
  th.stateTimes(r, store_->tickTimes, &st);
  applyFolds(th.info, r, &st);
  return st;
}

std::vector<StateInterval> SessionModel::intervals(int index, const TimeRange &r) const {
  std::vector<StateInterval> out;
  intervals(index, r, &out);
  return out;
}

void SessionModel::intervals(int index, const TimeRange &r, std::vector<StateInterval> *out) const {
  store_->settle();
  out->clear();
  store_->threads[size_t(index)]->intervals(r, store_->tickTimes, out);
}

const ThreadTimeline &SessionModel::settledTimeline(int index) const {
  store_->settle();
  return *store_->threads[size_t(index)];
}

const std::vector<int64_t> &SessionModel::tickTimes() const {
  return store_->tickTimes;
}

bool SessionModel::stateAt(int index, int64_t t, StateInterval *out) const {
  std::vector<StateInterval> v = intervals(index, TimeRange{t, t + 1});
  if (v.empty()) return false;
  *out = v.front();
  return true;
}

LwpDelta SessionModel::lwpDelta(int index, const TimeRange &r) const {
  store_->settle();
  const ThreadTimeline &th = *store_->threads[size_t(index)];
  const LwpSeries::Point *a = th.lwp.at(r.t0), *b = th.lwp.at(r.t1);
  const LwpExtraSeries::Point *ea = th.lwpExtra.at(r.t0), *eb = th.lwpExtra.at(r.t1);
  // Its counters before its first sample (a thread found by an attach):
  // that sample's, so its times start at the attach, not at its birth. The
  // same in a window of a long capture for a thread described before it
  // and not sampled since (asleep all along: its counters did not move):
  // its values at the window's start are not in the window, and zero would
  // count its whole life as the window's. From INT64_MIN: the counters as
  // read (the streamed report's sums).
  if ((th.countedFromFirstSample || !th.baselineZero) && r.t0 != INT64_MIN) {
    if (!a) a = th.lwp.first();
    if (!ea) ea = th.lwpExtra.first();
  }
  LwpDelta d = lwpBetween(lwpAt(a, ea), lwpAt(b, eb));
  if (b) d.readSpanNs = lwpReadNs(*b) - (a ? lwpReadNs(*a) : th.info.startNs);
  TimeRange life = th.lifetime();
  int64_t alive = std::max<int64_t>(0, std::min(r.t1, life.t1) - std::max(r.t0, life.t0));
  d.sleepNs = std::max<int64_t>(0, alive - int64_t(d.oncpuNs) - int64_t(d.runqueueNs));
  return d;
}

std::vector<int64_t> SessionModel::threadCpuTimes(int index, const TimeRange &r) const {
  if (const StatesMemo::Entry *e = memoised(index, r)) return e->cpu;
  store_->settle();
  std::vector<int64_t> per(size_t(cpuCount()), 0);
  store_->threads[size_t(index)]->cpuTimes(r, &per);
  return per;
}

int SessionModel::userThreadCount() const { return store_->users.count(); }
const UserThreadInfo &SessionModel::userThread(int index) const {
  return store_->users.entry(index).info;
}

std::vector<UserSpan> SessionModel::userThreadSpans(int index, const TimeRange &r) const {
  return store_->users.spans(index, r, latestNs());
}

UserThreadStates SessionModel::userThreadStates(int index, const TimeRange &r) const {
  UserThreadStates out;
  const UserThreadInfo &u = userThread(index);
  const int64_t end = u.doneNs >= 0 ? u.doneNs : latestNs();
  const TimeRange life{std::max(r.t0, std::max(u.createdNs, startNs())), std::min(r.t1, end)};
  if (u.createdNs == INT64_MAX || life.t1 <= life.t0) return out;
  std::unordered_map<uint32_t, int64_t> perLwp;
  // On an LWP: whatever that LWP did meanwhile (docs/format.md, "User threads").
  for (const UserSpan &s : userThreadSpans(index, life)) {
    const int64_t len = s.end - s.start;
    out.onLwpNs += len;
    perLwp[s.tid] += len;
    const int lwp = indexOfTid(s.tid);
    if (lwp < 0) continue;
    StateTimes st = threadStatesAttributed(lwp, TimeRange{s.start, s.end});
    for (size_t k = 0; k < st.ns.size(); k++) out.onLwp.ns[k] += st.ns[k];
    out.onLwp.lifetimeNs += st.lifetimeNs;
  }
  out.dispatchableNs = std::max<int64_t>(0, (life.t1 - life.t0) - out.onLwpNs);
  out.lifetimeNs = out.onLwp.lifetimeNs + out.dispatchableNs;
  out.lwpNs.assign(perLwp.begin(), perLwp.end());
  std::sort(out.lwpNs.begin(), out.lwpNs.end(),
            [](const auto &a, const auto &b) { return a.second > b.second; });
  return out;
}

int SessionModel::cpuCount() const { return store_->cpuCount(); }

CpuDelta SessionModel::cpuDelta(int cpu, const TimeRange &r) const {
  if (cpu < 0 || size_t(cpu) >= store_->cpus.size()) return CpuDelta{};
  const CpuSeries &s = store_->cpus[size_t(cpu)];
  if (!s.first()) return CpuDelta{};
  auto values = [&s](int64_t t) { return cpuValues(s, s.at(t), s.after(t), t); };
  return cpuDeltaOf(values(r.t0), values(r.t1));
}

double SessionModel::cpuBusyShare(const TimeRange &r) const {
  uint64_t total = 0, idle = 0;
  // CPUs without samples add nothing: only those with samples are asked.
  for (int c = 0; c < int(store_->cpus.size()); c++) {
    CpuDelta d = cpuDelta(c, r);
    total += d.total();
    idle += d.idle + d.iowait;
  }
  return total ? double(total - idle) / double(total) : -1.0;
}

std::vector<double> SessionModel::cpuBusyShares(const TimeRange &r, int64_t width) const {
  const int64_t len = r.length();
  const size_t n = width > 0 ? size_t(len / width + (len % width != 0)) : 0;
  std::vector<uint64_t> total(n, 0), idle(n, 0);
  for (const CpuSeries &s : store_->cpus) {
    if (!s.first()) continue;
    size_t next = 0;  // the first sample after the time asked: times only grow
    auto values = [&](int64_t t) {
      while (next < s.size() && s[next].t <= t) next++;
      return cpuValues(s, next ? &s[next - 1] : nullptr, next < s.size() ? &s[next] : nullptr, t);
    };
    std::array<uint64_t, 8> from = values(r.t0);
    for (size_t k = 0; k < n; k++) {
      const std::array<uint64_t, 8> to = values(k + 1 < n ? r.t0 + int64_t(k + 1) * width : r.t1);
      const CpuDelta d = cpuDeltaOf(from, to);
      total[k] += d.total();
      idle[k] += d.idle + d.iowait;
      from = to;
    }
  }
  std::vector<double> share(n);
  for (size_t k = 0; k < n; k++)
    share[k] = total[k] ? double(total[k] - idle[k]) / double(total[k]) : -1.0;
  return share;
}

std::vector<ThreadCpuTime> SessionModel::cpuThreads(int cpu, const TimeRange &r) const {
  store_->settle();
  std::vector<ThreadCpuTime> out;
  std::vector<int64_t> per;
  for (size_t i = 0; i < store_->threads.size(); i++) {
    per.assign(per.size(), 0);
    store_->threads[i]->cpuTimes(r, &per);
    if (size_t(cpu) < per.size() && per[size_t(cpu)] > 0)
      out.push_back(ThreadCpuTime{int(i), per[size_t(cpu)]});
  }
  std::sort(out.begin(), out.end(), [](const ThreadCpuTime &x, const ThreadCpuTime &y) {
    return x.ns != y.ns ? x.ns > y.ns : x.thread < y.thread;
  });
  return out;
}

int SessionModel::syncObjectCount() const { return int(store_->sync.size()); }
const SyncObjectInfo &SessionModel::syncObject(int index) const {
  return store_->sync[size_t(index)].info;
}
int SessionModel::indexOfSyncObject(uint32_t id) const {
  auto it = store_->syncIndex.find(id);
  return it == store_->syncIndex.end() ? -1 : it->second;
}

SyncDelta SessionModel::syncDelta(int index, const TimeRange &r) const {
  const SyncSeries &s = store_->sync[size_t(index)].series;
  const SyncSeries::Point *a = s.at(r.t0), *b = s.at(r.t1);
  if (!b) return SyncDelta{};
  SyncDelta d = syncBetween(syncAt(a), syncAt(b));
  if (syncObject(index).kind == THREADMON__SYNC_KIND__KIND_INTERNAL) {
    // No wrapper times a hidden lock: its wait is the time its waiters are
    // estimated to have lost to it (asleep on it and in system calls for
    // it), its contentions the ticks that saw a thread blocked on it.
    d.waitNs = d.contentions = 0;
    for (const InternalWaiter &w : internalWaiters(syncObject(index).id, r)) {
      d.waitNs += w.waitNs + w.kernelNs;
      d.contentions += w.samples;
    }
  }
  return d;
}

std::vector<int> SessionModel::syncObjectsByWait(const TimeRange &r) const {
  struct Active {
    SyncDelta d;
    int index;
    bool housekeeping;
  };
  std::vector<Active> act;
  for (int i = 0; i < syncObjectCount(); i++) {
    SyncDelta d = syncDelta(i, r);
    if (d.acquisitions || d.contentions || d.waitNs || d.waitSamples)
      act.push_back(Active{d, i, housekeepingObject(i, r)});
  }
  std::stable_sort(act.begin(), act.end(), [](const Active &x, const Active &y) {
    if (x.housekeeping != y.housekeeping) return y.housekeeping;
    if (x.d.waitNs != y.d.waitNs) return x.d.waitNs > y.d.waitNs;
    return x.d.contentions > y.d.contentions;
  });
  std::vector<int> out;
  for (const Active &a : act) out.push_back(a.index);
  return out;
}

bool SessionModel::housekeepingThread(int index) const {
  return index >= 0 && index < threadCount() && !runtimeHousekeeping(thread(index)).isEmpty();
}

bool SessionModel::housekeepingObject(int index, const TimeRange &r) const {
  const SyncObjectInfo &o = syncObject(index);
  if (o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL) {
    std::vector<InternalWaiter> ws = internalWaiters(o.id, r);
    return !ws.empty() && std::all_of(ws.begin(), ws.end(), [this](const InternalWaiter &w) {
      return housekeepingThread(indexOfTid(w.tid));
    });
  }
  std::vector<WaitRecord> ws = waits(o.id, r);
  return !ws.empty() && std::all_of(ws.begin(), ws.end(), [this](const WaitRecord &w) {
    return housekeepingThread(indexOfTid(w.waiter));
  });
}

std::vector<TimeRange> SessionModel::eventGapSpans(int index, const TimeRange &r) const {
  std::vector<TimeRange> out;
  store_->threads[size_t(index)]->eventGapSpans(r, &out);
  return out;
}

std::vector<BlockedInterval> SessionModel::blockedOn(uint32_t objectId, const TimeRange &r) const {
  store_->settle();
  std::vector<BlockedInterval> out;
  std::vector<StateInterval> iv;
  for (size_t i = 0; i < store_->threads.size(); i++) {
    iv.clear();
    store_->threads[i]->intervals(r, store_->tickTimes, &iv);
    for (const StateInterval &s : iv)
      if (s.object == objectId && isBlockedState(s.state))
        out.push_back(BlockedInterval{int(i), s.start, s.end, s.state});
  }
  std::sort(out.begin(), out.end(), [](const BlockedInterval &x, const BlockedInterval &y) {
    return x.start != y.start ? x.start < y.start : x.thread < y.thread;
  });
  return out;
}

std::vector<TickPoint> SessionModel::ticks(const TimeRange &r) const {
  const auto &tt = store_->tickTimes;
  auto lo = std::lower_bound(tt.begin(), tt.end(), r.t0);
  auto hi = std::upper_bound(tt.begin(), tt.end(), r.t1);
  return std::vector<TickPoint>(store_->points.begin() + (lo - tt.begin()),
                                store_->points.begin() + (hi - tt.begin()));
}

size_t SessionModel::memoryBytes() const { return sizeof(*this) + store_->bytes(); }

void SessionModel::keepDetailFor(int64_t keepNs) {
  store_->keepDetailFor(keepNs);
}

int64_t SessionModel::detailFromNs() const {
  return store_->detailFrom();
}

void SessionModel::countSwitchesIn(int64_t from, int64_t to) {
  store_->countSwitchesIn(from, to);
}

}  // namespace tmon
