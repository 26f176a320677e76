#include "modelinvariants.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sessionmodel.h"

namespace tmon {

namespace {

constexpr int64_t kDefaultTickNs = 10'000'000;
// /proc's times are in clock ticks (USER_HZ, 100 a second): a counter read
// at two moments is off by up to one of them at each end.
constexpr int64_t kClockTickNs = 10'000'000;

QString ms(int64_t ns) { return QString::number(double(ns) / 1e6, 'f', 1) + " ms"; }

QString threadName(const ThreadInfo &t) {
  return QStringLiteral("thread %1 (%2)").arg(t.tid).arg(t.name.isEmpty() ? "?" : t.name);
}

QString objectName(const SyncObjectInfo &o) {
  return QStringLiteral("object %1 (%2)").arg(o.id).arg(o.name());
}

// The thread's life inside r, as the model knows it.
int64_t lifeIn(const SessionModel &m, const ThreadInfo &t, const TimeRange &r) {
  const int64_t end = t.endNs >= 0 ? t.endNs : m.latestNs();
  return std::max<int64_t>(0, std::min(r.t1, end) - std::max(r.t0, t.startNs));
}

void checkThread(const SessionModel &m, int i, const TimeRange &r, int64_t tick,
                 const StateTimes *attributed, QStringList *out) {
  const ThreadInfo &t = m.thread(i);
  const int64_t life = lifeIn(m, t, r);
  for (const StateTimes &st :
       {m.threadStates(i, r), attributed ? *attributed : m.threadStatesAttributed(i, r)}) {
    int64_t sum = 0;
    for (int64_t ns : st.ns) sum += ns;
    if (sum > st.lifetimeNs + tick)
      out->append(QStringLiteral("%1: its states sum to %2, past its known life of %3")
                      .arg(threadName(t), ms(sum), ms(st.lifetimeNs)));
    if (st.lifetimeNs > r.length() + tick)
      out->append(QStringLiteral("%1: a life of %2 in a window of %3")
                      .arg(threadName(t), ms(st.lifetimeNs), ms(r.length())));
  }
  if (!m.lwpSampleCount(i)) return;
  const LwpDelta d = m.lwpDelta(i, r);
  // Counters read at ticks, in clock ticks: a tick and two clock ticks;
  // and a reading's clock can lag the read itself (the sampler preempted in
  // between on a loaded machine: 51 ms in 2 s seen at a load of 22 on 2
  // CPUs): a twentieth of the span more.
  const struct {
    const char *what;
    uint64_t ns;
  } times[] = {{"user + system time", d.userNs + d.systemNs},
               {"on-CPU time", d.oncpuNs},
               {"run-queue time", d.runqueueNs},
               {"on-CPU + run-queue time", d.oncpuNs + d.runqueueNs}};
  // The readings differenced may lie a little outside the window (a tick's
  // reads lag its time on a loaded machine): the counters fit between them.
  const int64_t span = std::max(life, d.readSpanNs);
  const int64_t slack = tick + 2 * kClockTickNs + span / 20;
  for (const auto &x : times)
    if (int64_t(x.ns) > span + slack) {
      out->append(QStringLiteral("%1: LWP %2 of %3 in a life of %4 in the window")
                      .arg(threadName(t), QLatin1String(x.what), ms(int64_t(x.ns)), ms(span)));
      return;  // one line a thread: the others follow from the same cause
    }
}

// An object's waits of `waitsNs` by `waiters` threads cannot exceed their
// time in the span.
bool waitsFit(int64_t waitsNs, size_t waiters, int64_t spanNs, int64_t tick, const QString &object,
              QStringList *out) {
  const int64_t n = std::max<int64_t>(1, int64_t(waiters));
  if (waitsNs <= n * (spanNs + tick)) return true;
  out->append(QStringLiteral("%1: waits of %2 in a window of %3 with %4 waiters")
                  .arg(object, ms(waitsNs), ms(spanNs))
                  .arg(waiters));
  return false;
}

// One thread at a time holds a mutex, a spin lock or a rwlock for writing
// (the holds timed): their sum fits in the run. The figure is an estimate
// from timed holds (within 15% on microsecond holds: docs/benchmarks.md,
// "Holds after a condition wait"), so the bound is twice the run: what
// breaks it is a weight gone wrong (a memcached lock read 51 s of hold in
// 5 s when its timed holds were all atypical ones).
void holdsFit(const SyncObjectInfo &o, int64_t holdNs, int64_t runNs, int64_t tick,
              QStringList *out) {
  const bool exclusive = o.kind == THREADMON__SYNC_KIND__KIND_MUTEX ||
                         o.kind == THREADMON__SYNC_KIND__KIND_SPIN ||
                         o.kind == THREADMON__SYNC_KIND__KIND_RWLOCK;
  if (exclusive && holdNs > 2 * runNs + tick)
    out->append(QStringLiteral("%1: held %2 in a run of %3 (one holder at a time)")
                    .arg(objectName(o), ms(holdNs), ms(runNs)));
}

// The counter times every wait that ended by the last sample; the waits
// time them from their transitions. Apart by more than a tick a wait (each
// wait's end is seen at a tick at worst), one of them is wrong. A session
// that stops watching (attach's detach) may count the waits still going on
// then: the counter lies between the closed waits and those plus the open
// ones. A thread whose ring was full folded its waits (counted them, on
// their objects' counters too, but recorded none): the counter may be above
// the waits by as much as the threads folded in waits, on any object.
void counterAgrees(int64_t counted, int64_t closed, int64_t open, int64_t folded, uint64_t count,
                   int64_t tick, const QString &object, QStringList *out) {
  const int64_t apart = counted < closed                   ? closed - counted
                        : counted > closed + open + folded ? counted - closed - open - folded
                                                           : 0;
  if (!count || apart <= int64_t(count + 1) * tick || apart <= closed / 20 + tick) return;
  const QString foldedToo =
      folded ? QStringLiteral(" (and %1 folded in waits on any object)").arg(ms(folded))
             : QString();
  out->append(QStringLiteral("%1: its wait counter says %2, its %3 waits %4%5")
                  .arg(object, ms(counted))
                  .arg(count)
                  .arg(ms(closed), foldedToo));
}

void checkObject(const SessionModel &m, int k, const TimeRange &r, int64_t tick,
                 CounterCheck counters, const ObjectWaitSums *known, int64_t foldedWaitNs,
                 QStringList *out) {
  const SyncObjectInfo &o = m.syncObject(k);
  const SyncDelta d = m.syncDelta(k, r);
  const bool internal = o.kind == THREADMON__SYNC_KIND__KIND_INTERNAL;
  ObjectWaitSums asked;
  if (internal) {
    std::vector<uint32_t> waiters;
    for (const InternalWaiter &w : m.internalWaiters(o.id, r)) waiters.push_back(w.tid);
    std::sort(waiters.begin(), waiters.end());
    asked.waiters = size_t(std::unique(waiters.begin(), waiters.end()) - waiters.begin());
  } else if (!known) {
    WaitSums waits;
    m.waitSums(o.id, r, &waits);
    asked = sumWaits(waits);
  }
  const ObjectWaitSums &sums = known && !internal ? *known : asked;
  // A hidden lock's wait is estimated from its waiters in r alone.
  const bool compare = internal || counters == CounterCheck::Compare;
  if (compare && !waitsFit(int64_t(d.waitNs), sums.waiters, r.length(), tick, objectName(o), out))
    return;
  if (internal) return;
  if (sums.cells != sums.blamed)
    out->append(QStringLiteral("%1: who-blocked-whom sums to %2, its waits to %3")
                    .arg(objectName(o), ms(sums.cells), ms(sums.blamed)));
  // A capture without the object's samples has no counter to compare.
  const bool sampled = d.acquisitions || d.contentions || d.waitNs || d.waitSamples;
  // Over the whole run only: a window's counter adds a hold at its end,
  // however long before the window it began.
  if (counters == CounterCheck::Compare) holdsFit(o, int64_t(d.holdNs), r.length(), tick, out);
  if (compare && sampled && countersComparable(m.info()))
    counterAgrees(int64_t(d.waitNs), sums.recorded, sums.unfinished, foldedWaitNs, sums.count, tick,
                  objectName(o), out);
}

}  // namespace

ObjectWaitSums sumWaits(const WaitSums &waits) {
  ObjectWaitSums s;
  s.waiters = waits.waiters.size();
  s.recorded = waits.recorded;
  s.count = waits.count;
  s.unfinished = waits.unfinished;
  s.blamed = waits.blamed;
  for (const WaitPair &p : waits.cells) s.cells += int64_t(p.waitNs);
  return s;
}

bool countersComparable(const SessionInfo &info) {
  // Cut short (no Goodbye), the reader closes the waits still going on at
  // its end, which no counter saw end. A flight recorder's capture (record
  // --last) keeps the waits of its last window only and the counters of the
  // whole run (recorder/ring.c); a capture with a gap (the probe could not
  // write: probe/sample/frames.c) lost the transitions in it, not the
  // counters. Both say so in a notice (proto/tmnotices.h), which the store
  // flags.
  return info.goodbyeSeen && !info.flightRecorder && !info.captureGap;
}

QStringList checkInvariants(const SessionModel &m, const TimeRange &r, CounterCheck counters,
                            const std::vector<ObjectWaitSums> &known,
                            const std::vector<StateTimes> &attributed) {
  QStringList out;
  const int64_t tick =
      m.info().tickIntervalNs ? int64_t(m.info().tickIntervalNs) : kDefaultTickNs;
  for (int i = 0; i < m.threadCount(); i++)
    checkThread(m, i, r, tick, size_t(i) < attributed.size() ? &attributed[size_t(i)] : nullptr,
                &out);
  int64_t foldedWaitNs = 0;
  if (counters == CounterCheck::Compare)
    for (int i = 0; i < m.threadCount(); i++) foldedWaitNs += m.foldedObjectWaitNs(i, r);
  for (int k = 0; k < m.syncObjectCount(); k++)
    checkObject(m, k, r, tick, counters, size_t(k) < known.size() ? &known[size_t(k)] : nullptr,
                foldedWaitNs, &out);
  if (counters == CounterCheck::WindowOnly) return out;
  // A thread waits on one object at a time: the objects' waits together fit
  // in the threads' lives.
  int64_t lives = 0, waits = 0;
  for (int i = 0; i < m.threadCount(); i++) lives += lifeIn(m, m.thread(i), r) + tick;
  for (int k = 0; k < m.syncObjectCount(); k++) waits += int64_t(m.syncDelta(k, r).waitNs);
  if (waits > lives)
    out.append(QStringLiteral("the objects' waits sum to %1, past the %2 its %3 threads lived")
                   .arg(ms(waits), ms(lives))
                   .arg(m.threadCount()));
  return out;
}

QStringList checkMergedWaits(const std::vector<MergedWaits> &objects, int64_t runNs,
                             int64_t livesNs, size_t threads, int64_t tickNs, bool comparable,
                             int64_t foldedWaitNs) {
  QStringList out;
  const int64_t tick = tickNs ? tickNs : kDefaultTickNs;
  livesNs += int64_t(threads) * tick;
  int64_t waits = 0;
  for (const MergedWaits &o : objects) {
    waits += o.counterNs;
    holdsFit(o.info, o.holdNs, runNs, tick, &out);
    if (!waitsFit(o.counterNs, o.waiters.size(), runNs, tick, objectName(o.info), &out)) continue;
    if (o.hasCounters && comparable)
      counterAgrees(o.counterNs, o.waitsNs - o.openBoundNs, o.openBoundNs, foldedWaitNs, o.pieces,
                    tick, objectName(o.info), &out);
  }
  if (waits > livesNs)
    out.append(QStringLiteral("the objects' waits sum to %1, past the %2 their threads lived")
                   .arg(ms(waits), ms(livesNs)));
  return out;
}

}  // namespace tmon
