// Bounded live memory (SessionModel::keepDetailFor): a model that lets its
// old intervals go keeps the whole run's totals of one that holds them all,
// to the nanosecond; the detail it let go reads back from the session's
// spool (a capture still being written: no index yet) as it was; and its
// memory stops growing with the run's length.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <map>

#include "busy_capture.h"
#include "capturewindow.h"
#include "framedecoder.h"
#include "modelinvariants.h"
#include "reportjson.h"
#include "sessionmodel.h"
#include "synthstream.h"

using namespace tmon;

namespace {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kKeepNs = 20 * kSec;

QString writeCapture(const QTemporaryDir &dir, const char *name, int threads, int seconds) {
  const QString path = dir.filePath(QString::fromLatin1(name));
  return busycap::writeFile(path, threads, uint64_t(seconds) * kSec) ? path : QString();
}

// Feeds the capture to each model a chunk at a time, as a live connection
// would, each settled after every chunk (what a shown page does); calls
// probe(model 0) after each chunk.
template <typename Probe>
bool feed(const QString &path, const std::vector<SessionModel *> &models, Probe &&probe) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return false;
  std::vector<std::unique_ptr<FrameDecoder>> decs;
  for (SessionModel *m : models) decs.push_back(std::make_unique<FrameDecoder>(m));
  while (!f.atEnd()) {
    const QByteArray chunk = f.read(64 * 1024);
    for (size_t i = 0; i < models.size(); i++) {
      if (!decs[i]->feed(chunk.constData(), size_t(chunk.size()))) return false;
      models[i]->settleNow();
    }
    probe(*models[0]);
  }
  for (SessionModel *m : models) m->markEnded();
  return true;
}

bool sameCells(const std::vector<WaitPair> &a, const std::vector<WaitPair> &b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const WaitPair &x, const WaitPair &y) {
                      return x.waiter == y.waiter && x.holder == y.holder && x.count == y.count &&
                             x.waitNs == y.waitNs;
                    });
}

// 4 threads that spend 6 ms of every 10 waiting for one mutex (a
// serialising lock: a finding), a second mutex taken now and then, and a
// barrier every second (whose waits a bounded model keeps), for seconds.
bool writeContended(const QString &path, int seconds) {
  using namespace tmtest;
  StreamBuilder b;
  b.setExe("/opt/bin/loop");
  b.hello(false);
  b.syncObject(1, THREADMON__SYNC_KIND__KIND_MUTEX, 0x601040, "/opt/bin/loop", "table_lock",
               nullptr);
  b.syncObject(2, THREADMON__SYNC_KIND__KIND_MUTEX, 0x601080, "/opt/bin/loop", "log_lock", nullptr);
  b.syncObject(3, THREADMON__SYNC_KIND__KIND_BARRIER, 0x6010c0, "/opt/bin/loop", "round", nullptr);
  b.stack(7, {"loop!update+0x12 (loop.c:40)", "loop!worker+0x30 (loop.c:60)"});
  constexpr uint32_t kFirst = 11, kLast = 14;
  for (uint32_t tid = kFirst; tid <= kLast; tid++)
    b.threadStart(tid, kT0, qPrintable(QStringLiteral("looper-%1").arg(tid - kFirst)),
                  "loop!worker");
  const auto run = THREADMON__THREAD_STATE__STATE_RUNNING;
  for (int step = 0; step < seconds * 100; step++) {
    const int64_t p = kT0 + int64_t(step) * 10 * kMs;
    for (uint32_t tid = kFirst; tid <= kLast; tid++) {
      const uint32_t next = tid == kLast ? kFirst : tid + 1;
      if (step % 100 == 50) {  // the round: the last to arrive releases it
        b.transition(tid, p + kMs + (tid - kFirst) * 500'000,
                     THREADMON__THREAD_STATE__STATE_BLOCKED_BARRIER, 3);
        b.transition(tid, p + kMs + (kLast - kFirst) * 500'000, run, 0, 0, kLast);
      }
      if (step % 7 == int(tid % 7)) {
        b.transition(tid, p + 3 * kMs, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 2, next);
        b.transition(tid, p + 3 * kMs + 300'000, run, 0, 0, next);
      }
      b.transition(tid, p + 4 * kMs + tid * 1000, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 1,
                   next);
      b.transition(tid, p + 10 * kMs, run, 0, 0, next);
    }
    const uint64_t t = uint64_t(step + 1) * 10 * kMs, used = t / 2;
    b.tick(p + 10 * kMs, {},
           {Cpu{0, used, 0, 0, t - used, 0, 0, 0, 0}, Cpu{1, used, 0, 0, t - used, 0, 0, 0, 0}}, {},
           0, {Site{1, 7, uint64_t(4 * (step + 1)), uint64_t(24 * (step + 1)) * kMs}});
  }
  b.goodbye(kT0 + int64_t(seconds) * 1000 * kMs, 0);
  return b.writeFile(path);
}

// writeCapture's 50 s of 12 threads read into a model that holds it all and
// one that keeps kKeepNs of detail.
bool readBoth(const QTemporaryDir &dir, SessionModel *all, SessionModel *bounded) {
  const QString path = writeCapture(dir, "live.tmcap", 12, 50);
  bounded->keepDetailFor(kKeepNs);
  return !path.isEmpty() && feed(path, {bounded, all}, [](const SessionModel &) {});
}

}  // namespace

class TestModelLive : public QObject {
  Q_OBJECT

 private slots:
  void evictionKeepsWholeRunTotals() {
    QTemporaryDir dir;
    SessionModel all, bounded;
    QVERIFY(readBoth(dir, &all, &bounded));
    const int64_t start = all.startNs(), end = all.latestNs();
    QCOMPARE(bounded.latestNs(), end);
    // Something left: the cut is a tick at least kKeepNs behind the end.
    QVERIFY(bounded.detailFromNs() > start + 10 * kSec);
    QVERIFY(bounded.detailFromNs() <= end - kKeepNs);
    QVERIFY(bounded.memoryBytes() < all.memoryBytes());
    const TimeRange run{start, end};
    const TimeRange old{start, bounded.detailFromNs()};
    QCOMPARE(bounded.threadCount(), all.threadCount());
    int64_t sleeps = 0;
    for (int i = 0; i < all.threadCount(); i++) {
      QCOMPARE(bounded.thread(i).tid, all.thread(i).tid);
      QVERIFY(bounded.intervals(i, TimeRange{start, bounded.detailFromNs()}).empty());
      QVERIFY(!all.intervals(i, old).empty());
      for (const TimeRange &r : {run, old, TimeRange{bounded.detailFromNs(), end}}) {
        const StateTimes a = all.threadStates(i, r), b = bounded.threadStates(i, r);
        QCOMPARE(b.lifetimeNs, a.lifetimeNs);
        for (size_t s = 0; s < a.ns.size(); s++)
          QVERIFY2(b.ns[s] == a.ns[s],
                   qPrintable(QStringLiteral("thread %1 state %2: %3 against %4")
                                  .arg(i)
                                  .arg(s)
                                  .arg(b.ns[s])
                                  .arg(a.ns[s])));
        QCOMPARE(bounded.threadCpuTimes(i, r), all.threadCpuTimes(i, r));
        QCOMPARE(bounded.lwpDelta(i, r).oncpuNs, all.lwpDelta(i, r).oncpuNs);
        QCOMPARE(bounded.chosenSleepNs(i, r), all.chosenSleepNs(i, r));
      }
      sleeps += all.chosenSleepNs(i, run);
    }
    QVERIFY(sleeps > 0);  // the naps were there to keep
    for (int k = 0; k < all.syncObjectCount(); k++)
      QCOMPARE(bounded.syncDelta(k, run).waitNs, all.syncDelta(k, run).waitNs);
    // The findings of the whole run say the same.
    const std::vector<Finding> fa = all.findings(run), fb = bounded.findings(run);
    QCOMPARE(fb.size(), fa.size());
    for (size_t k = 0; k < fa.size(); k++) QCOMPARE(fb[k].message, fa[k].message);
  }

  // Under a StatesMemo a window's states and CPU times (derived in one walk
  // where the detail is held, apart over evicted time) are those asked
  // without one, whichever is asked first.
  void statesMemoGivesTheSameTimes() {
    QTemporaryDir dir;
    SessionModel all, bounded;
    QVERIFY(readBoth(dir, &all, &bounded));
    const int64_t start = all.startNs(), end = all.latestNs(), cut = bounded.detailFromNs();
    int64_t onCpu = 0;
    for (const SessionModel *m : {&all, &bounded})
      for (const TimeRange &r : {TimeRange{start, end}, TimeRange{start, cut}, TimeRange{cut, end},
                                 TimeRange{cut + kSec / 3, end - kSec}}) {
        std::vector<StateTimes> states;
        std::vector<std::vector<int64_t>> cpus;
        for (int i = 0; i < m->threadCount(); i++) {
          states.push_back(m->threadStates(i, r));
          cpus.push_back(m->threadCpuTimes(i, r));
          for (int64_t ns : cpus.back()) onCpu += ns;
        }
        const SessionModel::StatesMemo memo(*m, r);
        for (int i = 0; i < m->threadCount(); i++)
          for (int k = 0; k < 2; k++) {
            if ((i + k) % 2) {
              QCOMPARE(m->threadCpuTimes(i, r), cpus[size_t(i)]);
              continue;
            }
            const StateTimes st = m->threadStates(i, r);
            QCOMPARE(st.lifetimeNs, states[size_t(i)].lifetimeNs);
            QVERIFY(st.ns == states[size_t(i)].ns);
          }
      }
    QVERIFY(onCpu > 0);
  }

  // The waits that left a bounded model (mutex waits: 2.3 million a minute
  // for 100 busy threads) are summed per waiter, holder and releaser: over
  // the whole run its waits' sums, who-blocked-whom, findings, invariants
  // and the report are those of the model that holds every wait.
  void evictedWaitsKeepTheWholeRunsSums() {
    QTemporaryDir dir;
    const QString path = dir.filePath("waits.tmcap");
    QVERIFY(writeContended(path, 70));
    SessionModel all, bounded;
    bounded.keepDetailFor(kKeepNs);
    QVERIFY(feed(path, {&bounded, &all}, [](const SessionModel &) {}));
    const TimeRange run = all.resolve(Window::wholeRun());
    QCOMPARE(bounded.resolve(Window::wholeRun()).t1, run.t1);
    uint64_t folded = 0, waits = 0;
    for (int k = 0; k < all.syncObjectCount(); k++) {
      const uint32_t id = all.syncObject(k).id;
      std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, int64_t>> a, b;
      for (const WaitRecord &w : all.waits(id, run)) {
        QCOMPARE(w.count, 1u);
        auto &c = a[{w.waiter, w.blamed()}];
        c.first += w.count;
        c.second += w.end - w.start;
        waits++;
      }
      for (const WaitRecord &w : bounded.waits(id, run)) {
        QVERIFY(w.start >= run.t0 && w.end <= run.t1 && w.start <= w.end);
        auto &c = b[{w.waiter, w.blamed()}];
        c.first += w.count;
        c.second += w.end - w.start;
        if (w.count > 1) folded += w.count;
      }
      QVERIFY(a == b);
      QVERIFY(sameCells(bounded.waitMatrix(run, id), all.waitMatrix(run, id)));
    }
    qInfo("%llu waits, %llu of them folded; model bytes: bounded %zu, holding all %zu",
          (unsigned long long)waits, (unsigned long long)folded, bounded.memoryBytes(),
          all.memoryBytes());
    QVERIFY(folded > waits / 3);  // a good part of the run's waits left
    QVERIFY(sameCells(bounded.waitMatrix(run), all.waitMatrix(run)));
    const std::vector<Finding> fa = all.findings(run), fb = bounded.findings(run);
    QVERIFY(!fa.empty());  // the serialising mutex
    QCOMPARE(fb.size(), fa.size());
    for (size_t k = 0; k < fa.size(); k++) {
      QCOMPARE(fb[k].message, fa[k].message);
      QCOMPARE(fb[k].evidence, fa[k].evidence);
      QCOMPARE(fb[k].threads, fa[k].threads);
      QCOMPARE(fb[k].objects, fa[k].objects);
      QCOMPARE(fb[k].t0, fa[k].t0);
      QCOMPARE(fb[k].t1, fa[k].t1);
    }
    QCOMPARE(checkInvariants(bounded, run), checkInvariants(all, run));
    // The report of the live session, byte for byte.
    QCOMPARE(reportJson(bounded), reportJson(all));
    // A range that cuts through the waits that left has none of them (the
    // spool has them); the held ones are all there.
    const TimeRange late{bounded.detailFromNs() + kSec, run.t1};
    const TimeRange cut{run.t0 + kSec, run.t1};
    for (int k = 0; k < all.syncObjectCount(); k++) {
      const uint32_t id = all.syncObject(k).id;
      QCOMPARE(bounded.waits(id, late).size(), all.waits(id, late).size());
      for (const WaitRecord &w : bounded.waits(id, cut)) QCOMPARE(w.count, 1u);
    }
  }

  // The spool is written as the stream arrives and has no index until the
  // session ends: a window of it opens by one scan and holds the detail the
  // live model let go, as the model held it.
  void evictedDetailReadsBackFromTheSpool() {
    QTemporaryDir dir;
    const QString path = writeCapture(dir, "whole.tmcap", 8, 45);
    QVERIFY(!path.isEmpty());
    QVERIFY(busycap::dropIndex(path));  // what a spool still open looks like
    SessionModel all, bounded;
    bounded.keepDetailFor(kKeepNs);
    QVERIFY(feed(path, {&bounded, &all}, [](const SessionModel &) {}));
    CaptureWindow spool;
    QVERIFY2(spool.open(path), qPrintable(spool.error()));
    QVERIFY(!spool.indexFromTail());
    const TimeRange r{all.startNs() + 10 * kSec, all.startNs() + 12 * kSec};
    QVERIFY(r.t1 < bounded.detailFromNs());
    SessionModel back;
    QCOMPARE(spool.load(r.t0, r.t1, &back).status, CaptureLoadResult::Complete);
    for (int i = 0; i < all.threadCount(); i++) {
      const int j = back.indexOfTid(all.thread(i).tid);
      QVERIFY(j >= 0);
      QVERIFY(bounded.intervals(i, r).empty());
      const std::vector<StateInterval> a = all.intervals(i, r), b = back.intervals(j, r);
      QCOMPARE(b.size(), a.size());
      for (size_t k = 0; k < a.size(); k++) {
        QCOMPARE(b[k].start, a[k].start);
        QCOMPARE(b[k].end, a[k].end);
        QCOMPARE(int(b[k].state), int(a[k].state));
        QCOMPARE(b[k].object, a[k].object);
      }
    }
  }

  // Memory measured as the run goes on, on a stream whose growth is all
  // state intervals (threads switching on and off a CPU: no waits, which
  // the model still holds whole at 40 bytes each): with a bound, the model
  // holds at 120 s about what it held at 60 s (20-30 s of detail, the
  // compact totals, a tick time and point a tick); without one its
  // intervals double.
  void memoryStopsGrowingWithTheRun() {
    constexpr int kThreads = 20;
    SessionModel bounded, all;
    bounded.keepDetailFor(kKeepNs);
    std::vector<tmtest::Lwp> lwps;
    for (int k = 0; k < kThreads; k++) lwps.push_back(tmtest::Lwp{uint32_t(100 + k), 0, 0, 0, 0});
    size_t mid = 0, midAll = 0;
    for (int sec = 0; sec < 120; sec++) {
      tmtest::StreamBuilder b;
      if (sec == 0) {
        b.hello(true);
        for (const tmtest::Lwp &l : lwps) b.threadStart(l.tid, tmtest::kT0, "worker", "work");
      }
      for (int tick = 0; tick < 100; tick++) {
        const int64_t t = tmtest::kT0 + (int64_t(sec) * 100 + tick) * 10 * tmtest::kMs;
        for (tmtest::Lwp &l : lwps) {
          // Four times a tick on a CPU for 0.5-1.3 ms, asleep in between.
          const int64_t on = (5 + l.tid % 5) * tmtest::kMs / 10 + tick % 3 * 1000;
          for (int k = 0; k < 4; k++) {
            const int64_t in = t + k * 2500 * 1000 + 100'000;
            b.cpuSwitch(l.tid, in, l.tid % 2, THREADMON__SWITCH_KIND__SWITCH_IN);
            b.cpuSwitch(l.tid, in + on, l.tid % 2, THREADMON__SWITCH_KIND__SWITCH_OUT);
          }
          l.oncpu += uint64_t(4 * on);
          l.user += uint64_t(4 * on);
          l.vol += 4;
          l.readNs = t + 10 * tmtest::kMs;
        }
        b.tick(t + 10 * tmtest::kMs, lwps);
      }
      b.applyTo(&bounded);
      b.applyTo(&all);
      bounded.settleNow();
      all.settleNow();
      if (sec == 59) {
        mid = bounded.memoryBytes();
        midAll = all.memoryBytes();
      }
    }
    const size_t end = bounded.memoryBytes(), endAll = all.memoryBytes();
    qInfo("model bytes at 60 s / 120 s: bounded %zu / %zu, holding all %zu / %zu", mid, end, midAll,
          endAll);
    QVERIFY(endAll - midAll > 10 * 1024 * 1024);  // the measurement sees the intervals
    QVERIFY2(end < mid + (endAll - midAll) / 4, "the bounded model grew with the run");
    // And what it holds is still right: the whole run's on-CPU time.
    const TimeRange run{bounded.startNs(), bounded.latestNs()};
    for (int i = 0; i < bounded.threadCount(); i++)
      QCOMPARE(bounded.threadStates(i, run).ns[size_t(FinalState::OnCpu)],
               all.threadStates(i, run).ns[size_t(FinalState::OnCpu)]);
  }
};

QTEST_GUILESS_MAIN(TestModelLive)
#include "test_model_live.moc"
