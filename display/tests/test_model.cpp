// Model semantics over synthetic streams whose truth is known: final states
// from switch records and from the schedstat fallback, windows, timeline
// intervals, per-CPU thread time, counter deltas, disorder, memory bound.
#include <QSignalSpy>
#include <QtTest>
#include <algorithm>
#include <random>

#include "counterseries.h"
#include "nearend.h"
#include "podvector.h"
#include "sessionmodel.h"
#include "syncactivity.h"
#include "synthscenarios.h"
#include "threadtimeline.h"

using namespace tmon;
using namespace tmtest;

namespace {

int64_t at(int64_t ms) { return kT0 + ms * kMs; }

// Thread 101: [0,20) on cpu1, [20,40) runnable, [40,50) on cpu0, [50,80)
// blocked on mutex 7, [80,100) on cpu0, exits at 100. Thread 102 (main):
// switched out voluntarily at 0, state letter S until 60 ms then D, to 120.
StreamBuilder switchScenario() {
  StreamBuilder b;
  b.hello(true);
  b.threadStart(102, at(0), "main", "workload!main", false, true);
  b.threadStart(101, at(0), "worker", "workload!worker+0x10");
  b.cpuSwitch(101, at(0), 1, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.cpuSwitch(102, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.cpuSwitch(101, at(20), 1, THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT);
  b.cpuSwitch(101, at(40), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.transition(101, at(50), THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 7);
  b.cpuSwitch(101, at(50), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  // Spinning inside the wrapped lock call: still blocked_mutex.
  b.cpuSwitch(101, at(60), 1, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.cpuSwitch(101, at(61), 1, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.transition(101, at(80), THREADMON__THREAD_STATE__STATE_RUNNING);
  b.cpuSwitch(101, at(80), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.transition(101, at(100), THREADMON__THREAD_STATE__STATE_EXITED);
  b.cpuSwitch(101, at(100), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.threadEnd(101, at(100));
  // 101's CPU clock runs whenever the records put it on a CPU (no steal).
  const uint64_t clock101[] = {0, 10, 20, 20, 20, 30, 30, 31, 31, 41, 51};
  for (int ms = 10; ms <= 120; ms += 10) {
    std::vector<Lwp> l{Lwp{102, 0, 0, 0, 0, 1, 0, 0, 0, 0, ms <= 60 ? 'S' : 'D'}};
    if (ms <= 100)
      l.push_back(Lwp{101, 0, 0, clock101[ms / 10] * kMs, 0, 0, 0, 0, 0, 0, 'R'});
    b.tick(at(ms), l);
  }
  b.goodbye(at(120), 3);
  return b;
}

// No switch records. 201: 5 ms on CPU 1 and 2 ms run-queue per 10 ms tick.
// 202: blocked on cond 9 until 50 ms, then on CPU. 203: 2 ms on CPU per
// tick, letter D. 204: blocked on mutex 7 in [25,35), on CPU otherwise.
StreamBuilder fallbackScenario() {
  StreamBuilder b;
  b.hello(false);
  for (uint32_t tid : {201u, 202u, 203u, 204u}) b.threadStart(tid, at(0), "w", "workload!w");
  b.transition(202, at(0), THREADMON__THREAD_STATE__STATE_BLOCKED_COND, 9);
  b.transition(202, at(50), THREADMON__THREAD_STATE__STATE_RUNNING);
  b.transition(204, at(25), THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 7);
  b.transition(204, at(35), THREADMON__THREAD_STATE__STATE_RUNNING);
  for (int k = 1; k <= 10; k++) {
    uint64_t K = uint64_t(k);
    uint64_t on202 = k <= 5 ? 0 : (K - 5) * 10 * kMs;
    uint64_t on204 = k <= 2 ? K * 10 * kMs : k == 3 ? 25 * kMs : k == 4 ? 30 * kMs : (K - 1) * 10 * kMs;
    std::vector<Lwp> l{
        Lwp{201, K * 4 * kMs, K * kMs, K * 5 * kMs, K * 2 * kMs, K, 2 * K, 3 * K, 0, 1, 'S'},
        Lwp{203, 0, 0, K * 2 * kMs, 0, 0, 0, 0, 0, 0, 'D'},
        Lwp{204, 0, 0, on204, 0, 0, 0, 0, 0, 0, 'R'}};
    if (k > 5) l.push_back(Lwp{202, 0, 0, on202, 0, 0, 0, 0, 0, 0, 'R'});
    std::vector<Cpu> c{Cpu{0, K * 6 * kMs, 0, K * 2 * kMs, K * 2 * kMs, 0, 0, 0, 0},
                       Cpu{1, K * kMs, 0, 0, K * 9 * kMs, 0, 0, 0, 0}};
    std::vector<Sync> s{Sync{7, 10 * K, 2 * K, K * 3 * kMs, uint64_t(k < 5 ? 1 : 4) * kMs, K * kMs}};
    b.tick(at(10 * k), l, c, s);
  }
  b.goodbye(at(100), 0);
  return b;
}

int64_t stateNs(const SessionModel &m, uint32_t tid, FinalState s, TimeRange r) {
  return m.threadStates(m.indexOfTid(tid), r).ns[size_t(s)];
}

// b applied to whole at once, and to another model a frame at a time, each
// derived before the next comes (the live display, a streamed report's
// windows): where tid's time per state differs between them, else empty.
QString steppedDiffers(const StreamBuilder &b, uint32_t tid, SessionModel *whole) {
  b.applyTo(whole);
  SessionModel stepped;
  for (const std::string &f : b.frames()) {
    stepped.applyPayload(reinterpret_cast<const uint8_t *>(f.data()), f.size());
    stepped.settleNow();
  }
  const TimeRange all = whole->resolve(Window::wholeRun());
  QString out;
  for (int k = 0; k < kFinalStateCount; k++) {
    const int64_t w = stateNs(*whole, tid, FinalState(k), all);
    const int64_t s = stateNs(stepped, tid, FinalState(k), all);
    if (w != s)
      out += QStringLiteral("%1: whole %2 ns, stepped %3 ns\n")
                 .arg(finalStateKey(FinalState(k)))
                 .arg(w)
                 .arg(s);
  }
  return out;
}

// A tick at ms whose read of tid (half of its time so far on a CPU, a
// voluntary switch a ms) found it in kstate: 'S' asleep waiting for work
// (in epoll).
void eventLoopTick(StreamBuilder *b, uint32_t tid, int ms, char kstate) {
  Lwp l{tid, 0, 0, uint64_t(ms) * kMs / 2, 0};
  l.vol = uint64_t(ms);
  l.kstate = kstate;
  l.readNs = at(ms);
  if (kstate == 'S') {
    l.asleep = 100;
    l.asleepKind = THREADMON__ASLEEP_KIND__ASLEEP_IO_EVENTS;
  }
  b->tick(at(ms), {l});
}

}  // namespace

// Random transition batches of threads 101-106 (some never started), with
// waits on objects, for the fold's tests: runs of one thread, late,
// duplicate and same-instant times, unknown, exited and futex states. Every
// batch's last entry has no releaser (what a releaser column cut short reads).
std::vector<std::vector<Transition>> randomBatches(unsigned seed,
                                                   const std::vector<uint32_t> &objects) {
  const Threadmon__ThreadState states[] = {
      THREADMON__THREAD_STATE__STATE_RUNNING,       THREADMON__THREAD_STATE__STATE_RUNNING,
      THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX,
      THREADMON__THREAD_STATE__STATE_BLOCKED_COND,  THREADMON__THREAD_STATE__STATE_SLEEPING,
      THREADMON__THREAD_STATE__STATE_BLOCKED_FUTEX, THREADMON__THREAD_STATE__STATE_BLOCKED_SEM,
      THREADMON__THREAD_STATE__STATE_UNKNOWN,       THREADMON__THREAD_STATE__STATE_EXITED};
  std::mt19937 rng(seed);
  std::vector<std::vector<Transition>> batches(30);
  std::vector<int64_t> clock(6, 0);
  for (auto &batch : batches) {
    for (int runs = 1 + int(rng() % 5); runs > 0; runs--) {
      const uint32_t tid = 101 + rng() % 6;
      for (int k = 1 + int(rng() % 90); k > 0; k--) {
        int64_t &c = clock[tid - 101];
        const unsigned r = rng() % 100;
        c += r < 3 ? -int64_t(rng() % 3) * kMs : r < 6 ? 0 : 1 + int64_t(rng() % 500'000);
        Transition e{std::max<int64_t>(at(1), at(5) + c), tid,
                     states[rng() % (rng() % 20 ? 8 : 10)]};
        if (rng() % 4) e.object = objects[rng() % objects.size()];
        if (rng() % 2) e.holder = 101 + rng() % 6;
        e.releaser = rng() % 2 ? 101 + rng() % 6 : 0;
        batch.push_back(e);
      }
    }
    batch.back().releaser = 0;
  }
  return batches;
}

// The newest time of batches.
int64_t newestOf(const std::vector<std::vector<Transition>> &batches) {
  int64_t t = INT64_MIN;
  for (const auto &batch : batches)
    for (const Transition &e : batch) t = std::max(t, e.t);
  return t;
}

// The batches folded, with threads 101-103 started, a tick and a derivation
// after every tenth; releasersShort as StreamBuilder::transitions.
void foldBatches(const std::vector<std::vector<Transition>> &batches, bool releasersShort,
                 SessionModel *m) {
  StreamBuilder b(intoModel(m));
  b.hello(false);
  for (uint32_t tid = 101; tid <= 103; tid++)
    b.threadStart(tid, at(tid == 101 ? 20 : 2), "worker", "app!w");
  int64_t newest = INT64_MIN;
  for (size_t k = 0; k < batches.size(); k++) {
    b.transitions(batches[k].front().t, batches[k], releasersShort);
    for (const Transition &e : batches[k]) newest = std::max(newest, e.t);
    if (k % 10 == 9) {
      b.tick(newest, {});
      m->threadStates(0, m->resolve(Window::wholeRun()));  // derives
    }
  }
  b.goodbye(newestOf(batches) + kMs, 0);
}

// The same waits, field by field (but their object).
void sameWaits(const std::vector<WaitRecord> &a, const std::vector<WaitRecord> &c) {
  QCOMPARE(c.size(), a.size());
  for (size_t k = 0; k < a.size(); k++) {
    QCOMPARE(c[k].start, a[k].start);
    QCOMPARE(c[k].end, a[k].end);
    QCOMPARE(c[k].waiter, a[k].waiter);
    QCOMPARE(c[k].holder, a[k].holder);
    QCOMPARE(c[k].releaser, a[k].releaser);
    QCOMPARE(c[k].state, a[k].state);
    QCOMPARE(c[k].open, a[k].open);
  }
}

class TestModel : public QObject {
  Q_OBJECT

 private slots:
  // The fold's searches from a hint (nearend.h) answer as std::upper_bound
  // does, from every hint, with runs of equal times and times outside the range.
  void upperBoundNearAgreesWithUpperBound() {
    std::mt19937 rng(7);
    const auto id = [](int64_t x) { return x; };
    for (int round = 0; round < 3000; round++) {
      std::vector<int64_t> v(rng() % 40);
      for (int64_t &x : v) x = int64_t(rng() % 30);
      std::sort(v.begin(), v.end());
      for (int64_t t = -2; t < 33; t++) {
        const auto want = std::upper_bound(v.begin(), v.end(), t);
        QCOMPARE(upperBoundNearEnd(v.begin(), v.end(), t, id) - v.begin(), want - v.begin());
        for (size_t h = 0; h <= v.size(); h++)
          QCOMPARE(
              upperBoundNear(v.begin(), v.end(), v.begin() + std::ptrdiff_t(h), t, id) - v.begin(),
              want - v.begin());
      }
    }
  }

  // A series' sample at t found from any of its samples (or none) is the
  // one at(t) finds, at every time around and between them.
  void counterSeriesAtNearAgreesWithAt() {
    std::mt19937 rng(11);
    for (int round = 0; round < 500; round++) {
      CounterSeries<1> cs;
      int64_t t = int64_t(rng() % 5);
      const int n = int(rng() % 30);
      for (int i = 0; i < n; i++, t += 1 + int64_t(rng() % 4)) QVERIFY(cs.add(t, 0, {uint64_t(i)}));
      for (int64_t x = -2; x < t + 2; x++) {
        const CounterSeries<1>::Point *want = cs.at(x);
        QCOMPARE(cs.atNear(x, nullptr), want);
        for (size_t h = 0; h < cs.size(); h++) QCOMPARE(cs.atNear(x, &cs[h]), want);
      }
    }
  }

  // A PodVector keeps its records as a std::vector does across its ways of
  // growing and shrinking: the heap (realloc), its own mapping (mremap from
  // largeblocks::kFrom up), and the moves between them.
  void podVectorKeepsItsRecordsAcrossMappings() {
    std::mt19937 rng(5);
    PodVector<uint64_t> v;
    std::vector<uint64_t> want;
    auto same = [&](const PodVector<uint64_t> &p) {
      return p.size() == want.size() && std::equal(p.begin(), p.end(), want.begin());
    };
    for (int round = 0; round < 6; round++) {
      // Up past a few mappings' doublings (1 MiB of records).
      const size_t n = 1000 + rng() % 140000;
      while (want.size() < n) {
        const uint64_t x = rng();
        want.push_back(x);
        v.push_back(x);
      }
      QVERIFY(same(v));
      const size_t at = rng() % want.size();
      want.insert(want.begin() + std::ptrdiff_t(at), 42);
      v.insert(v.begin() + at, 42);
      QVERIFY(same(v));
      PodVector<uint64_t> copy(v), assigned;
      assigned = v;
      QVERIFY(same(copy) && same(assigned));
      PodVector<uint64_t> moved(std::move(copy));
      QVERIFY(same(moved));
      // Down to a few (back into the heap) or to some thousands (still mapped).
      const size_t keep = round % 2 ? rng() % 100 : 20000 + rng() % 10000;
      want.erase(want.begin() + std::ptrdiff_t(std::min(keep, want.size())), want.end());
      v.erase(v.begin() + std::min(keep, v.size()), v.end());
      v.shrinkToDoubling();
      QVERIFY(same(v));
      QVERIFY(v.capacity() >= v.size() && v.capacity() < 2 * v.size() + 16);
      moved.shrink_to_fit();
      moved.clear();
      moved.shrink_to_fit();
      QVERIFY(moved.empty() && moved.capacity() == 0);
    }
    v.shrink_to_fit();
    QVERIFY(same(v) && v.capacity() == v.size());
  }

  // A batch with every column whole is folded without a bound per column
  // and entry (SessionStore::applyTransitions); one with a column cut
  // short, with them. The same transitions both ways make the same model:
  // the threads' intervals, ends, gaps and sleeps, and every object's waits
  // (closed in their start order, and open), with late, duplicate and
  // same-instant times, unknown, exited and futex states, a thread first
  // seen before its start, and derivations between batches.
  void wholeColumnsFoldAsCutOnes() {
    for (unsigned seed = 1; seed <= 12; seed++) {
      const std::vector<std::vector<Transition>> batches = randomBatches(seed, {1, 2, 3, 4});
      SessionModel whole, cut;
      foldBatches(batches, false, &whole);
      foldBatches(batches, true, &cut);
      QVERIFY2(!whole.hasError() && !cut.hasError(), qPrintable(whole.errorText()));
      QCOMPARE(cut.threadCount(), whole.threadCount());
      const TimeRange r = whole.resolve(Window::wholeRun());
      QCOMPARE(cut.resolve(Window::wholeRun()).t0, r.t0);
      QCOMPARE(cut.resolve(Window::wholeRun()).t1, r.t1);
      for (int i = 0; i < whole.threadCount(); i++) {
        QCOMPARE(cut.thread(i).tid, whole.thread(i).tid);
        QCOMPARE(cut.thread(i).startNs, whole.thread(i).startNs);
        QCOMPARE(cut.thread(i).endNs, whole.thread(i).endNs);
        QCOMPARE(cut.thread(i).eventGaps, whole.thread(i).eventGaps);
        const std::vector<StateInterval> a = whole.intervals(i, r), c = cut.intervals(i, r);
        QCOMPARE(c.size(), a.size());
        for (size_t k = 0; k < a.size(); k++) {
          QCOMPARE(c[k].start, a[k].start);
          QCOMPARE(c[k].end, a[k].end);
          QCOMPARE(c[k].state, a[k].state);
          QCOMPARE(c[k].object, a[k].object);
        }
        QCOMPARE(cut.chosenSleepNs(i, r), whole.chosenSleepNs(i, r));
      }
      size_t waits = 0;
      for (uint32_t object = 1; object <= 4; object++) {
        const std::vector<WaitRecord> a = whole.waits(object, r);
        sameWaits(a, cut.waits(object, r));
        waits += a.size();
      }
      QVERIFY(waits > 20);
      std::vector<WaitRecord> a, c;
      whole.openWaits(&a);
      cut.openWaits(&c);
      sameWaits(a, c);
    }
  }

  // A tid the kernel gives again after its thread ended is a new thread
  // (SessionStore::applyThreadStart): the fold's table by tid (FoldSlot)
  // forgets the old one, so the records after go to the new thread.
  void aReusedTidFoldsIntoItsNewThread() {
    SessionModel m;
    StreamBuilder b(intoModel(&m));
    b.hello(false);
    b.threadStart(101, at(0), "first", "app!a");
    b.transitions(at(1), {Transition{at(1), 101, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 7},
                          Transition{at(2), 101, THREADMON__THREAD_STATE__STATE_RUNNING},
                          Transition{at(3), 101, THREADMON__THREAD_STATE__STATE_EXITED}});
    b.threadEnd(101, at(3));
    b.threadStart(101, at(5), "second", "app!b");
    b.transitions(at(6), {Transition{at(6), 101, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 7},
                          Transition{at(8), 101, THREADMON__THREAD_STATE__STATE_RUNNING}});
    b.tick(at(10), {});
    b.goodbye(at(10), 0);
    QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
    QCOMPARE(m.threadCount(), 2);
    QCOMPARE(m.thread(1).tid, 101u);
    const TimeRange r = m.resolve(Window::wholeRun());
    auto waitsOn7 = [&](int i) {
      std::vector<std::pair<int64_t, int64_t>> spans;
      for (const StateInterval &iv : m.intervals(i, r))
        if (iv.state == FinalState::BlockedMutex) spans.emplace_back(iv.start, iv.end);
      return spans;
    };
    QCOMPARE(waitsOn7(0), (std::vector<std::pair<int64_t, int64_t>>{{at(1), at(2)}}));
    QCOMPARE(waitsOn7(1), (std::vector<std::pair<int64_t, int64_t>>{{at(6), at(8)}}));
  }

  // A closed wait whose object is in SyncActivity's table of slots and
  // whose waits have room is placed without a call (closeWait); the others
  // go by closeWaitSlow. Objects 1 and 257 share a slot, so that their
  // closes alternate between the two; 1 and 2 have one each, and take the
  // first nearly always. The same waits either way.
  void closedWaitsAreTheSameEitherWay() {
    for (unsigned seed = 1; seed <= 12; seed++) {
      SessionModel apart, shared;
      foldBatches(randomBatches(seed, {1, 2}), false, &apart);
      foldBatches(randomBatches(seed, {1, 257}), false, &shared);
      const TimeRange r = apart.resolve(Window::wholeRun());
      for (const auto &[a, s] : {std::pair{1u, 1u}, std::pair{2u, 257u}}) {
        const std::vector<WaitRecord> wa = apart.waits(a, r), ws = shared.waits(s, r);
        QVERIFY(wa.size() > 10);
        sameWaits(wa, ws);
      }
    }
  }

  // The waits read in place (SyncActivity::forEachWaitInOrder, as the
  // exports read them) are waits()' records in its order: over the whole
  // run and over ranges cutting through waits (a run of one start at the
  // range's start, sorted by waiter), with same-instant starts and the
  // open waits merged in.
  void waitsReadInPlaceAreWaitsInOrder() {
    size_t runs = 0, opens = 0;
    for (unsigned seed = 1; seed <= 12; seed++) {
      SessionModel m;
      foldBatches(randomBatches(seed, {1, 2, 3, 4}), false, &m);
      const TimeRange whole = m.resolve(Window::wholeRun());
      const int64_t len = whole.t1 - whole.t0;
      for (const TimeRange &r : {whole, TimeRange{whole.t0 + len / 3, whole.t1},
                                 TimeRange{whole.t0 + len / 5, whole.t0 + len / 2}}) {
        for (uint32_t object = 1; object <= 4; object++) {
          const std::vector<WaitRecord> want = m.waits(object, r);
          std::vector<WaitRecord> got, scratch;
          QVERIFY(m.syncActivity().forEachWaitInOrder(
              object, r, m.latestNs(), &scratch,
              [&got](const WaitRecord &w) { got.push_back(w); }));
          sameWaits(want, got);
          for (size_t k = 1; k < want.size(); k++) runs += want[k].start == want[k - 1].start;
          for (const WaitRecord &w : want) opens += w.open;
        }
      }
    }
    QVERIFY(runs > 10);  // the cases above were met
    QVERIFY(opens > 0);
  }

  void switchRecordsGiveExactStates() {
    SessionModel m;
    switchScenario().applyTo(&m);
    QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
    TimeRange whole = m.resolve(Window::wholeRun());
    QCOMPARE(whole.t0, at(0));
    QCOMPARE(whole.t1, at(120));
    StateTimes st = m.threadStates(m.indexOfTid(101), whole);
    QCOMPARE(st.lifetimeNs, 100 * kMs);
    QCOMPARE(st.ns[size_t(FinalState::OnCpu)], 50 * kMs);
    QCOMPARE(st.ns[size_t(FinalState::Runnable)], 20 * kMs);
    QCOMPARE(st.ns[size_t(FinalState::BlockedMutex)], 30 * kMs);
    QCOMPARE(st.percent(FinalState::OnCpu), 50.0);
    QCOMPARE(st.percent(FinalState::BlockedMutex), 30.0);
    StateTimes main = m.threadStates(m.indexOfTid(102), whole);
    QCOMPARE(main.lifetimeNs, 120 * kMs);
    QCOMPARE(main.ns[size_t(FinalState::Sleeping)], 60 * kMs);
    QCOMPARE(main.ns[size_t(FinalState::IoWait)], 60 * kMs);
    QVERIFY(m.thread(m.indexOfTid(102)).main);
    QCOMPARE(m.thread(m.indexOfTid(101)).endNs, at(100));
    QCOMPARE(m.info().exitStatus, 3);
  }

  // A thread whose ring was full folded its changes from 20 to 60 ms: on a
  // CPU 20-30 (running), then off it, blocked on mutex 1 for 20 ms and
  // asleep for 10. The records alone make 30-60 asleep; what it folded
  // moves the 20 ms of mutex wait back, and nothing else changes.
  void foldedGapsKeepStateTotals() {
    StateTimes plain, folded;
    for (bool withFolds : {false, true}) {
      StreamBuilder b;
      b.hello(true);
      b.threadStart(71, at(0), "worker", "app!w");
      b.cpuSwitch(71, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
      b.transition(71, at(10), THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 1);
      b.cpuSwitch(71, at(10), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
      b.cpuSwitch(71, at(20), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
      b.transition(71, at(20), THREADMON__THREAD_STATE__STATE_UNKNOWN);
      b.cpuSwitch(71, at(30), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
      b.cpuSwitch(71, at(60), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
      b.transition(71, at(60), THREADMON__THREAD_STATE__STATE_RUNNING);
      for (int ms = 10; ms <= 100; ms += 10) {
        uint64_t on = uint64_t(std::min(ms, 10) + std::clamp(ms - 20, 0, 10) + std::max(0, ms - 60));
        Lwp l{71, 0, 0, on * kMs, 0, 0, 0, 0, 0, 0, ms < 60 ? 'S' : 'R'};
        if (withFolds && ms >= 60) {
          l.folded.assign(kWireStates, 0);
          l.folded[THREADMON__THREAD_STATE__STATE_RUNNING] = 10 * kMs;
          l.folded[THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX] = 20 * kMs;
          l.folded[THREADMON__THREAD_STATE__STATE_SLEEPING] = 10 * kMs;
          l.foldedChanges = 3;
        }
        b.tick(at(ms), {l});
      }
      b.goodbye(at(100), 0);
      SessionModel m;
      b.applyTo(&m);
      QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
      (withFolds ? folded : plain) = m.threadStates(m.indexOfTid(71), m.resolve(Window::wholeRun()));
      QCOMPARE(m.info().eventsFolded, uint64_t(withFolds ? 3 : 0));
      QCOMPARE(m.thread(m.indexOfTid(71)).folds.size(), size_t(withFolds ? 5 : 0));
      // The gap the timeline hatches: from the UNKNOWN to the next change.
      std::vector<TimeRange> gaps = m.eventGapSpans(m.indexOfTid(71), m.resolve(Window::wholeRun()));
      QCOMPARE(gaps.size(), size_t(1));
      QCOMPARE(gaps[0].t0, at(20));
      QCOMPARE(gaps[0].t1, at(60));
      // A range that starts inside the gap, or ends in it, still sees it
      // (the search starts at the record going on at its start); one
      // before or after it does not.
      const int index = m.indexOfTid(71);
      for (const TimeRange &r :
           {TimeRange{at(40), at(50)}, TimeRange{at(59), at(100)}, TimeRange{at(0), at(21)}}) {
        gaps = m.eventGapSpans(index, r);
        QCOMPARE(gaps.size(), size_t(1));
        QCOMPARE(gaps[0].t0, at(20));
        QCOMPARE(gaps[0].t1, at(60));
      }
      QVERIFY(m.eventGapSpans(index, TimeRange{at(0), at(20)}).empty());
      QVERIFY(m.eventGapSpans(index, TimeRange{at(60), at(100)}).empty());
    }
    auto ns = [](const StateTimes &st, FinalState f) { return st.ns[size_t(f)]; };
    QCOMPARE(ns(plain, FinalState::BlockedMutex), 10 * kMs);
    QCOMPARE(ns(folded, FinalState::BlockedMutex), 30 * kMs);
    QCOMPARE(ns(plain, FinalState::Sleeping) - ns(folded, FinalState::Sleeping), 20 * kMs);
    QCOMPARE(ns(folded, FinalState::OnCpu), ns(plain, FinalState::OnCpu));
    QCOMPARE(folded.lifetimeNs, plain.lifetimeNs);
  }

  // Thread 73 makes 20 cond waits of 1 ms in [0, 40), running 1 ms before
  // each, then its ring is full (UNKNOWN at 40) until 100: it folds 10 more
  // waits, 40 ms in the cond, and 20 ms running, half of it queued. No
  // switch records: the tick splits its RUNNING time by its counters. Its
  // 30 voluntary switches are under two per wait seen, and no read found it
  // asleep, which once read as never asleep: the 80 ms scaled to the clock
  // and queue ratio, 60 ms on a CPU before the folded waits took their 40,
  // 40 ms against its clock's 30. The waits inside the fold are not seen:
  // the clock's 30 ms stays 30.
  void aFoldedTickIsNotOnACpuBeyondItsClock() {
    StreamBuilder b;
    b.hello(true);
    b.threadStart(73, at(0), "worker", "app!w");
    for (int i = 0; i < 20; i++) {
      b.transition(73, at(2 * i), THREADMON__THREAD_STATE__STATE_RUNNING);
      b.transition(73, at(2 * i + 1), THREADMON__THREAD_STATE__STATE_BLOCKED_COND, 1);
    }
    b.transition(73, at(40), THREADMON__THREAD_STATE__STATE_UNKNOWN);
    b.transition(73, at(100), THREADMON__THREAD_STATE__STATE_RUNNING);
    Lwp first{73, 0, 0, 30 * kMs, 10 * kMs, 30, 0, 0, 0, 0, 'R'};
    first.folded.assign(kWireStates, 0);
    first.folded[THREADMON__THREAD_STATE__STATE_RUNNING] = 20 * kMs;
    first.folded[THREADMON__THREAD_STATE__STATE_BLOCKED_COND] = 40 * kMs;
    first.foldedChanges = 20;
    b.tick(at(100), {first});
    Lwp second = first;
    second.oncpu += 100 * kMs;
    b.tick(at(200), {second});
    b.goodbye(at(200), 0);
    SessionModel m;
    b.applyTo(&m);
    QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
    StateTimes st = m.threadStates(m.indexOfTid(73), TimeRange{at(0), at(100)});
    auto ns = [](const StateTimes &s, FinalState f) { return s.ns[size_t(f)]; };
    const QString got = QStringLiteral("on %1 us, runnable %2 us, cond %3 us")
                            .arg(ns(st, FinalState::OnCpu) / 1000)
                            .arg(ns(st, FinalState::Runnable) / 1000)
                            .arg(ns(st, FinalState::BlockedCond) / 1000);
    QVERIFY2(ns(st, FinalState::OnCpu) <= 30 * kMs + kMs / 10, qPrintable(got));
    QVERIFY2(ns(st, FinalState::OnCpu) >= 29 * kMs, qPrintable(got));
    QCOMPARE(ns(st, FinalState::BlockedCond), 60 * kMs);
  }

  // An LWP's ring was full from 5 to 35 ms; between its samples at 10 and 20
  // it folded 8 ms blocked in a cond (its scheduler parked), none after. A
  // window inside that interval takes its share of the 8 ms, not all of it:
  // user thread 1, on the LWP 18-22 (the mn_barrier capture: a 2.7 ms span
  // read 100% cond), is blocked 2 ms x 8/10.
  void foldedWaitsSpreadOverTheirInterval() {
    StreamBuilder b;
    b.hello(true);
    b.threadStart(81, at(0), "lwp", "app!lwp_main");
    b.userThread(1, at(0), 81, "app!fiber+0x0");
    b.cpuSwitch(81, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
    b.transition(81, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
    b.transition(81, at(5), THREADMON__THREAD_STATE__STATE_UNKNOWN);
    b.userSwitch(81, at(18), 0, 1);
    b.userSwitch(81, at(22), 1, 0);
    b.transition(81, at(35), THREADMON__THREAD_STATE__STATE_RUNNING);
    for (int ms = 10; ms <= 40; ms += 10) {
      Lwp l{81, 0, 0, uint64_t(ms) * kMs, 0, 0, 0, 0, 0, 0, 'R'};
      l.folded.assign(kWireStates, 0);
      l.folded[THREADMON__THREAD_STATE__STATE_BLOCKED_COND] = ms >= 20 ? 8 * kMs : 0;
      l.folded[THREADMON__THREAD_STATE__STATE_RUNNING] =
          uint64_t(std::clamp(ms - 5, 0, 30)) * kMs -
          l.folded[THREADMON__THREAD_STATE__STATE_BLOCKED_COND];
      l.foldedChanges = ms >= 20 ? 2 : 0;
      b.tick(at(ms), {l});
    }
    b.goodbye(at(40), 0);
    SessionModel m;
    b.applyTo(&m);
    QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
    const int lwp = m.indexOfTid(81);
    auto cond = [](const StateTimes &st) { return st.ns[size_t(FinalState::BlockedCond)]; };
    // The whole run, and the interval itself, keep the total.
    QCOMPARE(cond(m.threadStates(lwp, m.resolve(Window::wholeRun()))), 8 * kMs);
    QCOMPARE(cond(m.threadStates(lwp, TimeRange{at(10), at(20)})), 8 * kMs);
    // Halves of it take half each (not all to the one holding the sample).
    QCOMPARE(cond(m.threadStates(lwp, TimeRange{at(10), at(15)})), 4 * kMs);
    QCOMPARE(cond(m.threadStates(lwp, TimeRange{at(15), at(20)})), 4 * kMs);
    QCOMPARE(cond(m.threadStates(lwp, TimeRange{at(20), at(30)})), 0);
    UserThreadStates u = m.userThreadStates(0, m.resolve(Window::wholeRun()));
    QCOMPARE(u.onLwpNs, 4 * kMs);
    QCOMPARE(cond(u.onLwp), 2 * kMs * 8 / 10);
    QCOMPARE(u.onLwp.ns[size_t(FinalState::OnCpu)], 4 * kMs - 2 * kMs * 8 / 10);
  }

  // A user thread on an LWP is in that LWP's state; switched out, it is
  // dispatchable; its life ends when its function returns (USER_DONE).
  void userThreadsTakeTheirLwpsStates() {
    SessionModel m;
    synth::userThreadScenario().applyTo(&m);
    QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
    QCOMPARE(m.userThreadCount(), 2);
    const TimeRange whole = m.resolve(Window::wholeRun());
    const UserThreadInfo &u1 = m.userThread(0);
    QCOMPARE(u1.id, 1u);
    QCOMPARE(u1.doneNs, at(90));
    QCOMPARE(userThreadName(u1), QStringLiteral("fiber"));
    UserThreadInfo cxx;
    cxx.function = QStringLiteral(
        "prog!void boost::context::detail::fiber_entry<boost::context::detail::fiber_record<"
        "boost::context::fiber, main::{lambda(boost::context::fiber&&)#1}> >"
        "(boost::context::detail::transfer_t)+0x0 (fiber_fcontext.hpp:143)");
    QCOMPARE(userThreadName(cxx), QStringLiteral("fiber_entry"));
    UserThreadStates s1 = m.userThreadStates(0, whole);
    QCOMPARE(s1.lifetimeNs, 90 * kMs);
    QCOMPARE(s1.onLwpNs, 50 * kMs);
    QCOMPARE(s1.dispatchableNs, 40 * kMs);
    QCOMPARE(s1.onLwp.ns[size_t(FinalState::OnCpu)], 20 * kMs);
    QCOMPARE(s1.onLwp.ns[size_t(FinalState::Runnable)], 10 * kMs);
    QCOMPARE(s1.onLwp.ns[size_t(FinalState::BlockedMutex)], 20 * kMs);
    QCOMPARE(s1.lwpNs.size(), size_t(1));
    QCOMPARE(s1.lwpNs[0].first, 101u);
    QCOMPARE(s1.lwpNs[0].second, 50 * kMs);
    UserThreadStates s2 = m.userThreadStates(1, whole);
    QCOMPARE(m.userThread(1).doneNs, int64_t(-1));
    QCOMPARE(s2.lifetimeNs, 120 * kMs);  // never done: to the session's end
    QCOMPARE(s2.onLwp.ns[size_t(FinalState::Runnable)], 10 * kMs);
    QCOMPARE(s2.onLwp.ns[size_t(FinalState::OnCpu)], 10 * kMs);
    QCOMPARE(s2.onLwp.ns[size_t(FinalState::BlockedMutex)], 10 * kMs);
    QCOMPARE(s2.dispatchableNs, 90 * kMs);
    // A window clips the spans: [25,65) holds u1's [25,30) and [60,65).
    UserThreadStates w1 = m.userThreadStates(0, TimeRange{at(25), at(65)});
    QCOMPARE(w1.onLwpNs, 10 * kMs);
    QCOMPARE(w1.dispatchableNs, 30 * kMs);
    std::vector<UserSpan> spans = m.userThreadSpans(0, whole);
    QCOMPARE(spans.size(), size_t(2));
    QCOMPARE(spans[1].start, at(60));
    QCOMPARE(spans[1].end, at(90));
  }

  // Events lost on an LWP (its ring was full): from there to its next
  // switch no user thread is on it.
  void lostUserSwitchesChargeNobody() {
    SessionModel fresh;
    StreamBuilder c;
    c.hello(true);
    c.threadStart(101, at(0), "worker", "workload!worker");
    c.userThread(1, at(0), 101, "workload!fiber+0x0");
    c.userSwitch(101, at(10), 0, 1);
    c.userSwitch(101, at(20), 0, 0, THREADMON__USER_SWITCH_KIND__USER_LOST);
    c.userSwitch(101, at(40), 0, 1);
    c.userSwitch(101, at(50), 1, 0);
    c.goodbye(at(60), 0);
    c.applyTo(&fresh);
    QVERIFY2(!fresh.hasError(), qPrintable(fresh.errorText()));
    std::vector<UserSpan> spans = fresh.userThreadSpans(0, TimeRange{at(0), at(60)});
    QCOMPARE(spans.size(), size_t(2));
    QCOMPARE(spans[0].start, at(10));
    QCOMPARE(spans[0].end, at(20));
    QCOMPARE(spans[1].start, at(40));
    QCOMPARE(spans[1].end, at(50));
  }

  // A thread created at 0 that first runs at 30 ms waited for a CPU all
  // that time: it cannot have slept before it ran. One whose first
  // transition precedes its first record (it ran before the records began)
  // gets no such reading.
  void newbornsWaitForTheirFirstCpu() {
    for (bool bornUnderRecords : {true, false}) {
      StreamBuilder b;
      b.hello(true);
      b.threadStart(301, at(0), "late", "app!late");
      if (!bornUnderRecords) b.transition(301, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
      b.cpuSwitch(301, at(30), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
      if (bornUnderRecords) b.transition(301, at(30), THREADMON__THREAD_STATE__STATE_RUNNING);
      b.cpuSwitch(301, at(50), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
      b.transition(301, at(50), THREADMON__THREAD_STATE__STATE_EXITED);
      b.threadEnd(301, at(50));
      b.tick(at(10), {});
      b.tick(at(60), {});
      b.goodbye(at(60), 0);
      SessionModel m;
      b.applyTo(&m);
      const TimeRange whole = m.resolve(Window::wholeRun());
      QCOMPARE(stateNs(m, 301, FinalState::OnCpu, whole), 20 * kMs);
      QCOMPARE(stateNs(m, 301, FinalState::Runnable, whole), bornUnderRecords ? 30 * kMs : 0);
    }
  }

  // Asleep in a call no wrapper sees ([10,50)), woken at 30 and kept off
  // the CPUs until 50: the run-queue counter grew 30 ms by the read at 80,
  // 10 of them the preempted wait [60,70) the records show, so the sleep's
  // last 20 ms were a wait for a CPU. Without read times (older captures)
  // nothing is carved.
  void wakeUpWaitAfterAnUnwrappedSleep() {
    for (bool readSent : {true, false}) {
      StreamBuilder b;
      b.hello(true);
      b.threadStart(401, at(0), "w", "app!w");
      b.cpuSwitch(401, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
      b.transition(401, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
      b.cpuSwitch(401, at(10), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
      b.cpuSwitch(401, at(50), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
      b.cpuSwitch(401, at(60), 0, THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT);
      b.cpuSwitch(401, at(70), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
      b.transition(401, at(100), THREADMON__THREAD_STATE__STATE_EXITED);
      b.cpuSwitch(401, at(100), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
      b.threadEnd(401, at(100));
      auto sample = [&](int ms, uint64_t onMs, uint64_t rqMs) {
        Lwp l{401, 0, 0, onMs * kMs, rqMs * kMs};
        l.kstate = 'R';
        if (readSent) l.readNs = at(ms);
        b.tick(at(ms), {l});
      };
      sample(20, 10, 0);
      sample(80, 30, 30);
      sample(100, 50, 30);
      b.goodbye(at(110), 0);
      SessionModel m;
      b.applyTo(&m);
      const TimeRange whole = m.resolve(Window::wholeRun());
      QCOMPARE(stateNs(m, 401, FinalState::OnCpu, whole), 50 * kMs);
      QCOMPARE(stateNs(m, 401, FinalState::Runnable, whole), (readSent ? 30 : 10) * kMs);
      QCOMPARE(stateNs(m, 401, FinalState::Sleeping, whole), (readSent ? 20 : 40) * kMs);
    }
  }

  // A model fed a frame at a time, derived after each (a streamed report's
  // windows, the live display), reads as one fed all at once. 402 sleeps
  // [5,25) outside wrapped calls and is read asleep at 10 and 20; the read
  // at 30 finds the run-queue counter 12 ms up: the sleep's last 12 ms,
  // [13,25), were a wait for a CPU. That read comes after [5,20) was
  // derived as sleep, and re-splits it though 402 spent none of it on a CPU.
  // So does the switch-in at 25 when it comes after that read (a batch of
  // records sent late): from the sleep's start, not the sample before it.
  void aLateReadResplitsASleepDerivedBeforeIt_data() {
    QTest::addColumn<bool>("switchInLate");
    QTest::newRow("read late") << false;
    QTest::newRow("switch-in late") << true;
  }
  void aLateReadResplitsASleepDerivedBeforeIt() {
    QFETCH(bool, switchInLate);
    StreamBuilder b;
    b.hello(true);
    b.threadStart(402, at(0), "w", "app!w");
    b.cpuSwitch(402, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
    b.transition(402, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
    b.cpuSwitch(402, at(5), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
    auto sample = [&](int ms, uint64_t onMs, uint64_t rqMs, char kstate) {
      Lwp l{402, 0, 0, onMs * kMs, rqMs * kMs};
      l.kstate = kstate;
      l.readNs = at(ms);
      b.tick(at(ms), {l});
    };
    sample(10, 5, 0, 'S');
    sample(20, 5, 0, 'S');
    if (!switchInLate) b.cpuSwitch(402, at(25), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
    sample(30, 10, 12, 'R');
    if (switchInLate) b.cpuSwitch(402, at(25), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
    b.transition(402, at(40), THREADMON__THREAD_STATE__STATE_EXITED);
    b.cpuSwitch(402, at(40), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
    b.threadEnd(402, at(40));
    b.goodbye(at(40), 0);
    SessionModel whole;
    const QString d = steppedDiffers(b, 402, &whole);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    const TimeRange all = whole.resolve(Window::wholeRun());
    QCOMPARE(stateNs(whole, 402, FinalState::Runnable, all), 12 * kMs);
    QCOMPARE(stateNs(whole, 402, FinalState::Sleeping, all), 8 * kMs);
  }

  // A transition that comes after the read closing its sample span (its
  // ring drained late) changes the stolen share of every tick in the span
  // (program code is charged first: clockShare), not only from its tick on.
  // 407 is on a CPU throughout by its records, its clock ran 10 of [10, 30)
  // ms, and it spun in a wrapped call [25, 30).
  void aLateTransitionResplitsItsSampleSpan() {
    StreamBuilder b;
    b.hello(true);
    b.threadStart(407, at(0), "w", "app!w");
    b.cpuSwitch(407, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
    b.transition(407, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
    auto sample = [&](int ms, uint64_t onMs) {
      Lwp l{407, 0, 0, onMs * kMs, 0};
      l.kstate = 'R';
      l.readNs = at(ms);
      b.tick(at(ms), {l});
    };
    sample(10, 10);
    b.tick(at(20), {});
    sample(30, 20);
    b.transition(407, at(25), THREADMON__THREAD_STATE__STATE_BLOCKED_SPIN, 9);
    b.transition(407, at(30), THREADMON__THREAD_STATE__STATE_RUNNING);
    sample(40, 30);
    b.goodbye(at(40), 0);
    SessionModel whole;
    const QString d = steppedDiffers(b, 407, &whole);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    // The 10 ms the clock missed, all in [10, 25) (program code).
    const TimeRange all = whole.resolve(Window::wholeRun());
    QCOMPARE(stateNs(whole, 407, FinalState::Stolen, all), 10 * kMs);
  }

  // Switch records lost distrust every thread's records from the newest
  // record before their batch (SessionStore::applySwitches): that changes
  // the split of the whole sample span holding it, also in a model that
  // derived the span before the batch came. 408 is the probe's thread in
  // the capture mn_barrier-2 of test_mn_barrier_bound (its records, times
  // in us): its first sample, read at 21.77 ms, came after its newest
  // record (21.02 ms), where the lost records' gap went; its sample span
  // runs from its start. The gap once re-derived only from itself, and the
  // span before it kept the split made without it: the live view and a
  // streamed report read 0.9 ms less on a CPU than a whole read.
  void lostRecordsResplitTheirSampleSpan() {
    auto us = [](int64_t t) { return kT0 + t * 1000; };
    StreamBuilder b;
    b.hello(true);
    b.threadStart(408, us(1024), "probe", "app!sampler");
    b.threadStart(409, us(0), "w", "app!w");
    b.cpuSwitch(409, us(500), 1, THREADMON__SWITCH_KIND__SWITCH_IN);
    b.cpuSwitch(408, us(914), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
    b.cpuSwitch(408, us(1105), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
    b.cpuSwitch(408, us(10784), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
    b.cpuSwitch(408, us(10858), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
    b.cpuSwitch(408, us(21020), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
    Lwp probe{408, 0, 0, 1'097'000, 3'977'000, 2, 0};
    probe.kstate = 'R';
    probe.readNs = us(21770);
    b.tick(us(21026), {probe, Lwp{409, 0, 0, 20'000'000, 0}});
    // The probe's last batch: 1,803 records lost before it.
    b.cpuSwitches(us(22789),
                  {Switch{us(22789), 408, 0, THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT},
                   Switch{us(30802), 408, 0, THREADMON__SWITCH_KIND__SWITCH_IN},
                   Switch{us(32500), 409, 1, THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT}},
                  1803, true);
    b.tick(us(32505), {Lwp{409, 0, 0, 30'000'000, 0}});
    probe = Lwp{408, 0, 0, 5'563'000, 41'870'000, 3, 1};
    probe.kstate = 'R';
    probe.readNs = us(71297);
    b.tick(us(71288), {probe, Lwp{409, 0, 0, 60'000'000, 0}});
    b.goodbye(us(82848), 0);
    SessionModel whole;
    const QString d = steppedDiffers(b, 408, &whole);
    QVERIFY2(d.isEmpty(), qPrintable(d));
  }

  // The time after the last tick (to the Goodbye) without a sample
  // continues the split of the tick before it, also in a model derived
  // frame by frame: there the tail is derived alone, after the ticks before
  // it were (it once read as sleep). 403 runs program code throughout,
  // half on a CPU and half queued by each read.
  void aTailWithoutASampleContinuesTheLastSplit() {
    StreamBuilder b;
    b.hello(false);
    b.threadStart(403, at(0), "w", "app!w");
    b.transition(403, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
    for (int ms = 10; ms <= 30; ms += 10) {
      Lwp l{403, 0, 0, uint64_t(ms / 2) * kMs, uint64_t(ms / 2) * kMs};
      l.kstate = 'R';
      l.readNs = at(ms);
      b.tick(at(ms), {l});
    }
    b.goodbye(at(60), 0);
    SessionModel whole;
    const QString d = steppedDiffers(b, 403, &whole);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    const TimeRange all = whole.resolve(Window::wholeRun());
    // Halves in 1/16383: within 2 us of 30 ms each.
    QVERIFY(std::abs(stateNs(whole, 403, FinalState::OnCpu, all) - 30 * kMs) < 2000);
    QVERIFY(std::abs(stateNs(whole, 403, FinalState::Runnable, all) - 30 * kMs) < 2000);
    QCOMPARE(stateNs(whole, 403, FinalState::Sleeping, all), 0);
  }

  // A read that found the thread asleep waiting for work, come late (its
  // tick after later ones), names the unseen sleep of the ticks after it
  // (up to 1 s) also in a model that had derived them: the walk back to the
  // last read that said something, made short by what the walks before
  // learnt, learns it anew. And of the ticks before it, which no read before
  // named. 404 runs program code, half of each tick on a CPU, switching more
  // often than its wrapped calls explain (it slept).
  void aLateReadNamesTheSleepsAroundIt() {
    StreamBuilder b;
    b.hello(false);
    b.threadStart(404, at(0), "w", "app!w");
    b.transition(404, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
    auto sample = [&](int ms, char kstate) { eventLoopTick(&b, 404, ms, kstate); };
    for (int ms = 10; ms <= 100; ms += 10) sample(ms, 'R');
    sample(55, 'S');
    sample(110, 'R');
    sample(120, 'R');
    b.goodbye(at(120), 0);
    SessionModel whole;
    const QString d = steppedDiffers(b, 404, &whole);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    // Idle, all of it: half of [10, 120) (no read before the one at 55
    // said, so those ticks take its word), nothing sleeping.
    const TimeRange all = whole.resolve(Window::wholeRun());
    QVERIFY(std::abs(stateNs(whole, 404, FinalState::Idle, all) - 55 * kMs) < 10000);
    QCOMPARE(stateNs(whole, 404, FinalState::Sleeping, all), 0);
  }

  // The same past a read that found 409 in another state (D: I/O wait):
  // the ticks before that read, which no read before them named, look past
  // it to the idle read (saidAfter takes only idle), also in a model that
  // derived them before the idle read came (a stepped read of the e2e
  // capture mariadb.tmcap once left them asleep: 1.9 ms of idle whole).
  void aLateIdleReadNamesTicksBeforeAnotherRead() {
    StreamBuilder b;
    b.hello(false);
    b.threadStart(409, at(0), "w", "app!w");
    b.transition(409, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
    auto sample = [&](int ms, char kstate) { eventLoopTick(&b, 409, ms, kstate); };
    for (int ms = 10; ms <= 100; ms += 10) sample(ms, ms == 50 ? 'D' : ms == 90 ? 'S' : 'R');
    b.goodbye(at(100), 0);
    SessionModel whole;
    const QString d = steppedDiffers(b, 409, &whole);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    const TimeRange all = whole.resolve(Window::wholeRun());
    QVERIFY(stateNs(whole, 409, FinalState::Idle, all) >= 20 * kMs);
    QCOMPARE(stateNs(whole, 409, FinalState::Sleeping, all), 0);
  }

  // A model holding more than 30 s thins older counter samples to one a
  // second (CounterSeries::kRecentNs), but only those its states were
  // derived from: a whole read of a long capture derives once, at the end,
  // and read the first 15 s of 405 (half of each tick on a CPU, a sample
  // every tick) from one sample a second, as sleep but for a tick a second.
  void aLongWholeReadDerivesFromEverySample() {
    StreamBuilder b;
    b.hello(false);
    b.threadStart(405, at(0), "w", "app!w");
    b.transition(405, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
    constexpr int kTicks = 4500;  // 45 s
    for (int k = 1; k <= kTicks; k++) {
      Lwp l{405, 0, 0, uint64_t(k) * 5 * kMs, uint64_t(k) * 5 * kMs};
      l.kstate = 'R';
      l.readNs = at(10 * k);
      b.tick(at(10 * k), {l});
    }
    b.goodbye(at(10 * kTicks), 0);
    SessionModel whole;
    const QString d = steppedDiffers(b, 405, &whole);
    QVERIFY2(d.isEmpty(), qPrintable(d));
    const TimeRange all = whole.resolve(Window::wholeRun());
    // Halves in 1/16383: 45 s x 8192/16383, 1.4 ms over 22.5 s.
    const int64_t on = stateNs(whole, 405, FinalState::OnCpu, all);
    QVERIFY2(std::abs(on - 22'501 * kMs) < kMs, qPrintable(QString::number(on)));
  }

  // The kernel charges a thread its CPU clock from when it is picked, before
  // the context switch that writes its switch-in record: a thread switching
  // a thousand times a second spends a measurable share of its CPU time
  // there (glibc's random() lock on a quiet machine: 7%). 403 runs
  // [k, k+0.5) ms and sleeps outside wrapped calls [k+0.5, k+1), k = 0..19;
  // its clock ran 6 ms of each 10 (the records: 5): each sleep's last
  // 0.1 ms is on a CPU. 404: the same, preempted instead of asleep. 405:
  // as 403, its clock the records' own (nothing moves).
  void aSwitchInsOwnTimeIsOnItsCpu() {
    StreamBuilder b;
    b.hello(true);
    const uint32_t tids[] = {403, 404, 405};
    auto ns = [](double ms) { return at(0) + int64_t(ms * double(kMs)); };
    for (uint32_t tid : tids) {
      b.threadStart(tid, at(0), "w", "app!w");
      b.transition(tid, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
    }
    for (int k = 0; k <= 20; k++) {
      for (uint32_t tid : tids) {
        b.cpuSwitch(tid, ns(k), 1, THREADMON__SWITCH_KIND__SWITCH_IN);
        b.cpuSwitch(tid, ns(k + 0.5), 1,
                    tid == 404 ? THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT
                               : THREADMON__SWITCH_KIND__SWITCH_OUT);
      }
      if (k % 10 != 0 || k == 0) continue;
      std::vector<Lwp> reads;
      for (uint32_t tid : tids) {
        const uint64_t clockMs = tid == 405 ? 5 * k / 10 : 6 * k / 10;
        Lwp l{tid, 0, 0, clockMs * kMs, tid == 404 ? 4 * kMs * uint64_t(k / 10) : 0};
        l.kstate = 'R';
        l.readNs = at(k);
        reads.push_back(l);
      }
      b.tick(at(k), reads);
    }
    std::vector<Lwp> last;
    for (uint32_t tid : tids) {
      Lwp l{tid, 0, 0, uint64_t(tid == 405 ? 10.5 * kMs : 12.5 * kMs), 0};
      l.kstate = 'S';
      l.readNs = at(21);
      last.push_back(l);
      b.transition(tid, ns(20.5), THREADMON__THREAD_STATE__STATE_EXITED);
      b.threadEnd(tid, ns(20.5));
    }
    b.tick(at(21), last);
    b.goodbye(at(21), 0);
    SessionModel whole;
    for (uint32_t tid : tids) {
      SessionModel again;
      const QString d = steppedDiffers(b, tid, &again);
      QVERIFY2(d.isEmpty(), qPrintable(d));
    }
    b.applyTo(&whole);
    const TimeRange all = whole.resolve(Window::wholeRun());
    QCOMPARE(stateNs(whole, 403, FinalState::OnCpu, all), 12 * kMs + kMs / 2);
    QCOMPARE(stateNs(whole, 403, FinalState::Sleeping, all), 8 * kMs);
    QCOMPARE(stateNs(whole, 404, FinalState::OnCpu, all), 12 * kMs + kMs / 2);
    QCOMPARE(stateNs(whole, 404, FinalState::Runnable, all), 8 * kMs);
    QCOMPARE(stateNs(whole, 405, FinalState::OnCpu, all), 10 * kMs + kMs / 2);
    QCOMPARE(stateNs(whole, 405, FinalState::Sleeping, all), 10 * kMs);
    // Where: the last tenth of a millisecond before each switch-in, on its CPU.
    std::vector<StateInterval> ivs;
    whole.intervals(whole.indexOfTid(403), TimeRange{ns(3), ns(4)}, &ivs);
    QCOMPARE(int(ivs.size()), 3);
    QCOMPARE(ivs[1].state, FinalState::Sleeping);
    QCOMPARE(ivs[2].state, FinalState::OnCpu);
    QCOMPARE(ivs[2].start, ns(3.9));
    QCOMPARE(ivs[2].cpu, 1);
  }

  // Asleep outside wrapped calls in a syscall that waits for work (the
  // reads' asleep_kind IO_EVENTS or READ) is idle; in another (a futex) it
  // is sleeping. 411: in epoll [10,40), in a futex [45,60). 412: in accept
  // [2,15), [16,19) and [21,40); the read at 20 found it on a CPU, so its
  // tick takes the read before it (accept) for [16,19).
  void idleIsAsleepWaitingForWork() {
    StreamBuilder b;
    b.hello(true);
    auto sample = [&](uint32_t tid, int ms, uint64_t onMs, char kstate,
                      Threadmon__AsleepKind kind) {
      Lwp l{tid, 0, 0, onMs * kMs, 0};
      l.kstate = kstate;
      l.asleep = kstate == 'S' ? 100 : 0;  // a syscall number + 1; its kind is what counts
      l.asleepKind = kind;
      l.readNs = at(ms);
      return l;
    };
    const auto events = THREADMON__ASLEEP_KIND__ASLEEP_IO_EVENTS;
    const auto read = THREADMON__ASLEEP_KIND__ASLEEP_READ;
    const auto other = THREADMON__ASLEEP_KIND__ASLEEP_OTHER;
    for (uint32_t tid : {411u, 412u}) {
      b.threadStart(tid, at(0), "w", "app!w");
      b.cpuSwitch(tid, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
      b.transition(tid, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
    }
    auto sw = [&](uint32_t tid, double ms, bool in) {
      b.cpuSwitch(tid, at(0) + int64_t(ms * double(kMs)), 0,
                  in ? THREADMON__SWITCH_KIND__SWITCH_IN : THREADMON__SWITCH_KIND__SWITCH_OUT);
    };
    sw(411, 10, false), sw(411, 40, true), sw(411, 45, false);
    sw(412, 2, false), sw(412, 15, true), sw(412, 16, false), sw(412, 19, true), sw(412, 21, false);
    b.tick(at(10), {sample(411, 10, 10, 'R', other), sample(412, 10, 2, 'S', read)});
    b.tick(at(20), {sample(411, 20, 10, 'S', events), sample(412, 20, 4, 'R', other)});
    b.tick(at(30), {sample(412, 30, 5, 'S', read)});
    b.tick(at(40), {});
    b.tick(at(50), {sample(411, 50, 15, 'S', other)});
    b.tick(at(60), {});
    for (uint32_t tid : {411u, 412u}) {
      const int end = tid == 411 ? 60 : 40;
      b.transition(tid, at(end), THREADMON__THREAD_STATE__STATE_EXITED);
      b.threadEnd(tid, at(end));
    }
    b.goodbye(at(60), 0);
    SessionModel m;
    b.applyTo(&m);
    const TimeRange whole = m.resolve(Window::wholeRun());
    QCOMPARE(stateNs(m, 411, FinalState::OnCpu, whole), 15 * kMs);
    QCOMPARE(stateNs(m, 411, FinalState::Idle, whole), 30 * kMs);
    QCOMPARE(stateNs(m, 411, FinalState::Sleeping, whole), 15 * kMs);
    QCOMPARE(stateNs(m, 412, FinalState::OnCpu, whole), 5 * kMs);
    QCOMPARE(stateNs(m, 412, FinalState::Idle, whole), 35 * kMs);
    QCOMPARE(stateNs(m, 412, FinalState::Sleeping, whole), 0);
    // The timeline draws it: 411 idle from its switch-out at 10 to 40.
    bool drawn = false;
    for (const StateInterval &iv : m.intervals(m.indexOfTid(411), whole))
      drawn = drawn || (iv.state == FinalState::Idle && iv.start == at(10) && iv.end == at(40));
    QVERIFY(drawn);
  }

  // A busy machine: the reads of an event loop's ticks find it on a CPU or
  // queued for one, not asleep. Such a tick's sleeps take the kind of the
  // last read that found it asleep, up to a second before: 413 was read in
  // epoll at 10, then on a CPU at 20 and 30, and slept [22,28): idle. 414's
  // only read in epoll is 1.19 s before its tick's end: its sleep in
  // [1150,1160) is sleeping.
  void aTicksUnseenSleepTakesTheLastReadsKind() {
    StreamBuilder b;
    b.hello(true);
    auto sample = [&](uint32_t tid, int ms, uint64_t onMs, char kstate) {
      Lwp l{tid, 0, 0, onMs * kMs, 0};
      l.kstate = kstate;
      l.asleep = kstate == 'S' ? 100 : 0;
      l.asleepKind = kstate == 'S' ? THREADMON__ASLEEP_KIND__ASLEEP_IO_EVENTS
                                   : THREADMON__ASLEEP_KIND__ASLEEP_OTHER;
      l.readNs = at(ms);
      return l;
    };
    for (uint32_t tid : {413u, 414u}) {
      b.threadStart(tid, at(0), "evloop", "app!evloop");
      b.cpuSwitch(tid, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
      b.transition(tid, at(0), THREADMON__THREAD_STATE__STATE_RUNNING);
    }
    auto sw = [&](uint32_t tid, int ms, bool in) {
      b.cpuSwitch(tid, at(ms), 0,
                  in ? THREADMON__SWITCH_KIND__SWITCH_IN : THREADMON__SWITCH_KIND__SWITCH_OUT);
    };
    sw(413, 5, false), sw(413, 12, true), sw(413, 22, false), sw(413, 28, true);
    sw(414, 5, false), sw(414, 12, true), sw(414, 1150, false), sw(414, 1160, true);
    b.tick(at(10), {sample(413, 10, 5, 'S'), sample(414, 10, 5, 'S')});
    b.tick(at(20), {sample(413, 20, 13, 'R'), sample(414, 20, 13, 'R')});
    b.tick(at(30), {sample(413, 30, 17, 'R'), sample(414, 30, 23, 'R')});
    b.tick(at(1100), {sample(414, 1100, 1093, 'R')});
    b.tick(at(1200), {sample(414, 1200, 1183, 'R')});
    b.transition(413, at(30), THREADMON__THREAD_STATE__STATE_EXITED);
    b.threadEnd(413, at(30));
    b.transition(414, at(1200), THREADMON__THREAD_STATE__STATE_EXITED);
    b.threadEnd(414, at(1200));
    b.goodbye(at(1200), 0);
    SessionModel m;
    b.applyTo(&m);
    const TimeRange whole = m.resolve(Window::wholeRun());
    QCOMPARE(stateNs(m, 413, FinalState::Idle, whole), 13 * kMs);
    QCOMPARE(stateNs(m, 413, FinalState::Sleeping, whole), 0);
    QCOMPARE(stateNs(m, 414, FinalState::Idle, whole), 7 * kMs);
    QCOMPARE(stateNs(m, 414, FinalState::Sleeping, whole), 10 * kMs);
  }

  void windowsClipToTheThreadsLifetime() {
    SessionModel m;
    switchScenario().applyTo(&m);
    int i = m.indexOfTid(101);
    StateTimes w = m.threadStates(i, TimeRange{at(30), at(60)});
    QCOMPARE(w.lifetimeNs, 30 * kMs);
    QCOMPARE(w.ns[size_t(FinalState::Runnable)], 10 * kMs);
    QCOMPARE(w.ns[size_t(FinalState::OnCpu)], 10 * kMs);
    QCOMPARE(w.ns[size_t(FinalState::BlockedMutex)], 10 * kMs);
    // Last 30 ms of the run: the thread lived 10 ms of it.
    TimeRange last = m.resolve(Window::last(30 * kMs));
    QCOMPARE(last.t0, at(90));
    StateTimes l = m.threadStates(i, last);
    QCOMPARE(l.lifetimeNs, 10 * kMs);
    QCOMPARE(l.percent(FinalState::OnCpu), 100.0);
  }

  void timelineIntervalsAreExact() {
    SessionModel m;
    switchScenario().applyTo(&m);
    std::vector<StateInterval> iv = m.intervals(m.indexOfTid(101), m.resolve(Window::wholeRun()));
    struct E {
      int64_t s, e;
      FinalState st;
      uint32_t obj;
      int cpu;
    };
    std::vector<E> want{{0, 20, FinalState::OnCpu, 0, 1},
                        {20, 40, FinalState::Runnable, 0, -1},
                        {40, 50, FinalState::OnCpu, 0, 0},
                        {50, 80, FinalState::BlockedMutex, 7, -1},
                        {80, 100, FinalState::OnCpu, 0, 0}};
    QCOMPARE(iv.size(), want.size());
    for (size_t k = 0; k < want.size(); k++) {
      QCOMPARE(iv[k].start, at(want[k].s));
      QCOMPARE(iv[k].end, at(want[k].e));
      QCOMPARE(int(iv[k].state), int(want[k].st));
      QCOMPARE(iv[k].object, want[k].obj);
      QCOMPARE(iv[k].cpu, want[k].cpu);
    }
    // A window in the middle is clipped to it.
    std::vector<StateInterval> mid = m.intervals(m.indexOfTid(101), TimeRange{at(45), at(85)});
    QCOMPARE(mid.size(), size_t(3));
    QCOMPARE(mid.front().start, at(45));
    QCOMPARE(mid.back().end, at(85));
    std::vector<BlockedInterval> b = m.blockedOn(7, m.resolve(Window::wholeRun()));
    QCOMPARE(b.size(), size_t(1));
    QCOMPARE(b[0].start, at(50));
    QCOMPARE(b[0].end, at(80));
    QCOMPARE(b[0].thread, m.indexOfTid(101));
    QVERIFY(m.blockedOn(8, m.resolve(Window::wholeRun())).empty());
  }

  // forEachPiece reads the intervals in place: its pieces, merged where
  // one run goes on, are intervals(), for ranges that cut intervals
  // (the fallback's mixed ones, drawn tick by tick, too), fall on their
  // edges, are empty or lie outside a life, and for a thread with none.
  void piecesMergedAreIntervals() {
    for (bool fallback : {false, true}) {
      StreamBuilder b = fallback ? fallbackScenario() : switchScenario();
      b.threadStart(105, at(30), "gone", "workload!gone");  // born and gone at once
      b.threadEnd(105, at(30));
      SessionModel m;
      b.applyTo(&m);
      QVERIFY(m.intervals(m.indexOfTid(105), m.resolve(Window::wholeRun())).empty());
      // Edges (multiples of 10 ms), cuts inside intervals and ticks, and
      // times before the start and after the end.
      const std::vector<int64_t> cuts{-5, 0,  3,  10, 12, 17, 20,  25,  33,
                                      45, 50, 55, 61, 80, 99, 100, 120, 130};
      size_t pieces = 0;
      for (int i = 0; i < m.threadCount(); i++) {
        for (int64_t a : cuts) {
          for (int64_t z : cuts) {
            if (z < a) continue;
            const TimeRange r{at(a), at(z)};
            std::vector<StateInterval> merged;
            m.settledTimeline(i).forEachPiece(r, m.tickTimes(), [&](const StateInterval &iv) {
              QVERIFY(iv.start < iv.end);
              QVERIFY(iv.start >= r.t0 && iv.end <= r.t1);
              QVERIFY(merged.empty() || merged.back().end == iv.start);
              pieces++;
              if (!merged.empty() && sameRun(merged.back(), iv))
                merged.back().end = iv.end;
              else
                merged.push_back(iv);
            });
            const std::vector<StateInterval> want = m.intervals(i, r);
            QCOMPARE(merged.size(), want.size());
            for (size_t k = 0; k < want.size(); k++) {
              QCOMPARE(merged[k].start, want[k].start);
              QCOMPARE(merged[k].end, want[k].end);
              QCOMPARE(int(merged[k].state), int(want[k].state));
              QCOMPARE(merged[k].object, want[k].object);
              QCOMPARE(merged[k].cpu, want[k].cpu);
            }
            if (a == z) QVERIFY(want.empty());
          }
        }
      }
      QVERIFY(pieces > 0);
    }
  }

  void perCpuThreadTimeFromSwitches() {
    SessionModel m;
    switchScenario().applyTo(&m);
    TimeRange whole = m.resolve(Window::wholeRun());
    std::vector<int64_t> per = m.threadCpuTimes(m.indexOfTid(101), whole);
    QCOMPARE(per.size(), size_t(2));
    QCOMPARE(per[0], 30 * kMs);
    QCOMPARE(per[1], 20 * kMs);
    std::vector<ThreadCpuTime> on1 = m.cpuThreads(1, whole);
    QCOMPARE(on1.size(), size_t(1));
    QCOMPARE(on1[0].thread, m.indexOfTid(101));
    QCOMPARE(on1[0].ns, 20 * kMs);
  }

  void fallbackSplitsTicksBySchedstat() {
    SessionModel m;
    fallbackScenario().applyTo(&m);
    QVERIFY(!m.info().hasSource(THREADMON__SOURCE__SOURCE_PERF_SWITCH));
    TimeRange whole = m.resolve(Window::wholeRun());
    // Fractions are stored in 1/16383 steps: allow 10 us in 100 ms.
    auto near = [](int64_t got, int64_t want) { return std::llabs(got - want) <= 10'000; };
    QVERIFY(near(stateNs(m, 201, FinalState::OnCpu, whole), 50 * kMs));
    QVERIFY(near(stateNs(m, 201, FinalState::Runnable, whole), 20 * kMs));
    QVERIFY(near(stateNs(m, 201, FinalState::Sleeping, whole), 30 * kMs));
    QCOMPARE(stateNs(m, 202, FinalState::BlockedCond, whole), 50 * kMs);
    QCOMPARE(stateNs(m, 202, FinalState::OnCpu, whole), 50 * kMs);
    QVERIFY(near(stateNs(m, 203, FinalState::OnCpu, whole), 20 * kMs));
    QVERIFY(near(stateNs(m, 203, FinalState::IoWait, whole), 80 * kMs));
    QCOMPARE(stateNs(m, 204, FinalState::BlockedMutex, whole), 10 * kMs);
    QCOMPARE(stateNs(m, 204, FinalState::OnCpu, whole), 90 * kMs);
    // The timeline shows each tick as on-CPU, then runnable, then the rest.
    std::vector<StateInterval> iv = m.intervals(m.indexOfTid(201), TimeRange{at(10), at(20)});
    QCOMPARE(iv.size(), size_t(3));
    QCOMPARE(int(iv[0].state), int(FinalState::OnCpu));
    QCOMPARE(iv[0].cpu, 1);
    QVERIFY(near(iv[0].end, at(15)));
    QCOMPARE(int(iv[1].state), int(FinalState::Runnable));
    QVERIFY(near(iv[1].end, at(17)));
    QCOMPARE(int(iv[2].state), int(FinalState::Sleeping));
    QCOMPARE(iv[2].end, at(20));
    std::vector<int64_t> per = m.threadCpuTimes(m.indexOfTid(201), whole);
    QVERIFY(near(per[1], 50 * kMs));
    QCOMPARE(per[0], int64_t(0));
  }

  void fallbackLagIsNoSleep() {
    // No switch records. 205 always runs or waits for a CPU (letter R, no
    // voluntary switch), but its schedstat lags: each tick's on-CPU and
    // queue deltas cover 8 of its 10 ms. That is no sleep: the tick splits
    // 3:1. 206 has the same counters but was asleep at each read and
    // switched voluntarily: the missing 2 ms per tick are sleep.
    StreamBuilder b;
    b.hello(false);
    for (uint32_t tid : {205u, 206u}) b.threadStart(tid, at(0), "w", "workload!w");
    for (int k = 1; k <= 10; k++) {
      uint64_t K = uint64_t(k);
      b.tick(at(10 * k), {Lwp{205, 0, 0, K * 6 * kMs, K * 2 * kMs, 0, 0, 0, 0, 0, 'R'},
                          Lwp{206, 0, 0, K * 6 * kMs, K * 2 * kMs, K, 0, 0, 0, 0, 'S'}});
    }
    b.goodbye(at(100), 0);
    SessionModel m;
    b.applyTo(&m);
    TimeRange whole = m.resolve(Window::wholeRun());
    auto near = [](int64_t got, int64_t want) { return std::llabs(got - want) <= 10'000; };
    QVERIFY(near(stateNs(m, 205, FinalState::OnCpu, whole), 75 * kMs));
    QVERIFY(near(stateNs(m, 205, FinalState::Runnable, whole), 25 * kMs));
    QCOMPARE(stateNs(m, 205, FinalState::Sleeping, whole), int64_t(0));
    QVERIFY(near(stateNs(m, 206, FinalState::OnCpu, whole), 60 * kMs));
    QVERIFY(near(stateNs(m, 206, FinalState::Runnable, whole), 20 * kMs));
    QVERIFY(near(stateNs(m, 206, FinalState::Sleeping, whole), 20 * kMs));
  }

  // The findings' bins take their busy shares in one pass: each the same as
  // asking for its window alone, samples sparse or not, edges off samples.
  void cpuBusySharesMatchEachWindow() {
    StreamBuilder b;
    b.hello(false);
    for (int t = 0; t <= 200; t += 30) {
      const uint64_t T = uint64_t(t);
      b.tick(at(t), {}, {Cpu{0, T * 600000, 0, T * 100000, T * 300000, 0, 0, 0, 0},
                         Cpu{1, T * T * 1000, 0, 0, T * 1000000, T * 5000, 0, 0, 0}});
    }
    SessionModel m;
    b.applyTo(&m);
    for (const TimeRange r : {TimeRange{at(0), at(200)}, TimeRange{at(-15), at(230)},
                              TimeRange{at(7), at(8)}, TimeRange{at(5), at(5)}}) {
      for (int64_t width : {int64_t(1), 7 * kMs, 50 * kMs, 1000 * kMs}) {
        if (r.length() / width > 100000) continue;
        const std::vector<double> shares = m.cpuBusyShares(r, width);
        QCOMPARE(shares.size(), size_t((r.length() + width - 1) / width));
        for (size_t k = 0; k < shares.size(); k++) {
          const int64_t s = r.t0 + int64_t(k) * width;
          QCOMPARE(shares[k], m.cpuBusyShare(TimeRange{s, std::min(r.t1, s + width)}));
        }
      }
    }
  }

  void counterDeltasUseTheWindowEdges() {
    SessionModel m;
    fallbackScenario().applyTo(&m);
    TimeRange r{at(20), at(60)};
    LwpDelta d = m.lwpDelta(m.indexOfTid(201), r);
    QCOMPARE(d.userNs, uint64_t(16 * kMs));
    QCOMPARE(d.systemNs, uint64_t(4 * kMs));
    QCOMPARE(d.oncpuNs, uint64_t(20 * kMs));
    QCOMPARE(d.runqueueNs, uint64_t(8 * kMs));
    QCOMPARE(d.volCtxsw, uint64_t(4));
    QCOMPARE(d.involCtxsw, uint64_t(8));
    QCOMPARE(d.minflt, uint64_t(12));
    QCOMPARE(d.sleepNs, 12 * kMs);
    CpuDelta c0 = m.cpuDelta(0, r);
    QCOMPARE(c0.user, uint64_t(24 * kMs));
    QCOMPARE(c0.idle, uint64_t(8 * kMs));
    QCOMPARE(c0.total(), uint64_t(40 * kMs));
    // Whole run: /proc/stat's baseline is the first sample, not boot.
    QCOMPARE(m.cpuDelta(1, m.resolve(Window::wholeRun())).idle, uint64_t(81 * kMs));
    int s = m.indexOfSyncObject(7);
    QVERIFY(s >= 0);
    SyncDelta sd = m.syncDelta(s, r);
    QCOMPARE(sd.acquisitions, uint64_t(40));
    QCOMPARE(sd.contentions, uint64_t(8));
    QCOMPARE(sd.waitNs, uint64_t(12 * kMs));
    QCOMPARE(sd.maxWaitNs, uint64_t(4 * kMs));
    QVERIFY(sd.maxWaitInWindow);
    QVERIFY(!m.syncDelta(s, TimeRange{at(60), at(90)}).maxWaitInWindow);
    std::vector<TickPoint> tp = m.ticks(TimeRange{at(20), at(50)});
    QCOMPARE(tp.size(), size_t(4));
    QCOMPARE(tp[1].contentions, 2u);
    QCOMPARE(tp[1].waitNs, uint64_t(3 * kMs));
    // Over [10, 30] ms: CPU 0 busy 16 of 20 ms, CPU 1 busy 2 of 20 ms.
    QVERIFY(std::fabs(m.cpuBusyShare(TimeRange{at(10), at(30)}) - 0.45) < 1e-9);
    // Before the first /proc/stat sample nothing is known.
    QCOMPARE(m.cpuBusyShare(TimeRange{at(0), at(10)}), -1.0);
    QVERIFY(std::fabs(tp[1].runqueueThreads - 0.2f) < 1e-6f);  // 201 waits 2 ms per 10 ms
    QCOMPARE(tp[1].threadsInR, uint16_t(1));
  }

  void sparseCpuSamplesAreInterpolated() {
    // The probe reads /proc/stat only every 5th tick: CPU 0 is busy 40 ms
    // (30 user, 10 system) of every 50 ms, CPU 1 idle.
    StreamBuilder b;
    b.hello(false);
    for (int k = 1; k <= 20; k++) {
      std::vector<Cpu> c;
      if (k % 5 == 0) {
        uint64_t K = uint64_t(k / 5);
        c = {Cpu{0, 1000 * kMs + K * 30 * kMs, 0, K * 10 * kMs, K * 10 * kMs, 0, 0, 0, 0},
             Cpu{1, 0, 0, 0, 2000 * kMs + K * 50 * kMs, 0, 0, 0, 0}};
      }
      b.tick(at(10 * k), {}, c);
    }
    b.goodbye(at(200), 0);
    SessionModel m;
    b.applyTo(&m);
    QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
    // Between the samples at 50 and 100 ms: 2/5 of their delta, not 0.
    CpuDelta d = m.cpuDelta(0, TimeRange{at(60), at(80)});
    QCOMPARE(d.user, uint64_t(12 * kMs));
    QCOMPARE(d.system, uint64_t(4 * kMs));
    QCOMPARE(d.idle, uint64_t(4 * kMs));
    QCOMPARE(d.total(), uint64_t(20 * kMs));
    QCOMPARE(m.cpuDelta(1, TimeRange{at(60), at(80)}).idle, uint64_t(20 * kMs));
    // Across a sample: [70, 130] is 3/5 of one delta plus 3/5 of the next.
    QCOMPARE(m.cpuDelta(0, TimeRange{at(70), at(130)}).user, uint64_t(36 * kMs));
    QVERIFY(std::fabs(m.cpuBusyShare(TimeRange{at(60), at(80)}) - 0.4) < 1e-9);
    QVERIFY(std::fabs(m.cpuBusyShare(TimeRange{at(123), at(131)}) - 0.4) < 1e-6);
    // Before the first sample it is the baseline (/proc/stat counts from boot).
    QCOMPARE(m.cpuDelta(0, TimeRange{at(0), at(50)}).total(), uint64_t(0));
    QCOMPARE(m.cpuBusyShare(TimeRange{at(10), at(40)}), -1.0);
    QCOMPARE(m.cpuDelta(0, TimeRange{at(20), at(70)}).user, uint64_t(12 * kMs));
    // After the last sample (200 ms) the counters hold.
    QCOMPARE(m.cpuDelta(0, TimeRange{at(180), at(300)}).user, uint64_t(12 * kMs));
    QCOMPARE(m.cpuDelta(0, TimeRange{at(200), at(300)}).total(), uint64_t(0));
    // The whole run counts from the first sample to the last.
    QCOMPARE(m.cpuDelta(0, m.resolve(Window::wholeRun())).user, uint64_t(90 * kMs));
  }

  void disorderAndDuplicatesGiveTheSameAnswer() {
    StreamBuilder b = switchScenario();
    SessionModel inOrder;
    b.applyTo(&inOrder);
    std::vector<std::string> frames = b.frames();
    for (unsigned seed : {1u, 2u, 3u}) {
      std::vector<std::string> shuffled = frames;
      shuffled.insert(shuffled.end(), frames.begin() + 3, frames.begin() + 12);  // duplicates
      std::mt19937 rng(seed);
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      SessionModel m;
      size_t half = shuffled.size() / 2;
      for (size_t k = 0; k < shuffled.size(); k++) {
        if (k == half) m.threadStates(0, m.resolve(Window::wholeRun()));  // settle midway
        m.applyPayload(reinterpret_cast<const uint8_t *>(shuffled[k].data()), shuffled[k].size());
      }
      QVERIFY(!m.hasError());
      QCOMPARE(m.threadCount(), inOrder.threadCount());
      TimeRange whole = inOrder.resolve(Window::wholeRun());
      QCOMPARE(m.resolve(Window::wholeRun()).t1, whole.t1);
      for (uint32_t tid : {101u, 102u}) {
        StateTimes a = inOrder.threadStates(inOrder.indexOfTid(tid), whole);
        StateTimes c = m.threadStates(m.indexOfTid(tid), whole);
        QCOMPARE(c.lifetimeNs, a.lifetimeNs);
        for (int s = 0; s < kFinalStateCount; s++) QCOMPARE(c.ns[size_t(s)], a.ns[size_t(s)]);
      }
    }
  }

  // The CPU budget's steps: the latest is its state, kept once among the
  // notices (a long run would fill the banner and the cap), and counted.
  void budgetStepsKeepTheLatest() {
    SessionModel m;
    StreamBuilder b(intoModel(&m));
    const char *texts[] = {
        "perf events off (THREADMON_PERF=0): states split by schedstat per tick",
        "the probe's thread used 9.00% of a core (THREADMON_BUDGET 5%): less detail, step 1 of 8",
        "the probe's thread used 6.00% of a core (THREADMON_BUDGET 5%): less detail, step 2 of 8",
        "switch records resumed",
        "the probe's thread used 1.00% of a core (THREADMON_BUDGET 5%): detail restored, "
        "step 1 of 8",
    };
    for (int i = 0; i < 20; i++) {
      for (const char *text : texts) {
        if (i && text == texts[0]) continue;
        b.notice(0, text);
      }
    }
    QCOMPARE(m.info().detailSteps, 60);
    const QStringList &notes = m.info().notices;
    QCOMPARE(notes.count(QString::fromUtf8(texts[0])), 1);
    QCOMPARE(notes.size(), 22);  // once the perf note, 20 resumes, the latest step
    QCOMPARE(notes.filter(QStringLiteral("THREADMON_BUDGET")),
             QStringList{QString::fromUtf8(texts[4])});
  }

  void unknownThreadsAreCreatedOnFirstSight() {
    StreamBuilder b;
    b.hello(true);
    b.cpuSwitch(555, at(5), 1, THREADMON__SWITCH_KIND__SWITCH_IN);
    b.tick(at(10), {Lwp{555, 0, 0, 5 * kMs, 0}});
    b.tick(at(20), {Lwp{555, 0, 0, 15 * kMs, 0}});
    SessionModel m;
    b.applyTo(&m);
    int i = m.indexOfTid(555);
    QVERIFY(i >= 0);
    QCOMPARE(m.thread(i).startNs, at(5));
    StateTimes st = m.threadStates(i, m.resolve(Window::wholeRun()));
    QCOMPARE(st.lifetimeNs, 15 * kMs);  // live: known up to the newest tick
    QCOMPARE(st.ns[size_t(FinalState::OnCpu)], 15 * kMs);
  }

  void startingAttributesAreNoChange() {
    // The probe sends a thread's inherited attributes at its start time;
    // descriptions sent again after a capture gap repeat them: neither is
    // a change the program made, a later different value is.
    StreamBuilder b;
    b.hello(true);
    b.threadStart(300, at(5), "worker", "prog!work");
    b.threadAttr(300, at(5), "worker", 3 /* SCHED_BATCH */, 4, {1});
    b.threadAttr(300, at(40), "worker", 3, 4, {1});
    b.tick(at(50), {Lwp{300, 0, 0, 5 * kMs, 0}});
    SessionModel m;
    b.applyTo(&m);
    int i = m.indexOfTid(300);
    QVERIFY(i >= 0);
    QCOMPARE(m.thread(i).policy, 3);
    QCOMPARE(m.thread(i).nice, 4);
    QCOMPARE(m.thread(i).affinity, std::vector<uint64_t>{1});
    QCOMPARE(m.thread(i).attrChanges, 0);
    StreamBuilder later;
    later.threadAttr(300, at(60), "worker", 3, 7, {1});
    later.threadAttr(300, at(70), "renamed", 3, 7, {1});
    later.applyTo(&m);
    QCOMPARE(m.thread(i).nice, 7);
    QCOMPARE(m.thread(i).name, QStringLiteral("renamed"));
    QCOMPARE(m.thread(i).attrChanges, 2);
  }

  void changedIsCoalesced() {
    StreamBuilder b = fallbackScenario();
    SessionModel m;
    QSignalSpy spy(&m, &SessionModel::changed);
    for (int k = 0; k < 20; k++) b.applyTo(&m);
    QCOMPARE(spy.count(), 0);
    QVERIFY(spy.wait(1000));
    QTest::qWait(150);
    QCOMPARE(spy.count(), 1);
  }

  void memoryStaysBoundedForLongBusySessions() {
    // 100 CPU-bound threads on 2 CPUs with switch records (the default on
    // Linux): each gets a 1 ms slice every 50 ms, blocks on a mutex for 1 ms
    // 5 times a second, and has a counter sample every 10 ms tick.
    // 10 simulated minutes, extrapolated to an hour.
    constexpr int kThreads = 100;
    constexpr int64_t kTick = 10 * kMs;
    SessionModel m;
    StreamBuilder b(intoModel(&m));
    b.hello(true);
    std::vector<Switch> switches;
    std::vector<Transition> blocks;
    Tick tick;
    auto runTicks = [&](int64_t from, int64_t count) {
      for (int64_t k = from; k < from + count; k++) {
        int64_t t = at(0) + k * kTick;
        switches.clear();
        int slot = 0;
        for (int i = 0; i < kThreads; i++) {
          if ((k + i) % 5 != 0) continue;
          int64_t in = t - kTick + (slot / 2) * kMs;  // 20 threads share the tick, 2 CPUs
          for (int e = 0; e < 2; e++)
            switches.push_back({in + e * kMs, uint32_t(1000 + i), uint32_t(slot % 2),
                                e == 0 ? THREADMON__SWITCH_KIND__SWITCH_IN
                                       : THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT});
          slot++;
        }
        b.cpuSwitches(t - kTick, switches);
        if (k % 20 == 0) {  // every 200 ms each thread blocks for 1 ms
          blocks.clear();
          for (int i = 0; i < kThreads; i++) {
            blocks.push_back(
                {t - 2 * kMs, uint32_t(1000 + i), THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 1});
            blocks.push_back(
                {t - 1 * kMs, uint32_t(1000 + i), THREADMON__THREAD_STATE__STATE_RUNNING, 1});
          }
          b.transitions(t - 2 * kMs, blocks);
        }
        tick.t = t;
        tick.lwps.clear();
        for (int i = 0; i < kThreads; i++) {
          const uint64_t oncpu = uint64_t(k) * 1'000'000;
          Lwp l{uint32_t(1000 + i), oncpu, 0, oncpu, uint64_t(k) * 9'000'000};
          l.invol = uint64_t(k);
          l.kstate = 'R';
          tick.lwps.push_back(l);
        }
        b.tick(tick);
        if (k % 100 == 0) m.threadStates(0, m.resolve(Window::last(1'000'000'000)));  // a UI refresh
      }
    };
    constexpr int64_t kMinute = 6000;  // ticks
    runTicks(1, 2 * kMinute);
    size_t after2 = m.memoryBytes();
    runTicks(2 * kMinute + 1, 8 * kMinute);
    size_t after10 = m.memoryBytes();
    double perHour = double(after2) + double(after10 - after2) / 8.0 * 58.0;
    qInfo("model memory: %.1f MiB after 10 simulated minutes, %.1f MiB projected for an hour",
          double(after10) / 1048576.0, perHour / 1048576.0);
    QVERIFY(perHour < 512.0 * 1048576.0);
    // Old data is still exact: 20 ms of slices and 5 ms blocked per second
    // (a block overlapping a slice takes that time from it).
    TimeRange sec{at(0) + 60'000 * kMs, at(0) + 61'000 * kMs};
    StateTimes st = m.threadStates(m.indexOfTid(1050), sec);
    QCOMPARE(st.lifetimeNs, 1000 * kMs);
    QCOMPARE(st.ns[size_t(FinalState::BlockedMutex)], 5 * kMs);
    QVERIFY(st.ns[size_t(FinalState::OnCpu)] >= 15 * kMs);
    QVERIFY(st.ns[size_t(FinalState::OnCpu)] <= 20 * kMs);
    QCOMPARE(st.ns[size_t(FinalState::OnCpu)] + st.ns[size_t(FinalState::Runnable)], 995 * kMs);
  }
};

QTEST_GUILESS_MAIN(TestModel)
#include "test_model.moc"
