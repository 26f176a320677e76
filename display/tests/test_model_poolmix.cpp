// The state mix of a pool per pixel column (what the timeline draws for a
// pool row), on a session whose truth is known: 4 worker threads on CPU
// from 0 to 100 ms, 3 of them blocked on mutex 7 in [40, 80); the session
// runs to 120 ms. Also the pools the timeline shares with the Threads view.
#include <QtTest>

#include "poolmix.h"
#include "pools.h"
#include "sessionmodel.h"
#include "synthstream.h"

using namespace tmon;
using namespace tmtest;

namespace {

int64_t at(int64_t ms) { return kT0 + ms * kMs; }

constexpr uint32_t kMain = 300;
const uint32_t kWorkers[] = {301, 302, 303, 304};
bool blocks(uint32_t tid) { return tid != 304; }

// folded: worker 304's ring was full in [20, 30): its states there are
// folded totals (the probe's STATE_UNKNOWN).
StreamBuilder poolScenario(bool folded = false) {
  StreamBuilder b;
  b.hello(true, 4);
  b.threadStart(kMain, at(0), "server", "", false, true);
  b.cpuSwitch(kMain, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  for (uint32_t tid : kWorkers) {
    const QByteArray name = QStringLiteral("worker-%1").arg(tid - 300).toUtf8();
    b.threadStart(tid, at(0), name.constData(), "server!worker_main+0x24");
    b.cpuSwitch(tid, at(0), tid - 301, THREADMON__SWITCH_KIND__SWITCH_IN);
  }
  if (folded) {
    b.transition(kWorkers[3], at(20), THREADMON__THREAD_STATE__STATE_UNKNOWN);
    b.transition(kWorkers[3], at(30), THREADMON__THREAD_STATE__STATE_RUNNING);
  }
  for (uint32_t tid : kWorkers) {
    if (!blocks(tid)) continue;
    b.transition(tid, at(40), THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 7, kWorkers[3]);
    b.cpuSwitch(tid, at(40), tid - 301, THREADMON__SWITCH_KIND__SWITCH_OUT);
    b.transition(tid, at(80), THREADMON__THREAD_STATE__STATE_RUNNING);
    b.cpuSwitch(tid, at(80), tid - 301, THREADMON__SWITCH_KIND__SWITCH_IN);
  }
  for (uint32_t tid : kWorkers) {
    b.transition(tid, at(100), THREADMON__THREAD_STATE__STATE_EXITED);
    b.cpuSwitch(tid, at(100), tid - 301, THREADMON__SWITCH_KIND__SWITCH_OUT);
    b.threadEnd(tid, at(100));
  }
  for (int ms = 10; ms <= 120; ms += 10) {
    std::vector<Lwp> l{Lwp{kMain, 0, 0, 0, 0, 1, 0, 0, 0, 0, 'S'}};
    if (ms <= 100)
      for (uint32_t tid : kWorkers) {
        const int64_t on = blocks(tid) ? std::min(ms, 40) + std::max(0, ms - 80) : ms;
        l.push_back(Lwp{tid, 0, 0, uint64_t(on) * kMs, 0, 0, 0, 0, 0, int(tid - 301), 'R'});
      }
    b.tick(at(ms), l);
  }
  b.goodbye(at(120), 0);
  return b;
}

std::vector<int> workerIndices(const SessionModel &m) {
  std::vector<int> v;
  for (uint32_t tid : kWorkers) v.push_back(m.indexOfTid(tid));
  return v;
}

// Column c's cover of state s is `want` (to float precision).
void expectCover(const StateMix &mix, int c, FinalState s, double want) {
  const double got = mix.at(c, s);
  QVERIFY2(std::abs(got - want) < 1e-3,
           qPrintable(QStringLiteral("column %1, %2: %3, expected %4")
                          .arg(c).arg(finalStateKey(s)).arg(got).arg(want)));
}

double columnSum(const StateMix &mix, int c) {
  double sum = 0;
  for (int s = 0; s < kFinalStateCount; ++s) sum += mix.column(c)[s];
  return sum;
}

}  // namespace

class TestModelPoolMix : public QObject {
  Q_OBJECT

 private slots:
  // 10 ms columns: 4 on CPU, then 3 blocked and 1 on CPU, then 4 on CPU
  // again; nothing after the workers exit.
  void wholeColumnsCountThreadsPerState() {
    SessionModel m;
    poolScenario().applyTo(&m);
    QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
    const StateMix mix = stateMix(m, workerIndices(m), {at(0), at(120)}, 12);
    QCOMPARE(mix.threads, 4);
    QCOMPARE(mix.columns, 12);
    for (int c = 0; c < 12; ++c) {
      const bool alive = c < 10, blocked = c >= 4 && c < 8;
      expectCover(mix, c, FinalState::BlockedMutex, blocked ? 3 : 0);
      expectCover(mix, c, FinalState::OnCpu, !alive ? 0 : blocked ? 1 : 4);
      QVERIFY2(std::abs(columnSum(mix, c) - (alive ? 4 : 0)) < 1e-3,
               qPrintable(QString::number(c)));
    }
  }

  // 12.5 ms columns over [0, 100): the block begins 2.5 ms into column 3
  // and ends 5 ms into column 6, so those columns hold it in part.
  void partColumnsHoldTheirShare() {
    SessionModel m;
    poolScenario().applyTo(&m);
    const StateMix mix = stateMix(m, workerIndices(m), {at(0), at(100)}, 8);
    expectCover(mix, 2, FinalState::OnCpu, 4);
    expectCover(mix, 3, FinalState::BlockedMutex, 3 * 0.8);
    expectCover(mix, 3, FinalState::OnCpu, 1 + 3 * 0.2);
    expectCover(mix, 4, FinalState::BlockedMutex, 3);
    expectCover(mix, 6, FinalState::BlockedMutex, 3 * 0.4);
    expectCover(mix, 6, FinalState::OnCpu, 1 + 3 * 0.6);
    expectCover(mix, 7, FinalState::OnCpu, 4);
    for (int c = 0; c < 8; ++c) QVERIFY(std::abs(columnSum(mix, c) - 4) < 1e-3);
  }

  // A thread's folded states count for the columns they cover, by its
  // share (the timeline hatches that much of the pool's row); none without.
  void foldedStatesByColumn() {
    SessionModel m;
    poolScenario(true).applyTo(&m);
    QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
    StateMix mix = stateMix(m, workerIndices(m), {at(0), at(120)}, 12);
    for (int c = 0; c < 12; ++c)
      QVERIFY2(std::abs(mix.folded[size_t(c)] - (c == 2 ? 1 : 0)) < 1e-3,
               qPrintable(QStringLiteral("column %1: %2").arg(c).arg(mix.folded[size_t(c)])));
    mix = stateMix(m, workerIndices(m), {at(0), at(100)}, 8);  // 12.5 ms columns
    QVERIFY(std::abs(mix.folded[1] - 0.4) < 1e-3);  // [12.5, 25): 5 ms of it
    QVERIFY(std::abs(mix.folded[2] - 0.4) < 1e-3);  // [25, 37.5): 5 ms
    SessionModel plain;
    poolScenario().applyTo(&plain);
    mix = stateMix(plain, workerIndices(plain), {at(0), at(120)}, 12);
    for (float f : mix.folded) QCOMPARE(f, 0.f);
  }

  // Threads per state at an instant: what hovering a pool row says.
  void countsAtAnInstant() {
    SessionModel m;
    poolScenario().applyTo(&m);
    const std::vector<int> workers = workerIndices(m);
    StateCounts n = statesAt(m, workers, at(60));
    QCOMPARE(n[size_t(FinalState::BlockedMutex)], 3);
    QCOMPARE(n[size_t(FinalState::OnCpu)], 1);
    n = statesAt(m, workers, at(20));
    QCOMPARE(n[size_t(FinalState::OnCpu)], 4);
    QCOMPARE(n[size_t(FinalState::BlockedMutex)], 0);
    n = statesAt(m, workers, at(110));
    QCOMPARE(n[kFinalStateCount], 4);  // exited
  }

  // The timeline's pools are the Threads view's: the 4 workers one pool
  // (its typical members the mix's threads), the main thread alone; with
  // 5 threads the pool starts unfolded, and a click folds it.
  void poolsOfTheSession() {
    SessionModel m;
    poolScenario().applyTo(&m);
    const TimeRange whole = m.resolve(Window::wholeRun());
    const std::vector<PoolItem> items = threadPoolItems(m, whole);
    QCOMPARE(items.size(), size_t(5));
    const PoolLayout l = poolLayout(items, QString(), {});
    QCOMPARE(l.pools.size(), size_t(2));
    QCOMPARE(l.grouped, 1);
    QCOMPARE(l.shown, 5);
    const Pool &w = l.pools.front();
    QCOMPARE(w.label(), QStringLiteral("worker-#"));
    QCOMPARE(w.size(), 4);
    QVERIFY(w.outliers.empty());  // a pool of 4 is too small for outliers
    QCOMPARE(w.share(size_t(FinalState::BlockedMutex)), 120.0 / 400.0);
    QVERIFY(unfoldedPools(l, {}).contains(w.key()));
    QVERIFY(!unfoldedPools(l, {w.key()}).contains(w.key()));
    // Filtered to one worker, it stands alone: no pool of one.
    const PoolLayout one = poolLayout(items, QStringLiteral("worker-3"), {});
    QCOMPARE(one.shown, 1);
    QCOMPARE(one.grouped, 0);
    QCOMPARE(one.items.front().id, 303u);
  }
};

QTEST_MAIN(TestModelPoolMix)
#include "test_model_poolmix.moc"
