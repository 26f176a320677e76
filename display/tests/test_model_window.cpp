// A window of a long capture, loaded through its index (CaptureWindow),
// against the whole capture loaded from the start: the same states,
// counters and waits inside the window, names from the descriptions sent
// long before it, and memory that grows with the window, not the capture.
#include <QTemporaryDir>
#include <QtTest>

#include "busy_capture.h"
#include "capturereader.h"
#include "capturewindow.h"
#include "capturewriter.h"
#include "runsummary.h"
#include "sessionmodel.h"
#include "synthstream.h"

using namespace tmon;

namespace {

constexpr int64_t kSec = 1'000'000'000;

QString writeCapture(const QTemporaryDir &dir, const char *name, int threads, int seconds,
                     bool summaries = false) {
  const QString path = dir.filePath(QString::fromLatin1(name));
  CaptureWriter w;
  w.setSummaries(summaries);
  if (!w.open(path) || !busycap::write(&w, threads, uint64_t(seconds) * kSec) || !w.close())
    return QString();
  return path;
}

// Everything a view asks of [r.t0, r.t1) is the same in both models.
void compareInside(const SessionModel &whole, const SessionModel &window, const TimeRange &r) {
  QCOMPARE(window.threadCount(), whole.threadCount());
  for (int i = 0; i < whole.threadCount(); i++) {
    const ThreadInfo &t = whole.thread(i);
    const int j = window.indexOfTid(t.tid);
    QVERIFY(j >= 0);
    QCOMPARE(window.thread(j).name, t.name);
    QCOMPARE(window.thread(j).startRoutine, t.startRoutine);
    const StateTimes a = whole.threadStates(i, r), b = window.threadStates(j, r);
    for (size_t s = 0; s < a.ns.size(); s++) QCOMPARE(b.ns[s], a.ns[s]);
    QCOMPARE(b.lifetimeNs, a.lifetimeNs);
    QCOMPARE(window.lwpDelta(j, r).oncpuNs, whole.lwpDelta(i, r).oncpuNs);
    QCOMPARE(window.intervals(j, r).size(), whole.intervals(i, r).size());
  }
  QCOMPARE(window.syncObjectCount(), whole.syncObjectCount());
  for (int k = 0; k < whole.syncObjectCount(); k++) {
    const uint32_t id = whole.syncObject(k).id;
    const int j = window.indexOfSyncObject(id);
    QVERIFY(j >= 0);
    QCOMPARE(window.syncObject(j).symbol, whole.syncObject(k).symbol);
    QCOMPARE(window.syncDelta(j, r).waitNs, whole.syncDelta(k, r).waitNs);
    // Waits that began inside (one open at the start began before it).
    auto begun = [&r](const std::vector<WaitRecord> &ws) {
      return std::count_if(ws.begin(), ws.end(),
                           [&r](const WaitRecord &w) { return w.start >= r.t0; });
    };
    QCOMPARE(begun(window.waits(id, r)), begun(whole.waits(id, r)));
  }
}

QString cellMismatch(uint32_t tid, int64_t bucket, size_t state, int64_t got, int64_t want) {
  return QStringLiteral("tid %1 bucket %2 state %3: %4 against %5")
      .arg(tid)
      .arg(bucket)
      .arg(state)
      .arg(got)
      .arg(want);
}

// The 2 s from fromSec into the session, loaded through cw, against whole.
void windowMatches(const CaptureWindow &cw, const SessionModel &whole, int fromSec) {
  const int64_t t0 = int64_t(busycap::kStartNs) + fromSec * kSec, t1 = t0 + 2 * kSec;
  SessionModel window;
  QCOMPARE(cw.load(t0, t1, &window).status, CaptureLoadResult::Complete);
  compareInside(whole, window, TimeRange{t0, t1});
}

}  // namespace

class TestModelWindow : public QObject {
  Q_OBJECT

 private slots:
  void windowMatchesTheWholeCapture() {
    QTemporaryDir dir;
    const QString path = writeCapture(dir, "busy.tmcap", 40, 14);
    QVERIFY(!path.isEmpty());
    SessionModel whole;
    QCOMPARE(CaptureReader::load(path, &whole).status, CaptureLoadResult::Complete);
    CaptureWindow cw;
    QVERIFY2(cw.open(path), qPrintable(cw.error()));
    QVERIFY(cw.indexFromTail());
    QVERIFY(cw.records() > 10);
    const int64_t t0 = int64_t(busycap::kStartNs) + 10 * kSec, t1 = t0 + 2 * kSec;
    SessionModel window;
    QCOMPARE(cw.load(t0, t1, &window).status, CaptureLoadResult::Complete);
    QCOMPARE(window.info().exe, whole.info().exe);
    QVERIFY(!window.info().ended);  // the capture goes on after the window
    compareInside(whole, window, TimeRange{t0, t1});
    // Nothing is claimed of the time before what was loaded.
    const TimeRange before{window.startNs(), t0 - 2 * kSec};
    for (int j = 0; j < window.threadCount(); j++)
      QCOMPARE(window.threadStates(j, before).lifetimeNs, int64_t(0));
    // A window at the end ends the session where the whole one ends.
    SessionModel last;
    QCOMPARE(cw.load(whole.latestNs() - kSec, whole.latestNs(), &last).status,
             CaptureLoadResult::Complete);
    QVERIFY(last.info().ended);
    QCOMPARE(last.latestNs(), whole.latestNs());
    compareInside(whole, last, TimeRange{whole.latestNs() - kSec, whole.latestNs()});
    // A Sequence reads on from a window into the same model, each record
    // once: every window it reads matches the whole capture inside, as a
    // window loaded alone does, and its frames add up to one load of them.
    const int64_t s0 = int64_t(busycap::kStartNs) + 4 * kSec;  // of 14 s
    SessionModel model;
    CaptureWindow::Sequence seq(cw, &model, s0);
    uint64_t frames = 0;
    for (int w = 0; w < 3; w++) {
      const TimeRange r{s0 + w * 2 * kSec, s0 + (w + 1) * 2 * kSec};
      const CaptureLoadResult res = seq.readThrough(r.t1);
      QCOMPARE(res.status, CaptureLoadResult::Complete);
      frames += res.frames;
      compareInside(whole, model, r);
    }
    QCOMPARE(seq.readThrough(s0 + 6 * kSec).frames, uint64_t(0));  // nothing twice
    SessionModel once;
    QCOMPARE(cw.load(s0, s0 + 6 * kSec, &once).frames, frames);
    QVERIFY(!seq.atEnd());
    QVERIFY(!model.info().ended);
    QCOMPARE(seq.readThrough(whole.latestNs()).status, CaptureLoadResult::Complete);
    QVERIFY(seq.atEnd());
    QVERIFY(model.info().ended);
    QCOMPARE(model.latestNs(), whole.latestNs());
    compareInside(whole, model, TimeRange{s0 + 6 * kSec, whole.latestNs()});
  }

  void cutShortCaptureOpensByOneScan() {
    QTemporaryDir dir;
    const QString path = writeCapture(dir, "cut.tmcap", 8, 12);
    QVERIFY(!path.isEmpty() && busycap::dropIndex(path));
    SessionModel whole;
    QCOMPARE(CaptureReader::load(path, &whole).status, CaptureLoadResult::Complete);
    CaptureWindow cw;
    QVERIFY2(cw.open(path), qPrintable(cw.error()));
    QVERIFY(!cw.indexFromTail());
    windowMatches(cw, whole, 6);
  }

  void notACaptureIsRefused() {
    QTemporaryDir dir;
    QFile f(dir.filePath("junk.tmcap"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(QByteArray(4096, 'x'));
    f.close();
    CaptureWindow cw;
    QVERIFY(!cw.open(f.fileName()));
    QVERIFY(!cw.error().isEmpty());
  }

  // Each bucket of the summary, built a chunk at a time, holds what the
  // whole capture's model says of it; the buckets add up to the whole run
  // but for a nanosecond of rounding per bucket (a split mixed interval).
  // Under 30 s: a model holding more thins its older counter samples
  // (CounterSeries::kRecentNs) before it derives states from them, which a
  // chunk's model does not.
  void summaryMatchesTheWholeCapture() {
    QTemporaryDir dir;
    const QString path = writeCapture(dir, "sum.tmcap", 8, 19);
    QVERIFY(!path.isEmpty());
    SessionModel whole;
    QCOMPARE(CaptureReader::load(path, &whole).status, CaptureLoadResult::Complete);
    CaptureWindow cw;
    QVERIFY(cw.open(path));
    RunSummary sum;
    int chunks = 0;
    QVERIFY(sum.build(cw, [&chunks](double) { return ++chunks > 0; }, 5 * RunSummary::kBucketNs));
    QCOMPARE(chunks, 4);
    QCOMPARE(sum.startNs(), whole.startNs());
    QVERIFY(sum.endNs() >= whole.latestNs());
    QCOMPARE(int(sum.tids().size()), whole.threadCount());
    const int64_t n = int64_t(sum.buckets());
    for (int i = 0; i < whole.threadCount(); i++) {
      const uint32_t tid = whole.thread(i).tid;
      for (int64_t k = 0; k < n; k++) {
        const int64_t from = sum.startNs() + k * RunSummary::kBucketNs;
        const TimeRange b{from, std::min(whole.latestNs(), from + RunSummary::kBucketNs)};
        const StateTimes a = whole.threadStates(i, b), s = sum.states(tid, b);
        for (size_t st = 0; st < a.ns.size(); st++)
          QVERIFY2(s.ns[st] == a.ns[st],
                   qPrintable(cellMismatch(tid, int64_t(k), st, s.ns[st], a.ns[st])));
      }
      const TimeRange run{whole.startNs(), whole.latestNs()};
      const StateTimes a = whole.threadStates(i, run), s = sum.states(tid, run);
      QCOMPARE(s.lifetimeNs, a.lifetimeNs);
      for (size_t st = 0; st < a.ns.size(); st++) QVERIFY(std::abs(s.ns[st] - a.ns[st]) <= n);
    }
  }

  // The writer's Summary records say of every thread and second exactly
  // what the whole capture's model says (to the ns), and so their sums;
  // the records change nothing else a reader derives, windows included.
  void summaryRecordsMatchTheWholeCapture() {
    QTemporaryDir dir;
    const QString path = writeCapture(dir, "sum.tmcap", 8, 23, true);
    const QString plain = writeCapture(dir, "plain.tmcap", 8, 23);
    QVERIFY(!path.isEmpty() && !plain.isEmpty());
    SessionModel whole, without;
    QCOMPARE(CaptureReader::load(path, &whole).status, CaptureLoadResult::Complete);
    QCOMPARE(CaptureReader::load(plain, &without).status, CaptureLoadResult::Complete);
    CaptureWindow cw;
    QVERIFY(cw.open(path));
    QVERIFY(cw.hasSummaries());
    RunSummary sum;
    QVERIFY(sum.read(cw));
    QCOMPARE(sum.clamped(), size_t(0));
    QCOMPARE(sum.startNs(), whole.startNs());
    QVERIFY(sum.endNs() >= whole.latestNs());
    QCOMPARE(int(sum.tids().size()), whole.threadCount());
    const TimeRange run{whole.startNs(), whole.latestNs()};
    int64_t blocked = 0;
    for (int i = 0; i < whole.threadCount(); i++) {
      const uint32_t tid = whole.thread(i).tid;
      StateTimes total, summed;
      for (size_t k = 0; k < sum.buckets(); k++) {
        const int64_t from = sum.startNs() + int64_t(k) * RunSummary::kBucketNs;
        const TimeRange b{from, std::min(whole.latestNs(), from + RunSummary::kBucketNs)};
        const StateTimes a = whole.threadStates(i, b), s = sum.bucket(tid, k);
        for (size_t st = 0; st < a.ns.size(); st++) {
          QVERIFY2(s.ns[st] == a.ns[st],
                   qPrintable(cellMismatch(tid, int64_t(k), st, s.ns[st], a.ns[st])));
          total.ns[st] += a.ns[st];
          summed.ns[st] += s.ns[st];
        }
        QCOMPARE(s.lifetimeNs, a.lifetimeNs);
      }
      QCOMPARE(summed.ns, total.ns);
      QCOMPARE(sum.states(tid, run).ns, summed.ns);
      blocked += summed.ns[size_t(FinalState::BlockedMutex)];
      // A reader that ignores Summary frames derives the same as without them.
      const StateTimes w = whole.threadStates(i, run), o = without.threadStates(i, run);
      QCOMPARE(w.ns, o.ns);
    }
    QVERIFY(blocked > 8 * kSec);  // the workers wait about half of the time
    windowMatches(cw, whole, 11);
  }

  // Cut short, a capture's summaries are found by the scan, up to the cut;
  // one written without them has none, and is summed from its detail.
  void summariesOfACutShortCaptureAndNone() {
    QTemporaryDir dir;
    const QString path = writeCapture(dir, "cut.tmcap", 4, 25, true);
    QVERIFY(!path.isEmpty() && busycap::dropIndex(path));
    CaptureWindow cw;
    QVERIFY(cw.open(path));
    QVERIFY(!cw.indexFromTail());
    RunSummary sum;
    QVERIFY(sum.read(cw));
    QVERIFY(sum.buckets() >= 20);
    // Shorter than a chunk: the records come at the end, plain frames (the
    // last record before the index), both seconds of them.
    const QString brief = writeCapture(dir, "brief.tmcap", 1, 2, true);
    CaptureWindow two;
    QVERIFY(two.open(brief));
    QVERIFY(sum.read(two));
    QCOMPARE(sum.buckets(), size_t(2));
    const QString plain = writeCapture(dir, "plain.tmcap", 4, 6);
    CaptureWindow none;
    QVERIFY(none.open(plain));
    QVERIFY(!none.hasSummaries());
    QVERIFY(!sum.read(none));
    QVERIFY(sum.build(none));
    QCOMPARE(int(sum.tids().size()), 6);
  }

  // A seek settles its window on two threads: the same intervals as on one.
  void settledOnTwoThreadsAsOnOne() {
    QTemporaryDir dir;
    const QString path = writeCapture(dir, "busy.tmcap", 40, 6);
    QVERIFY(!path.isEmpty());
    CaptureWindow cw;
    QVERIFY(cw.open(path));
    const int64_t t0 = int64_t(busycap::kStartNs) + 3 * kSec, t1 = t0 + 2 * kSec;
    SessionModel one, two;
    QCOMPARE(cw.load(t0, t1, &one).status, CaptureLoadResult::Complete);
    QCOMPARE(cw.load(t0, t1, &two).status, CaptureLoadResult::Complete);
    one.settleNow(1);
    two.settleNow(2);
    QVERIFY(one.threadCount() > 40);
    QCOMPARE(two.threadCount(), one.threadCount());
    const TimeRange all{one.startNs(), one.latestNs()};
    size_t compared = 0;
    for (int i = 0; i < one.threadCount(); i++) {
      const std::vector<StateInterval> a = one.intervals(i, all), b = two.intervals(i, all);
      auto same = [](const StateInterval &x, const StateInterval &y) {
        return std::tie(x.start, x.end, x.state, x.object, x.cpu) ==
               std::tie(y.start, y.end, y.state, y.object, y.cpu);
      };
      QVERIFY2(std::equal(a.begin(), a.end(), b.begin(), b.end(), same),
               qPrintable(QStringLiteral("thread %1").arg(one.thread(i).tid)));
      compared += a.size();
    }
    QVERIFY(compared > 10'000);
  }

  // The window's model holds the window: one late in a long capture is no
  // bigger than one early in it, and both a small part of the whole.
  // A thread asleep from before a window's warm-up, sampled again inside
  // it (its counters did not move until then): the window counts at most
  // what the whole capture does, never its life before (seen: 13.8 s of run
  // queue in a 3.8 s window for a main thread blocked in pthread_join). The
  // window has no value at its start, so it counts from that sample.
  void asleepThreadCountsNoMoreInAWindow() {
    using tmtest::kMs;
    using tmtest::kT0;
    QTemporaryDir dir;
    const QString path = dir.filePath("asleep.tmcap");
    CaptureWriter w;
    QVERIFY(w.open(path));
    tmtest::StreamBuilder b([&w](Threadmon__Frame &f) { return w.writeFrame(f); });
    b.hello(false);
    b.threadStart(10, kT0, "sleeper", "app!wait");
    // Busy threads sampled every tick: blocks of 64 KiB, a few a second.
    for (uint32_t t = 0; t < 40; t++) b.threadStart(100 + t, kT0, "busy", "app!spin");
    for (int64_t ms = 10; ms <= 12000; ms += 10) {
      std::vector<tmtest::Lwp> lwps;
      for (uint32_t t = 0; t < 40; t++) {
        const uint64_t half = uint64_t(ms * kMs / 2);
        lwps.push_back(tmtest::Lwp{100 + t, half, 0, half, half});
      }
      // Runs its first second, sleeps, runs 1 ms at 7.5 s, sleeps again.
      const uint64_t ran =
          uint64_t(std::min<int64_t>(ms, 1000) * kMs / 4) + uint64_t(ms >= 7500 ? kMs : 0);
      if (ms <= 1000 || ms == 7500) lwps.push_back(tmtest::Lwp{10, ran, 0, ran, ran});
      b.tick(kT0 + ms * kMs, lwps);
    }
    b.goodbye(kT0 + 12000 * kMs + 1, 0);
    QVERIFY(w.close());
    SessionModel whole;
    QCOMPARE(CaptureReader::load(path, &whole).status, CaptureLoadResult::Complete);
    CaptureWindow cw;
    QVERIFY2(cw.open(path), qPrintable(cw.error()));
    QVERIFY(cw.records() > 10);
    const TimeRange r{kT0 + 6000 * kMs, kT0 + 8000 * kMs};
    SessionModel window;
    QCOMPARE(cw.load(r.t0, r.t1, &window).status, CaptureLoadResult::Complete);
    const LwpDelta a = whole.lwpDelta(whole.indexOfTid(10), r);
    const LwpDelta d = window.lwpDelta(window.indexOfTid(10), r);
    QCOMPARE(a.runqueueNs, uint64_t(kMs));
    QVERIFY2(d.runqueueNs <= a.runqueueNs, qPrintable(QString::number(d.runqueueNs)));
    QVERIFY(d.oncpuNs <= a.oncpuNs);
    QVERIFY(d.userNs <= a.userNs);
    // Across an edge between two segments' models (an export in segments,
    // a streamed report) the next one is given each thread's last sample
    // before its first record (Sequence::carrySamplesFrom): the 1 ms the
    // sleeper ran and waited for a CPU at 7.5 s is read against its sample
    // at 1 s, as the whole read reads it (without: neither in the segment).
    SessionModel first, next;
    CaptureWindow::Sequence before(cw, &first, INT64_MIN / 2);
    QCOMPARE(before.readThrough(r.t0).status, CaptureLoadResult::Complete);
    CaptureWindow::Sequence after(cw, &next, r.t0);
    after.carrySamplesFrom(first);
    QCOMPARE(after.readThrough(kT0 + 12000 * kMs).status, CaptureLoadResult::Complete);
    const int j = next.indexOfTid(10);
    QCOMPARE(next.lwpDelta(j, r).oncpuNs, a.oncpuNs);
    QCOMPARE(next.lwpDelta(j, r).runqueueNs, a.runqueueNs);
    const StateTimes s = whole.threadStates(whole.indexOfTid(10), r), t = next.threadStates(j, r);
    for (size_t k = 0; k < s.ns.size(); k++)
      QVERIFY2(t.ns[k] == s.ns[k], qPrintable(cellMismatch(10, 0, k, t.ns[k], s.ns[k])));
    compareInside(whole, next, r);
  }

  void memoryGrowsWithTheWindowNotTheCapture() {
    QTemporaryDir dir;
    const QString path = writeCapture(dir, "long.tmcap", 20, 60);
    QVERIFY(!path.isEmpty());
    SessionModel whole;
    QCOMPARE(CaptureReader::load(path, &whole).status, CaptureLoadResult::Complete);
    whole.settleNow();
    CaptureWindow cw;
    QVERIFY(cw.open(path));
    QVERIFY(cw.descriptionBytes() < 64 * 1024);
    const int64_t start = int64_t(busycap::kStartNs);
    SessionModel early, late;
    cw.load(start + 5 * kSec, start + 7 * kSec, &early);
    cw.load(start + 55 * kSec, start + 57 * kSec, &late);
    early.settleNow();
    late.settleNow();
    qInfo("whole %zu bytes, early window %zu, late window %zu", whole.memoryBytes(),
          early.memoryBytes(), late.memoryBytes());
    QVERIFY(late.memoryBytes() < early.memoryBytes() * 3 / 2);
    QVERIFY(late.memoryBytes() < whole.memoryBytes() / 6);
  }
};

QTEST_GUILESS_MAIN(TestModelWindow)
#include "test_model_window.moc"
