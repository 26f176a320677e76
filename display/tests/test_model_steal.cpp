// Stolen time: on a CPU by the switch records while the thread's CPU clock
// (LwpSample.oncpu_ns, read at read_ns) did not run, over synthetic streams
// whose truth is known; the re-derivation when samples come late; older
// captures without read_ns.
#include <QtTest>

#include <algorithm>
#include <memory>
#include <random>

#include "sessionmodel.h"
#include "synthstream.h"

using namespace tmon;
using namespace tmtest;

namespace {

int64_t at(int64_t ms) { return kT0 + ms * kMs; }

// The sampler reads a thread's clock a little after its tick.
constexpr int64_t kReadDelay = 50'000;

// Threads 301 (cpu 1) and 302 (cpu 0) are on a CPU for the whole 100 ms by
// the records. 301's CPU clock runs 8 ms per 10 ms tick (20 ms stolen in
// all), 302's the full 10 ms. sendReadNs false: an older capture.
StreamBuilder stealScenario(bool sendReadNs, uint64_t clock301PerTick = 8) {
  StreamBuilder b;
  b.hello(true);
  b.threadStart(301, at(0), "stolen", "workload!spin");
  b.threadStart(302, at(0), "clean", "workload!spin");
  b.cpuSwitch(301, at(0), 1, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.cpuSwitch(302, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
  for (int k = 1; k <= 10; k++) {
    uint64_t K = uint64_t(k);
    int64_t read = sendReadNs ? at(10 * k) + kReadDelay : 0;
    // The clock at the read: the tick's share plus what ran since the tick.
    uint64_t extra = sendReadNs ? uint64_t(kReadDelay) : 0;
    Lwp a{301, 0, 0, K * clock301PerTick * kMs + extra * clock301PerTick / 10, 0};
    Lwp c{302, 0, 0, K * 10 * kMs + extra, 0};
    a.cpu = 1;
    c.cpu = 0;
    a.kstate = c.kstate = 'R';
    a.readNs = c.readNs = read;
    b.tick(at(10 * k), {a, c});
  }
  b.goodbye(at(100), 0);
  return b;
}

// 304 is on cpu 1 by the records except [33,35) (preempted). In [20,40)
// its clock ran 10 ms of the 18 on the CPU, and none of it by the 30 ms read,
// so the sampler sent nothing then: 8 ms stolen.
StreamBuilder gapScenario() {
  StreamBuilder b;
  b.hello(true);
  b.threadStart(304, at(0), "w", "workload!spin");
  b.cpuSwitch(304, at(0), 1, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.cpuSwitch(304, at(33), 1, THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT);
  b.cpuSwitch(304, at(35), 1, THREADMON__SWITCH_KIND__SWITCH_IN);
  const uint64_t clock[] = {0, 10, 20, 20, 30, 40, 50};
  for (int k = 1; k <= 6; k++) {
    if (k == 3) {
      b.tick(at(30), {});
      continue;
    }
    Lwp l{304, 0, 0, clock[k] * kMs, 0};
    l.cpu = 1;
    l.kstate = 'R';
    l.readNs = at(10 * k);
    b.tick(at(10 * k), {l});
  }
  b.goodbye(at(60), 0);
  return b;
}

int64_t ns(const StateTimes &st, FinalState s) { return st.ns[size_t(s)]; }

bool near(int64_t v, int64_t want, int64_t tol = kMs) { return std::llabs(v - want) <= tol; }

}  // namespace

class TestModelSteal : public QObject {
  Q_OBJECT

 private slots:
  void stolenTimeIsOnCpuWithoutTheClock() {
    SessionModel m;
    stealScenario(true).applyTo(&m);
    QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
    TimeRange whole = m.resolve(Window::wholeRun());
    StateTimes st = m.threadStates(m.indexOfTid(301), whole);
    QCOMPARE(st.lifetimeNs, 100 * kMs);
    QVERIFY2(near(ns(st, FinalState::OnCpu), 80 * kMs), qPrintable(QString::number(ns(st, FinalState::OnCpu))));
    QVERIFY2(near(ns(st, FinalState::Stolen), 20 * kMs),
             qPrintable(QString::number(ns(st, FinalState::Stolen))));
    QCOMPARE(ns(st, FinalState::Runnable), int64_t(0));
    QCOMPARE(ns(st, FinalState::Sleeping), int64_t(0));
    QCOMPARE(ns(st, FinalState::OnCpu) + ns(st, FinalState::Stolen), 100 * kMs);
    // Per-CPU time is the clock's: only the on part, on the records' CPU.
    std::vector<int64_t> per = m.threadCpuTimes(m.indexOfTid(301), whole);
    QCOMPARE(per.size(), size_t(2));
    QCOMPARE(per[0], int64_t(0));
    QVERIFY(near(per[1], 80 * kMs));
    QCOMPARE(per[1], ns(st, FinalState::OnCpu));

    StateTimes clean = m.threadStates(m.indexOfTid(302), whole);
    QCOMPARE(ns(clean, FinalState::Stolen), int64_t(0));
    QCOMPARE(ns(clean, FinalState::OnCpu), 100 * kMs);
    QCOMPARE(m.threadCpuTimes(m.indexOfTid(302), whole)[0], 100 * kMs);
  }

  // 305 goes on CPU 1 at 0 and to sleep at 50 ms, but that switch-out is
  // among records the kernel lost (the next batch says lost=1), or the probe
  // stopped its records (stopped: the switch limit) before it. Its clock
  // stops at 50 ms. Trusting the stale IN, 50 ms would read as stolen; the
  // model must instead take the span from the clock and the kernel state.
  void lostSwitchRecordsAreNotStolenTime() {
    for (int how = 0; how < 3; how++) {
      uint64_t lost = how == 1;
      bool stopped = how == 2;
      StreamBuilder b;
      b.hello(true);
      b.threadStart(305, at(0), "sleeper", "workload!spin");
      b.threadStart(306, at(0), "other", "workload!spin");
      b.cpuSwitch(305, at(0), 1, THREADMON__SWITCH_KIND__SWITCH_IN);
      b.cpuSwitch(306, at(stopped ? 45 : 55), 0, THREADMON__SWITCH_KIND__SWITCH_IN, lost, stopped);
      for (int k = 1; k <= 10; k++) {
        Lwp l{305, 0, 0, uint64_t(std::min(k, 5)) * 10 * kMs, 0};
        l.cpu = 1;
        l.kstate = k <= 5 ? 'R' : 'S';
        l.readNs = at(10 * k);
        b.tick(at(10 * k), {l});
      }
      b.goodbye(at(100), 0);
      SessionModel m;
      b.applyTo(&m);
      StateTimes st = m.threadStates(m.indexOfTid(305), m.resolve(Window::wholeRun()));
      const QString got = QStringLiteral("case %1: on %2 ms, stolen %3 ms, sleeping %4 ms")
                              .arg(how)
                              .arg(ns(st, FinalState::OnCpu) / kMs)
                              .arg(ns(st, FinalState::Stolen) / kMs)
                              .arg(ns(st, FinalState::Sleeping) / kMs);
      QCOMPARE(m.info().switchesStoppedNs, stopped ? at(45) : int64_t(-1));
      if (lost || stopped) {
        QVERIFY2(ns(st, FinalState::Stolen) == 0, qPrintable(got));
        QVERIFY2(near(ns(st, FinalState::OnCpu), 50 * kMs), qPrintable(got));
        QVERIFY2(near(ns(st, FinalState::Sleeping), 50 * kMs), qPrintable(got));
      } else {
        // Without the loss the records are believed: the stale IN reads as steal.
        QVERIFY2(near(ns(st, FinalState::Stolen), 50 * kMs), qPrintable(got));
      }
    }
  }

  // The kernel loses records once a CPU's ring is full, and reports the
  // loss with that ring's next record, in the probe's read after the one
  // that emptied it. 307's CPU 1 ring filled at its switch-in at 20 ms; its
  // switch-out at 25 and all else on CPU 1 until the read were lost, while
  // CPU 0's records (308's) went on to 55 ms. The batch after says lost; or
  // the probe stopped its records at that read (stopped: the switch limit),
  // and no batch says it. 307's clock ran 5 ms of [20, 70): trusting its
  // switch-in up to 55 ms (the newest record of all) read 30 ms as stolen.
  // 308's clock ran 8 of each 10 ms it was on CPU 0 in [0, 20): that steal
  // is real and stays.
  void recordsLostAfterOneCpusRingFilledAreNotStolen() {
    for (bool stopped : {false, true}) {
      StreamBuilder b;
      b.hello(true);
      b.threadStart(307, at(0), "filled", "workload!spin");
      b.threadStart(308, at(0), "other", "workload!spin");
      using S = Switch;
      const auto in = THREADMON__SWITCH_KIND__SWITCH_IN, out = THREADMON__SWITCH_KIND__SWITCH_OUT;
      b.cpuSwitches(at(0),
                    {S{at(0), 307, 1, in}, S{at(0), 308, 0, in}, S{at(10), 307, 1, out},
                     S{at(20), 307, 1, in}, S{at(20), 308, 0, out}, S{at(55), 308, 0, in}},
                    0, stopped);
      if (!stopped) b.cpuSwitches(at(70), {S{at(70), 307, 1, out}, S{at(80), 308, 0, out}}, 31988);
      // Clocks at each 10 ms read: 307 ran [0,10), [20,25), [62,70);
      // 308 8 of [0,20) and all of [55,80).
      const uint64_t clock307[] = {0, 10, 10, 15, 15, 15, 15, 21, 23, 23, 23};
      const uint64_t clock308[] = {0, 8, 16, 16, 16, 16, 21, 31, 41, 41, 41};
      for (int k = 1; k <= 10; k++) {
        Lwp l{307, 0, 0, clock307[k] * kMs, 0}, o{308, 0, 0, clock308[k] * kMs, 0};
        l.cpu = 1;
        l.kstate = k == 2 ? 'R' : 'S';
        o.kstate = k == 1 || k == 6 || k == 7 ? 'R' : 'S';
        l.readNs = o.readNs = at(10 * k);
        b.tick(at(10 * k), {l, o});
      }
      b.goodbye(at(100), 0);
      SessionModel m;
      b.applyTo(&m);
      QVERIFY2(!m.hasError(), qPrintable(m.errorText()));
      const TimeRange whole = m.resolve(Window::wholeRun());
      StateTimes st = m.threadStates(m.indexOfTid(307), whole);
      const QString got = QStringLiteral("stopped %1: on %2 ms, stolen %3 ms")
                              .arg(stopped)
                              .arg(ns(st, FinalState::OnCpu) / kMs)
                              .arg(ns(st, FinalState::Stolen) / kMs);
      QVERIFY2(ns(st, FinalState::Stolen) == 0, qPrintable(got));
      QVERIFY2(ns(st, FinalState::OnCpu) <= 23 * kMs + kMs, qPrintable(got));
      StateTimes other = m.threadStates(m.indexOfTid(308), whole);
      QVERIFY2(near(ns(other, FinalState::Stolen), 4 * kMs),
               qPrintable(QString::number(ns(other, FinalState::Stolen))));
    }
  }

  void stealAfterTheLastSampleComesFromTheThreadEnd() {
    // 305 is on cpu 0 by the records from 0 until it ends at 45 ms; samples
    // at 10..40 ms say its clock ran fully; by its own clock at the end it
    // ran only 1 of the last 5 ms. Without that clock (older probes) the
    // last span is all on a CPU.
    for (bool endClock : {true, false}) {
      StreamBuilder b;
      b.hello(true);
      b.threadStart(305, at(0), "w", "workload!spin");
      b.cpuSwitch(305, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
      for (int k = 1; k <= 4; k++) {
        Lwp l{305, 0, 0, uint64_t(k) * 10 * kMs, 0};
        l.kstate = 'R';
        l.readNs = at(10 * k);
        b.tick(at(10 * k), {l});
      }
      b.threadEnd(305, at(45), endClock ? 41 * kMs : 0);
      b.tick(at(50), {});
      b.goodbye(at(50), 0);
      SessionModel m;
      b.applyTo(&m);
      StateTimes st = m.threadStates(m.indexOfTid(305), m.resolve(Window::wholeRun()));
      QCOMPARE(st.lifetimeNs, 45 * kMs);
      int64_t stolen = ns(st, FinalState::Stolen);
      QVERIFY2(near(stolen, endClock ? 4 * kMs : 0), qPrintable(QString::number(stolen)));
      QVERIFY(near(ns(st, FinalState::OnCpu), endClock ? 41 * kMs : 45 * kMs));
    }
  }

  void timelineShowsStolenTimeTickByTick() {
    SessionModel m;
    stealScenario(true).applyTo(&m);
    std::vector<StateInterval> iv = m.intervals(m.indexOfTid(301), m.resolve(Window::wholeRun()));
    int64_t on = 0, stolen = 0;
    int ticksWithSteal = 0;
    for (const StateInterval &v : iv) {
      QVERIFY(v.state == FinalState::OnCpu || v.state == FinalState::Stolen);
      if (v.state == FinalState::OnCpu) {
        QCOMPARE(v.cpu, 1);
        on += v.end - v.start;
      } else {
        stolen += v.end - v.start;
        ticksWithSteal++;
        // Each 10 ms tick draws its ~8 ms on the CPU first, then ~2 ms stolen.
        QVERIFY(near(v.end - v.start, 2 * kMs, kMs / 10));
        QCOMPARE((v.end - at(0)) % (10 * kMs), int64_t(0));
      }
    }
    QCOMPARE(ticksWithSteal, 10);
    QVERIFY(near(on, 80 * kMs));
    QVERIFY(near(stolen, 20 * kMs));
    for (size_t k = 1; k < iv.size(); k++) QCOMPARE(iv[k].start, iv[k - 1].end);
  }

  void olderCapturesWithoutReadTimesStillWork() {
    // No read_ns: spans run from tick to tick. A heavy steal still shows.
    SessionModel heavy;
    stealScenario(false, 5).applyTo(&heavy);
    TimeRange whole = heavy.resolve(Window::wholeRun());
    StateTimes st = heavy.threadStates(heavy.indexOfTid(301), whole);
    QVERIFY(near(ns(st, FinalState::OnCpu), 50 * kMs));
    QVERIFY(near(ns(st, FinalState::Stolen), 50 * kMs));
    QCOMPARE(ns(heavy.threadStates(heavy.indexOfTid(302), whole), FinalState::OnCpu), 100 * kMs);

    // schedstat of a thread on a CPU lagged by up to a scheduler tick in
    // those captures: a clock that lags 0 or 3 ms at alternate reads is no
    // steal.
    StreamBuilder b;
    b.hello(true);
    b.threadStart(303, at(0), "lagging", "workload!spin");
    b.cpuSwitch(303, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
    for (int k = 1; k <= 10; k++) {
      Lwp l{303, 0, 0, uint64_t(k * 10 - (k % 2) * 3) * kMs, 0};
      l.kstate = 'R';
      b.tick(at(10 * k), {l});
    }
    b.goodbye(at(100), 0);
    SessionModel m;
    b.applyTo(&m);
    StateTimes lag = m.threadStates(m.indexOfTid(303), m.resolve(Window::wholeRun()));
    QCOMPARE(ns(lag, FinalState::Stolen), int64_t(0));
    QCOMPARE(ns(lag, FinalState::OnCpu), 100 * kMs);
  }

  void aSpanWithoutSamplesIsSplitOnceTheSampleComes() {
    StreamBuilder b = gapScenario();
    // Settled after every frame (as live), once at the end, and shuffled.
    SessionModel live, once;
    for (const std::string &f : b.frames()) {
      live.applyPayload(reinterpret_cast<const uint8_t *>(f.data()), f.size());
      if (live.threadCount() > 0) live.threadStates(0, live.resolve(Window::wholeRun()));
    }
    b.applyTo(&once);
    std::vector<SessionModel *> models{&live, &once};
    std::vector<std::unique_ptr<SessionModel>> shuffledModels;
    for (unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
      std::vector<std::string> frames = b.frames();
      std::mt19937 rng(seed);
      std::shuffle(frames.begin() + 1, frames.end(), rng);
      shuffledModels.push_back(std::make_unique<SessionModel>());
      SessionModel *m = shuffledModels.back().get();
      for (const std::string &f : frames) {
        m->applyPayload(reinterpret_cast<const uint8_t *>(f.data()), f.size());
        if (m->threadCount() > 0) m->threadStates(0, m->resolve(Window::wholeRun()));
      }
      models.push_back(m);
    }
    // Fractions are kept in 1/16383: exact to a microsecond here.
    constexpr int64_t kUs = 1000;
    for (SessionModel *m : models) {
      TimeRange whole = m->resolve(Window::wholeRun());
      StateTimes st = m->threadStates(m->indexOfTid(304), whole);
      QVERIFY(near(ns(st, FinalState::Stolen), 8 * kMs, kUs));
      QVERIFY(near(ns(st, FinalState::OnCpu), 50 * kMs, kUs));
      QCOMPARE(ns(st, FinalState::Runnable), 2 * kMs);
      // The first tick of the span gets its share too.
      StateTimes first = m->threadStates(m->indexOfTid(304), TimeRange{at(20), at(30)});
      QVERIFY(near(ns(first, FinalState::OnCpu), 10 * kMs * 10 / 18, kUs));
      QVERIFY(near(m->threadCpuTimes(m->indexOfTid(304), whole)[1], 50 * kMs, kUs));
    }
  }

  void disorderGivesTheSameSteal() {
    StreamBuilder b = stealScenario(true);
    SessionModel inOrder;
    b.applyTo(&inOrder);
    TimeRange whole = inOrder.resolve(Window::wholeRun());
    std::vector<std::string> frames = b.frames();
    for (unsigned seed : {1u, 2u, 3u, 4u}) {
      std::vector<std::string> shuffled = frames;
      std::mt19937 rng(seed);
      std::shuffle(shuffled.begin() + 1, shuffled.end(), rng);  // Hello first
      SessionModel m;
      for (size_t k = 0; k < shuffled.size(); k++) {
        m.applyPayload(reinterpret_cast<const uint8_t *>(shuffled[k].data()), shuffled[k].size());
        if (k % 3 == 0 && m.threadCount() > 0) m.threadStates(0, m.resolve(Window::wholeRun()));
      }
      QVERIFY(!m.hasError());
      QCOMPARE(m.resolve(Window::wholeRun()).t1, whole.t1);
      for (uint32_t tid : {301u, 302u}) {
        StateTimes a = inOrder.threadStates(inOrder.indexOfTid(tid), whole);
        StateTimes c = m.threadStates(m.indexOfTid(tid), whole);
        QCOMPARE(c.lifetimeNs, a.lifetimeNs);
        for (int s = 0; s < kFinalStateCount; s++) QCOMPARE(c.ns[size_t(s)], a.ns[size_t(s)]);
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestModelSteal)
#include "test_model_steal.moc"
