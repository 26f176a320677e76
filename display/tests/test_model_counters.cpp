// proto/counters.def end to end: every counter it lists, sent in a Tick,
// reaches the model's window deltas (a difference, or the newest for a
// running maximum) and the report's JSON under its key; and FrameCheck
// clamps every one.
#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>

#include "framecheck.h"
#include "modelinvariants.h"
#include "reportjson.h"
#include "sessionmodel.h"
#include "synthstream.h"

using namespace tmon;
using namespace tmtest;

namespace {

constexpr uint32_t kTid = 7, kObject = 3;

int64_t at(int64_t ms) {
  return kT0 + ms * kMs;
}

// A counter's value at the n-th Tick: apart for every field number, and
// growing, so that a difference and a newest value differ.
uint64_t value(int number, int n) {
  return uint64_t(number) * 1000 * uint64_t(n) + uint64_t(n);
}

// One Tick with one LWP, one CPU and one object, every counter of the .def
// at value(number, n), or at huge when it is not 0.
void applyTick(SessionModel *m, int64_t t, int n, uint64_t huge = 0) {
  Threadmon__LwpSample l = THREADMON__LWP_SAMPLE__INIT;
  l.tid = kTid;
  l.kstate = 'S';
#define TM_LWP_SET(field, number) l.field = huge ? huge : value(number, n);
#define TM_LWP_COUNTER(field, number, ...) TM_LWP_SET(field, number)
#define TM_LWP_EXTRA(field, number, ...) TM_LWP_SET(field, number)
#define TM_LWP_UNKEPT(field, number) TM_LWP_SET(field, number)
#include "counters.def"
#undef TM_LWP_SET
  Threadmon__CpuSample c = THREADMON__CPU_SAMPLE__INIT;
#define TM_CPU_COUNTER(field, number, ...) c.field = huge ? huge : value(number, n);
#include "counters.def"
  Threadmon__SyncStats s = THREADMON__SYNC_STATS__INIT;
  s.id = kObject;
#define TM_SYNC_COUNTER(field, number, ...) s.field = huge ? huge : value(number, n);
#include "counters.def"
  Threadmon__LwpSample *lp = &l;
  Threadmon__CpuSample *cp = &c;
  Threadmon__SyncStats *sp = &s;
  Threadmon__Tick tk = THREADMON__TICK__INIT;
  tk.seq = uint64_t(n);
  tk.time_ns = uint64_t(t);
  tk.n_lwps = tk.n_cpus = tk.n_sync = 1;
  tk.lwps = &lp;
  tk.cpus = &cp;
  tk.sync = &sp;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_TICK;
  f.tick = &tk;
  m->apply(f);
}

void begin(SessionModel *m) {
  StreamBuilder b;
  b.hello(false, 1);
  b.threadStart(kTid, kT0, "w", "app!worker");
  b.syncObject(kObject, THREADMON__SYNC_KIND__KIND_MUTEX, 0x3000, "app", "lock", nullptr);
  b.applyTo(m);
}

void end(SessionModel *m) {
  StreamBuilder b;
  b.goodbye(at(40), 0);
  b.applyTo(m);
}

}  // namespace

class TestModelCounters : public QObject {
  Q_OBJECT
 private slots:
  void everyCounterReachesTheModel() {
    SessionModel m;
    begin(&m);
    for (int n = 1; n <= 3; n++) applyTick(&m, at(10 * n), n);
    end(&m);
    QCOMPARE(m.syncObjectCount(), 1);
    QCOMPARE(m.threadCount(), 1);
    // Between the first and the third Tick.
    const TimeRange r{at(10), at(30)};
    const SyncDelta sd = m.syncDelta(0, r);
#define TM_SYNC_COUNTER(field, number, index, member, merge, ...) \
  QCOMPARE(sd.member, CounterMerge::merge == CounterMerge::Max    \
                          ? value(number, 3)                      \
                          : value(number, 3) - value(number, 1));
#include "counters.def"
    QVERIFY(sd.maxWaitInWindow);
    const LwpDelta ld = m.lwpDelta(0, r);
#define TM_LWP_CHECK(field, number, index, member, ...) \
  QCOMPARE(ld.member, value(number, 3) - value(number, 1));
#define TM_LWP_COUNTER TM_LWP_CHECK
#define TM_LWP_EXTRA TM_LWP_CHECK
#include "counters.def"
#undef TM_LWP_CHECK
    const CpuDelta cd = m.cpuDelta(0, r);
#define TM_CPU_COUNTER(field, number, member, ...) \
  QCOMPARE(cd.member, value(number, 3) - value(number, 1));
#include "counters.def"
  }

  // schedstat credits a wait for a CPU when it ends. A child watched from
  // outside before it first ran (threadmon-attach's watch of a launcher's
  // children) read 0 ms of run queue, and 226 ms 120 ms later, when its
  // wait since the fork ended: the report said 226 ms in a life of 131 ms.
  // What grew beyond the time between the readings began before the first:
  // not the session's. A stream's models agree with a whole read on either
  // side of the edge between them (the counters as read, their sums).
  void aWaitBeforeTheFirstReadingIsNotTheSessions() {
    auto frames = [](int from, int to) {
      auto b = std::make_unique<StreamBuilder>();
      b->setSources({THREADMON__SOURCE__SOURCE_ATTACH, THREADMON__SOURCE__SOURCE_PROC_TASK});
      b->hello(false);
      b->threadStart(kTid, at(0), "child", "", false, true);
      auto lwp = [](int64_t t, uint64_t oncpu, uint64_t runqueue) {
        return Lwp{kTid, 0, 0, oncpu, runqueue, 0, 1, 0, 0, 0, 'R', 0, 0, t};
      };
      const std::vector<std::pair<int64_t, Lwp>> ticks{{at(6), lwp(at(6), 0, 0)},
                                                       {at(126), lwp(at(126), 85'000, 226 * kMs)},
                                                       {at(130), lwp(at(130), kMs, 229 * kMs)}};
      for (int i = from; i < to; i++) b->tick(ticks[size_t(i)].first, {ticks[size_t(i)].second});
      if (to == 3) b->goodbye(at(131), 0);
      return b;
    };
    SessionModel whole;
    frames(0, 3)->applyTo(&whole);
    const TimeRange run = whole.resolve(Window::wholeRun());
    const uint64_t before = 226 * kMs + 85'000 - 120 * kMs;
    QCOMPARE(whole.lwpDelta(0, run).runqueueNs, 229 * kMs - before);
    QCOMPARE(whole.lwpDelta(0, run).oncpuNs, uint64_t(kMs));
    const QStringList broken = checkInvariants(whole, run);
    QVERIFY2(broken.isEmpty(), qPrintable(broken.join('\n')));
    const TimeRange asRead{INT64_MIN, at(131)};
    for (int edge : {1, 2}) {
      SessionModel first, next;
      frames(0, edge)->applyTo(&first);
      const int64_t t = edge == 1 ? at(100) : at(128);
      frames(0, 0)->applyTo(&next);
      next.carrySamples(first.samplesBefore(t));
      next.knownFrom(t);
      frames(edge, 3)->applyTo(&next);
      QCOMPARE(next.lwpDelta(0, asRead).runqueueNs, whole.lwpDelta(0, asRead).runqueueNs);
      QCOMPARE(next.lwpDelta(0, asRead).oncpuNs, whole.lwpDelta(0, asRead).oncpuNs);
    }
  }

  // sched_yield calls after a thread's last reading come with its end
  // (ThreadEnd.yields): sched_findings' starved thread read 10 of its 11
  // yields now and then, its last made after the sampler's last read.
  void yieldsAfterTheLastReadingCountAtTheEnd() {
    for (uint64_t atEnd : {uint64_t(0), uint64_t(11)}) {
      StreamBuilder b;
      b.hello(true);
      b.threadStart(kTid, at(0), "w", "workload!spin");
      for (int k = 1; k <= 3; k++) {
        Lwp l{kTid, 0, 0, uint64_t(k) * kMs, 0};
        l.readNs = at(10 * k);
        b.tick(at(10 * k), {l});
      }
      b.threadEnd(kTid, at(35), 0, atEnd);
      b.tick(at(40), {});
      b.goodbye(at(40), 0);
      SessionModel m;
      b.applyTo(&m);
      const TimeRange run = m.resolve(Window::wholeRun());
      QCOMPARE(m.lwpDelta(m.indexOfTid(kTid), run).yields, atEnd);
      // And its CPU time as last read: an end without a clock keeps it.
      QCOMPARE(m.lwpDelta(m.indexOfTid(kTid), run).oncpuNs, uint64_t(3 * kMs));
    }
  }

  // A thread not sampled since its start (its counters did not move: a
  // worker of deadlock.c blocked for 2.6 s) waited for a CPU over its whole
  // life when its first reading comes: in a segment after the one it
  // started in too, as in the whole read (the segments carry the zero of
  // its start when they have no sample of it to carry).
  void aFirstReadingSegmentsAfterTheStartCountsFromTheStart() {
    constexpr uint32_t kQuiet = kTid + 1;
    // The descriptions come once, before the ticks (a segment's replayed
    // before its warm-up and knownFrom).
    auto frames = [](int from, int to, bool described) {
      auto b = std::make_unique<StreamBuilder>();
      if (described) {
        b->hello(false);
        b->threadStart(kTid, at(0), "main", "", false, true);
        b->threadStart(kQuiet, at(1), "worker", "run");
      }
      // Tick i at 50 ms x (i + 1); only the main thread's counters move
      // until the fifth, where the worker read 26 ms of run queue.
      for (int i = from; i < to; i++) {
        const int64_t t = at(50 * (i + 1));
        std::vector<Lwp> lwps{{kTid, 0, 0, uint64_t(i + 1) * kMs, uint64_t(i + 1) * kMs}};
        if (i >= 4) lwps.push_back({kQuiet, 0, 0, uint64_t(i - 3) * kMs, 26 * kMs});
        b->tick(t, lwps);
      }
      if (to == 6) b->goodbye(at(301), 0);
      return b;
    };
    SessionModel whole;
    frames(0, 6, true)->applyTo(&whole);
    const TimeRange last{at(240), at(260)};
    const std::vector<TickPoint> wholeTicks = whole.ticks(last);
    QCOMPARE(wholeTicks.size(), size_t(1));
    // The main thread's 1 ms in 50 ms, the worker's 26 ms in 249 ms.
    const float expected = float(1.0 / 50 + 26.0 / 249);
    QVERIFY2(std::fabs(wholeTicks[0].runqueueThreads - expected) < 1e-6f,
             qPrintable(QString::number(wholeTicks[0].runqueueThreads)));
    // Segments from 120 and 220 ms, each given the one before's samples,
    // each read a tick past its end (Sequence::readPast): the one before
    // the worker's first reading holds it too, after the edge.
    auto segment = [&](SessionModel *m, const SessionModel *before, int64_t t, int from, int to) {
      frames(0, 0, true)->applyTo(m);
      m->carrySamples(before->samplesBefore(t));
      m->knownFrom(t);
      frames(from, to, false)->applyTo(m);
    };
    SessionModel first, second, third;
    frames(0, 3, true)->applyTo(&first);
    segment(&second, &first, at(120), 2, 5);
    segment(&third, &second, at(220), 4, 6);
    const std::vector<TickPoint> thirdTicks = third.ticks(last);
    QCOMPARE(thirdTicks.size(), size_t(1));
    QCOMPARE(thirdTicks[0].runqueueThreads, wholeTicks[0].runqueueThreads);
  }

  // The report prints each counter
  // under its key: from the session's start, in seconds or as a count.
  void everyCounterReachesTheReport() {
    SessionModel m;
    begin(&m);
    for (int n = 1; n <= 3; n++) applyTick(&m, at(10 * n), n);
    end(&m);
    const QJsonObject r = reportJson(m);
    QCOMPARE(r["sync_objects"].toArray().size(), 1);
    QCOMPARE(r["threads"].toArray().size(), 1);
    const QJsonObject o = r["sync_objects"].toArray()[0].toObject();
    const QJsonObject l = r["threads"].toArray()[0].toObject()["lwp"].toObject();
    auto expect = [](const QJsonValue &v, uint64_t want, CounterUnit unit) {
      if (unit == CounterUnit::Ns)
        QCOMPARE(v.toDouble(), double(want) / 1e9);
      else
        QCOMPARE(v.toInteger(), qint64(want));
    };
#define TM_SYNC_COUNTER(field, number, index, member, merge, json_key, unit, known) \
  if (*json_key) expect(o[json_key], value(number, 3), CounterUnit::unit);
#include "counters.def"
    // No hardware counters in this session: those are null.
#define TM_LWP_REPORTED(field, number, index, member, json_key, unit, known, text) \
  if (*json_key && CounterKnown::known == CounterKnown::Hardware)                  \
    QVERIFY(l[json_key].isNull());                                                 \
  else if (*json_key)                                                              \
    expect(l[json_key], value(number, 3), CounterUnit::unit);
#define TM_LWP_COUNTER TM_LWP_REPORTED
#define TM_LWP_EXTRA TM_LWP_REPORTED
#include "counters.def"
#undef TM_LWP_REPORTED
  }

  // Above 2^58 each is damage: clamped, and counted once per counter.
  void frameCheckClampsEveryCounter() {
    SessionModel m;
    begin(&m);
    applyTick(&m, at(10), 1, uint64_t(1) << 60);
    end(&m);
    const int counters = 0
#define TM_SYNC_COUNTER(...) +1
#define TM_LWP_COUNTER(...) +1
#define TM_LWP_EXTRA(...) +1
#define TM_LWP_UNKEPT(...) +1
#define TM_CPU_COUNTER(...) +1
#include "counters.def"
        ;
    const QString want = QStringLiteral("clamped %1 counters above 2^58").arg(counters);
    QVERIFY2(m.info().inputWarnings.filter(want).size() == 1,
             qPrintable(m.info().inputWarnings.join(QStringLiteral("; "))));
    QCOMPARE(m.syncDelta(0, TimeRange{INT64_MIN, at(40)}).acquisitions, limits::kMaxCounter);
  }
};

QTEST_GUILESS_MAIN(TestModelCounters)
#include "test_model_counters.moc"
