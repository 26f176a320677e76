// The invariants of modelinvariants.h: held by every capture the fuzzer's
// seed corpus and regressions hold (real recordings of the workloads, and the
// inputs that once broke the readers), whole and windowed; broken by
// synthetic streams that say what cannot be, each said in one line.
#include <QDir>
#include <QtTest>

#include "capturereader.h"
#include "capturewindow.h"
#include "modelinvariants.h"
#include "sessionmodel.h"
#include "synthstream.h"

using namespace tmon;
using namespace tmtest;

namespace {

int64_t at(int64_t ms) { return kT0 + ms * kMs; }

// Thread 10 blocked on mutex 7 for [20, 60) ms of a 100 ms session held by
// 11; ticks every 10 ms with the LWP times and the mutex's counters given.
// notices: sent after the Hello.
StreamBuilder mutexSession(uint64_t userNs, uint64_t waitCounterNs,
                           const QStringList &notices = {}) {
  StreamBuilder b;
  b.hello(false);
  for (const QString &n : notices) b.notice(at(1), qPrintable(n));
  b.threadStart(10, kT0, "waiter", "app!work");
  b.threadStart(11, kT0, "holder", "app!work");
  b.syncObject(7, THREADMON__SYNC_KIND__KIND_MUTEX, 0x7000, "app", "lock", nullptr);
  b.transition(10, at(20), THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 7, 11);
  b.transition(10, at(60), THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, 11);
  for (int t = 10; t <= 100; t += 10) {
    const uint64_t user = userNs * uint64_t(t) / 100;
    const uint64_t wait = t >= 60 ? waitCounterNs : 0;
    const uint64_t half = uint64_t(t) * kMs / 2;
    b.tick(at(t), {Lwp{10, user, 0, user, 0}, Lwp{11, half, 0, half, 0}}, {},
           {Sync{7, uint64_t(t), t >= 60 ? 1u : 0u, wait, wait, 0}});
  }
  b.goodbye(at(100), 0);
  return b;
}

// Thread 10 waits on condition 7 for [10, 20) ms, recorded, until 11
// signals it; then its ring is full from 30 ms to 150 ms, and in that gap
// it waits on 7 again for [40, 140) ms: folded (counted by state on its
// samples, recorded as no wait). The condition's counter, as the probe
// keeps it, counts both waits, and says waitCounterNs at the end (110 ms
// true). mn_barrier's LWPs parked on queue_cond so (a capture of
// 250,000 rounds: counter 2212.5 ms, waits 1727.7 ms, 484.8 ms folded).
StreamBuilder foldedCondSession(uint64_t waitCounterNs) {
  StreamBuilder b;
  b.hello(false);
  b.threadStart(10, kT0, "lwp-0", "app!lwp_main");
  b.threadStart(11, kT0, "lwp-1", "app!lwp_main");
  b.syncObject(7, THREADMON__SYNC_KIND__KIND_COND, 0x7000, "app", "queue_cond", nullptr);
  b.transition(10, at(10), THREADMON__THREAD_STATE__STATE_BLOCKED_COND, 7, 11);
  b.transition(10, at(20), THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, 11);
  b.transition(10, at(30), THREADMON__THREAD_STATE__STATE_UNKNOWN);
  b.transition(10, at(150), THREADMON__THREAD_STATE__STATE_RUNNING);
  for (int ms = 10; ms <= 200; ms += 10) {
    const uint64_t t = uint64_t(ms) * kMs;
    Lwp waiter{10, t / 4, 0, t / 4, 0};
    if (ms > 30) {
      const uint64_t cond = uint64_t(std::clamp(ms - 40, 0, 100)) * kMs;
      waiter.folded.assign(kWireStates, 0);
      waiter.folded[THREADMON__THREAD_STATE__STATE_BLOCKED_COND] = cond;
      waiter.folded[THREADMON__THREAD_STATE__STATE_RUNNING] =
          uint64_t(std::min(ms, 150) - 30) * kMs - cond;
      waiter.foldedChanges = ms >= 140 ? 2 : 1;
    }
    const uint64_t waits = ms >= 140 ? 2 : ms >= 20 ? 1 : 0;
    const uint64_t waitNs = ms >= 140 ? waitCounterNs : ms >= 20 ? 10 * kMs : 0;
    b.tick(at(ms), {waiter, Lwp{11, t / 2, 0, t / 2, 0}}, {},
           {Sync{7, waits, waits, waitNs, waitNs, 0}});
  }
  b.goodbye(at(200), 0);
  return b;
}

QStringList violations(const StreamBuilder &b) {
  SessionModel m;
  b.applyTo(&m);
  return checkInvariants(m, m.resolve(Window::wholeRun()));
}

QStringList capturesIn(const QString &dir) {
  QStringList out;
  for (const QFileInfo &f : QDir(dir).entryInfoList({"*.tmcap"}, QDir::Files, QDir::Name))
    out << f.filePath();
  return out;
}

}  // namespace

class TestModelInvariants : public QObject {
  Q_OBJECT

 private slots:
  void truthfulSessionHolds() {
    const QStringList v = violations(mutexSession(40 * kMs, 40 * kMs));
    QVERIFY2(v.isEmpty(), qPrintable(v.join('\n')));
  }

  // An LWP that used 3 s of CPU in 100 ms of life: its counters were not
  // taken from the session's start (the attach's first reading).
  void lwpTimePastItsLife() {
    const QStringList v = violations(mutexSession(3000 * kMs, 40 * kMs));
    QCOMPARE(v.size(), 1);
    // Counted from its first reading (300 ms at 10 ms: it ran before), the
    // other 2.7 s still cannot be.
    QVERIFY2(v[0].contains("thread 10 (waiter): LWP user + system time of 2700.0 ms"),
             qPrintable(v[0]));
  }

  // One waiter, 100 ms: a mutex cannot have 268 s of waits, and its one
  // 40 ms wait cannot add up to them either.
  void objectWaitPastWindowTimesWaiters() {
    const QStringList v = violations(mutexSession(40 * kMs, 268'000 * kMs));
    QCOMPARE(v.size(), 2);
    // Nor can two threads' 200 ms hold them.
    QVERIFY2(v[1].contains("the objects' waits sum to 268000.0 ms, past the 220.0 ms its 2 "
                           "threads lived"),
             qPrintable(v[1]));
    QVERIFY2(v[0].contains("object 7 (lock): waits of 268000.0 ms in a window of 100.0 ms "
                           "with 1 waiters"),
             qPrintable(v[0]));
  }

  void waitCounterDisagreesWithItsWaits() {
    // 95 ms fits in 100 ms with one waiter, but its one wait was 40 ms.
    const QStringList v = violations(mutexSession(40 * kMs, 95 * kMs));
    QCOMPARE(v.size(), 1);
    QVERIFY2(v[0].contains("its wait counter says 95.0 ms, its 1 waits 40.0 ms"), qPrintable(v[0]));
  }

  // A wait folded in a full ring is on its object's counter and in no
  // recorded wait: the counter may exceed the waits by what the threads
  // folded in waits (here the thread's own cond time, recorded and folded,
  // is the counter's 110 ms), and by no more.
  void foldedWaitsOnTheCounter() {
    const StreamBuilder truth = foldedCondSession(110 * kMs);
    SessionModel m;
    truth.applyTo(&m);
    QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
    const TimeRange whole = m.resolve(Window::wholeRun());
    QCOMPARE(m.threadStates(m.indexOfTid(10), whole).ns[size_t(FinalState::BlockedCond)],
             110 * kMs);
    QCOMPARE(m.foldedObjectWaitNs(m.indexOfTid(10), whole), 100 * kMs);
    QCOMPARE(m.foldedObjectWaitNs(m.indexOfTid(11), whole), 0);
    QStringList v = checkInvariants(m, whole);
    QVERIFY2(v.isEmpty(), qPrintable(v.join('\n')));
    // 50 ms more than both waits cannot be.
    v = violations(foldedCondSession(160 * kMs));
    QCOMPARE(v.size(), 1);
    QVERIFY2(v[0].contains("object 7 (queue_cond): its wait counter says 160.0 ms, its 1 waits "
                           "10.0 ms (and 100.0 ms folded in waits on any object)"),
             qPrintable(v[0]));
  }

  // A flight recorder's capture (its last window's waits, whole-run
  // counters) and one with a gap are not held to the counter check, by
  // flags the store sets from their notices (proto/tmnotices.h): also when
  // the notice comes past the cap of notices kept, which once lost it.
  void windowedCountersExempt() {
    QStringList full;
    for (int i = 0; i < 70; i++) full << QStringLiteral("budget note %1").arg(i);
    for (const char *exempt : {"flight recorder (trigger): detail kept for the last 5 s only",
                               "capture gap: 100 bytes of frames lost from 0.010 s (disk full)"}) {
      QStringList v = violations(mutexSession(40 * kMs, 95 * kMs, {QString::fromUtf8(exempt)}));
      QVERIFY2(v.isEmpty(), qPrintable(v.join('\n')));
      v = violations(mutexSession(40 * kMs, 95 * kMs, full + QStringList{exempt}));
      QVERIFY2(v.isEmpty(), qPrintable(v.join('\n')));
    }
    // A notice that only mentions a flight recorder is no such capture.
    const QStringList v = violations(mutexSession(
        40 * kMs, 95 * kMs, {QStringLiteral("flight recorder: the program's end (exit 0)")}));
    QCOMPARE(v.size(), 1);
  }

  // Every seed capture (recordings of the workloads), whole and by windows
  // (a long capture's reader), breaks none. The regressions are forged: what
  // they break is said (and checking them must not crash).
  void capturesHold_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("recorded");
    const QString regressions = qEnvironmentVariable("THREADMON_FUZZ_REGRESSIONS");
    const QStringList seeds = capturesIn(regressions + "/../corpus");
    QVERIFY2(seeds.size() > 20, qPrintable(regressions));
    for (const QString &p : seeds) QTest::newRow(qPrintable(QFileInfo(p).fileName())) << p << true;
    for (const QString &p : capturesIn(regressions))
      QTest::newRow(qPrintable("regression " + QFileInfo(p).fileName())) << p << false;
  }

  void capturesHold() {
    QFETCH(QString, path);
    QFETCH(bool, recorded);
    SessionModel m;
    const CaptureLoadResult res = CaptureReader::load(path, &m);
    if (res.status == CaptureLoadResult::Unreadable) return;
    const TimeRange whole = m.resolve(Window::wholeRun());
    QStringList v = checkInvariants(m, whole);
    // Its middle half: counters differenced at its edges, waits clipped.
    const int64_t q = whole.length() / 4;
    v += checkInvariants(m, TimeRange{whole.t0 + q, whole.t1 - q});
    if (recorded) QVERIFY2(v.isEmpty(), qPrintable(v.join('\n')));
  }

  // Windows merged: an object's counter against its waits' pieces, the
  // pieces of waits still going on at the end allowed to be uncounted.
  void mergedWaitsChecked() {
    MergedWaits o;
    o.info.id = 7;
    o.hasCounters = true;
    o.waiters = {10};
    o.counterNs = 3000 * kMs;  // one wait of 3 s, read in three 1 s windows
    o.waitsNs = 3000 * kMs;
    o.pieces = 3;
    const int64_t run = 4000 * kMs, lives = 8000 * kMs;
    QVERIFY(checkMergedWaits({o}, run, lives, 2, 10 * kMs, true, 0).isEmpty());
    MergedWaits lost = o;  // a window's wait missing from the merge
    lost.waitsNs = 2000 * kMs;
    const QStringList v = checkMergedWaits({lost}, run, lives, 2, 10 * kMs, true, 0);
    QCOMPARE(v.size(), 1);
    QVERIFY2(v[0].contains("wait counter says 3000.0 ms, its 3 waits 2000.0 ms"), qPrintable(v[0]));
    QVERIFY(checkMergedWaits({lost}, run, lives, 2, 10 * kMs, false, 0).isEmpty());
    // Its threads folded 1 s in waits: counted, in no wait; but not 0.5 s.
    QVERIFY(checkMergedWaits({lost}, run, lives, 2, 10 * kMs, true, 1000 * kMs).isEmpty());
    QVERIFY(checkMergedWaits({lost}, run, lives, 2, 10 * kMs, true, 500 * kMs)
                .first()
                .contains("its 3 waits 2000.0 ms (and 500.0 ms folded in waits on any object)"));
    MergedWaits open = o;  // the last second still going on at the Goodbye
    open.counterNs = 2000 * kMs;
    open.openBoundNs = 1000 * kMs;
    QVERIFY(checkMergedWaits({open}, run, lives, 2, 10 * kMs, true, 0).isEmpty());
    MergedWaits past = o;  // more wait than its one waiter's run
    past.counterNs = past.waitsNs = 5000 * kMs;
    QVERIFY(checkMergedWaits({past}, run, lives, 2, 10 * kMs, true, 0)
                .first()
                .contains("waits of 5000.0 ms in a window of 4000.0 ms with 1 waiters"));
    QVERIFY(checkMergedWaits({o, o, o}, run, lives, 2, 10 * kMs, true, 0)
                .last()
                .contains("the objects' waits sum to 9000.0 ms, past the 8020.0 ms"));
  }

  void windowsHold_data() { capturesHold_data(); }

  void windowsHold() {
    QFETCH(QString, path);
    QFETCH(bool, recorded);
    CaptureWindow cw;
    if (!cw.open(path) || !cw.records()) return;
    SessionModel m;
    const TimeRange all{cw.firstNs(), cw.lastNs()};
    const int64_t mid = all.t0 + all.length() / 2;
    cw.load(mid, all.t1, &m);
    m.settleNow();
    const QStringList v =
        checkInvariants(m, TimeRange{mid, std::max(mid, m.latestNs())}, CounterCheck::WindowOnly);
    if (recorded) QVERIFY2(v.isEmpty(), qPrintable(v.join('\n')));
  }
};

QTEST_GUILESS_MAIN(TestModelInvariants)
#include "test_model_invariants.moc"
