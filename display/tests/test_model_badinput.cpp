// Hostile input: mutants of real streams that crashed, hung or exhausted the
// readers (issue 11), and the inputs the fuzzer found (display/fuzz/). Each
// must load without a crash, keep what was good, and say in one line what it
// dropped or clamped.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

#include "busy_capture.h"
#include "capturewindow.h"
#include "findings.h"
#include "framecheck.h"
#include "framedecoder.h"
#include "reportjson.h"
#include "reportrows.h"
#include "reportstream.h"
#include "reporttext.h"
#include "sessionmodel.h"
#include "synthscenarios.h"
#include "synthstream.h"

using namespace tmon;
using namespace tmtest;

namespace {

int64_t at(int64_t ms) { return kT0 + ms * kMs; }
constexpr uint64_t kTwo63 = uint64_t(1) << 63;

// Three threads meet at barrier 5 every 10 ms for 200 ms; 12 arrives last.
// No Goodbye: the tests add what they need after it.
StreamBuilder barrierSession() {
  StreamBuilder b;
  b.hello(false);
  for (uint32_t tid : {10u, 11u, 12u}) b.threadStart(tid, kT0, "w", "app!worker");
  b.syncObject(5, THREADMON__SYNC_KIND__KIND_BARRIER, 0x5000, "app", "phase", nullptr);
  for (int r = 0; r < 20; r++) {
    for (uint32_t tid : {10u, 11u})
      b.transition(tid, at(10 * r + 2), THREADMON__THREAD_STATE__STATE_BLOCKED_BARRIER, 5);
    for (uint32_t tid : {10u, 11u})
      b.transition(tid, at(10 * r + 9), THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, 12);
  }
  for (int t = 10; t <= 200; t += 10) b.tick(at(t), {});
  return b;
}

// The whole report's worth of queries, as threadmon-report and the views ask.
void queryEverything(const SessionModel &m) {
  TimeRange all = m.resolve(Window::wholeRun());
  QVERIFY(all.t1 >= all.t0);
  for (int i = 0; i < m.threadCount(); i++) {
    m.threadStates(i, all);
    m.intervals(i, all);
    m.lwpDelta(i, all);
    m.threadCpuTimes(i, all);
  }
  for (int c = 0; c < m.cpuCount(); c++) m.cpuThreads(c, all);
  m.cpuBusyShare(all);
  for (int o = 0; o < m.syncObjectCount(); o++) m.syncDelta(o, all);
  m.waitMatrix(all);
  m.ticks(all);
  m.findings(all);
}

// What any input leaves, however damaged: a model within its bounds.
void expectBounded(const SessionModel &m) {
  QVERIFY(m.cpuCount() <= limits::kMaxCpus);
  QVERIFY(size_t(m.threadCount()) <= limits::kMaxThreads);
  QVERIFY(size_t(m.syncObjectCount()) <= limits::kMaxSyncObjects);
  QVERIFY(m.latestNs() - m.startNs() <= limits::kWindowNs);
  QVERIFY(m.info().notices.size() <= limits::kMaxNotices);
  QVERIFY(m.memoryBytes() < 64 * 1024 * 1024);
}

bool warned(const SessionModel &m, const char *what) {
  for (const QString &w : m.info().inputWarnings)
    if (w.contains(QLatin1String(what))) return true;
  return false;
}

}  // namespace

class TestModelBadInput : public QObject {
  Q_OBJECT

 private slots:
  // A Transitions frame sent twice whose last entry starts a wait made a
  // zero-length wait, and the barrier rule read the front of an empty round.
  void repeatedTransitionsFrame() {
    StreamBuilder b = barrierSession();
    b.goodbye(at(200), 0);
    StreamBuilder twice;
    for (const std::string &f : b.frames()) {
      twice.rawPayload(f);
      // Every frame twice: the duplicate of each wait's first entry.
      twice.rawPayload(f);
    }
    SessionModel m;
    twice.applyTo(&m);
    queryEverything(m);
    QVERIFY(!m.hasError());
    // The duplicates are ignored: the same waits as the stream sent once.
    SessionModel once;
    b.applyTo(&once);
    TimeRange all = m.resolve(Window::wholeRun());
    QCOMPARE(m.waits(5, all).size(), once.waits(5, all).size());
    QCOMPARE(m.waits(5, all).size(), size_t(40));
    expectBounded(m);
  }

  // A zero-length wait (blocked and released in the same nanosecond) made a
  // round that nobody waited in, and the rule read its empty front: it
  // makes no round.
  void zeroLengthBarrierWait() {
    StreamBuilder b = barrierSession();
    b.transition(10, at(205), THREADMON__THREAD_STATE__STATE_BLOCKED_BARRIER, 5);
    b.transition(10, at(205), THREADMON__THREAD_STATE__STATE_RUNNING);
    b.tick(at(210), {});
    b.goodbye(at(210), 0);
    SessionModel m;
    b.applyTo(&m);
    queryEverything(m);
    expectBounded(m);
    QVERIFY(m.info().inputWarnings.isEmpty());  // nothing wrong with it as input
  }

  // A tick at 2^63 ns: the findings' phase bins overflowed into a
  // std::length_error; the tick is dropped, the rest reported.
  void timeTwoToThe63() {
    StreamBuilder b = barrierSession();
    b.tick(int64_t(kTwo63 - 1), {Lwp{10, 0, 0, 5 * kMs, 0}});
    b.tick(kAt2To63, {});  // and one exactly at 2^63
    SessionModel m;
    b.applyTo(&m);
    m.markEnded();
    queryEverything(m);
    QCOMPARE(m.latestNs(), at(200));
    QVERIFY(warned(m, "dropped 2 records timed outside the session"));
    QCOMPARE(m.lwpSampleCount(m.indexOfTid(10)), size_t(0));
    expectBounded(m);
  }

  // A huge LwpSample.cpu made every per-CPU query allocate gigabytes.
  void hugeLwpCpu() {
    StreamBuilder b;
    b.hello(true, 2);
    b.threadStart(10, kT0, "w", "app!worker");
    Lwp l{10, 0, 0, 5 * kMs, 0};
    l.cpu = 20'000'000;  // each per-CPU vector: 160 MB
    b.tick(at(10), {l});
    Lwp neg{10, 0, 0, 9 * kMs, 0};
    neg.cpu = -7;
    b.tick(at(20), {neg});
    b.cpuSwitch(10, at(15), 70000, THREADMON__SWITCH_KIND__SWITCH_IN);
    b.goodbye(at(20), 0);
    SessionModel m;
    b.applyTo(&m);
    queryEverything(m);
    QCOMPARE(m.cpuCount(), 2);
    QVERIFY(m.memoryBytes() < 1'000'000);
    QCOMPARE(m.lwpSampleCount(m.indexOfTid(10)), size_t(2));  // kept, CPU unknown
    QVERIFY(warned(m, "CPU number"));
    expectBounded(m);
  }

  // Entry i of a batch is at base + the sum of deltas up to i: an entry
  // outside the window goes, and the later ones keep their times; past an
  // overflow of the sum no entry has a time.
  void batchTimesAfterADroppedEntry() {
    const uint32_t tid = 10;
    const int64_t far = int64_t(1) << 50;  // 13 days: outside the window
    int64_t deltas[] = {0, far, -far + 5 * kMs, INT64_MAX, 1};
    Threadmon__ThreadState states[] = {
        THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, THREADMON__THREAD_STATE__STATE_RUNNING,
        THREADMON__THREAD_STATE__STATE_RUNNING, THREADMON__THREAD_STATE__STATE_BLOCKED_COND,
        THREADMON__THREAD_STATE__STATE_RUNNING};
    uint32_t tids[] = {tid, tid, tid, tid, tid}, objects[] = {7, 0, 0, 8, 0};
    Threadmon__Transitions tr = THREADMON__TRANSITIONS__INIT;
    tr.base_ns = uint64_t(at(10));
    tr.n_tid = tr.n_delta_ns = tr.n_state = tr.n_object_id = 5;
    tr.tid = tids;
    tr.delta_ns = deltas;
    tr.state = states;
    tr.object_id = objects;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
    f.transitions = &tr;
    StreamBuilder b;
    b.hello(false);
    b.threadStart(tid, kT0, "w", "app!worker");
    b.frame(f);  // deltas that no times can say
    b.goodbye(at(20), 0);
    SessionModel m;
    b.applyTo(&m);
    const TimeRange all = m.resolve(Window::wholeRun());
    const std::vector<WaitRecord> waits = m.waits(7, all);
    QCOMPARE(waits.size(), size_t(1));
    QCOMPARE(waits[0].start, at(10));
    QCOMPARE(waits[0].end, at(15));  // the third entry, after the dropped second
    QVERIFY(m.waits(8, all).empty());
    QVERIFY(warned(m, "dropped 3 records timed outside the session"));
    expectBounded(m);
  }

  // A batch that keeps every entry is checked in one pass (FrameCheck's
  // fast path) and must fold as the compacting path folds the same batch
  // with an entry dropped: an unknown state read as unknown, times from the
  // first entry's.
  void batchKeptWholeFoldsAsCompacted() {
    const uint32_t tid = 10;
    const auto unknown = Threadmon__ThreadState(99);
    auto load = [&](bool withDropped, SessionModel *m) {
      std::vector<Transition> batch = {
          {at(10), tid, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 7, 11, 0},
          {at(12), tid, unknown},
          {at(15), tid, THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, 11}};
      if (withDropped)  // an entry of tid 0 between the first two
        batch.insert(batch.begin() + 1,
                     Transition{at(11), 0, THREADMON__THREAD_STATE__STATE_BLOCKED_COND, 8, 12, 12});
      StreamBuilder b;
      b.hello(false);
      b.threadStart(tid, kT0, "w", "app!worker");
      b.transitions(at(9), batch);
      b.tick(at(30), {});
      b.goodbye(at(40), 0);
      b.applyTo(m);
    };
    SessionModel whole, compacted;
    load(false, &whole);
    load(true, &compacted);
    const TimeRange all = whole.resolve(Window::wholeRun());
    QCOMPARE(compacted.resolve(Window::wholeRun()).t0, all.t0);
    const std::vector<WaitRecord> w = whole.waits(7, all), c = compacted.waits(7, all);
    QCOMPARE(w.size(), size_t(1));
    QCOMPARE(c.size(), w.size());
    QCOMPARE(w[0].start, at(10));
    QCOMPARE(w[0].end, at(12));  // the unknown state ended it
    QCOMPARE(c[0].start, w[0].start);
    QCOMPARE(c[0].end, w[0].end);
    QCOMPARE(c[0].holder, w[0].holder);
    QVERIFY(compacted.waits(8, all).empty());
    const std::vector<StateInterval> iw = whole.intervals(0, all), ic = compacted.intervals(0, all);
    QCOMPARE(ic.size(), iw.size());
    for (size_t i = 0; i < iw.size(); i++) {
      QCOMPARE(ic[i].start, iw[i].start);
      QCOMPARE(ic[i].end, iw[i].end);
      QCOMPARE(int(ic[i].state), int(iw[i].state));
    }
    QVERIFY(warned(whole, "read 1 enum values"));
    QVERIFY(warned(compacted, "read 1 enum values"));
    QVERIFY(warned(compacted, "dropped 1 records of thread or object id 0"));
    QVERIFY(!warned(whole, "records of thread or object id 0"));
    expectBounded(whole);
  }

  // FrameCheck's one-pass test of a whole batch (its window's start known)
  // against the rule entry by entry, with exact sums: random batches of
  // 0-9 entries (odd tails of its four-at-a-time reads), now and then a tid
  // 0, a state no reader knows, a time out of the window or a sum past
  // 2^63. Every entry kept must be one the rule keeps, with its time.
  void batchesKeepWhatTheWindowHolds() {
    FrameCheck check;
    Threadmon__ThreadStart start = THREADMON__THREAD_START__INIT;
    start.tid = 1;
    start.time_ns = uint64_t(at(0));  // the window: from 2^40 ns before it
    Threadmon__Frame sf = THREADMON__FRAME__INIT;
    sf.body_case = THREADMON__FRAME__BODY_THREAD_START;
    sf.thread_start = &start;
    QVERIFY(check.check(&sf));
    const int64_t lo = std::max<int64_t>(0, at(0) - limits::kBeforeFirstNs);
    QCOMPARE(check.base(), lo);
    const int64_t hi = std::min<int64_t>(lo + limits::kWindowNs, int64_t(limits::kMaxTimeNs));
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    auto next = [&seed](uint64_t below) {
      seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
      return seed % below;
    };
    size_t kept = 0, dropped = 0;
    for (int round = 0; round < 20000; round++) {
      const size_t n = size_t(next(10));
      std::vector<uint32_t> tid(n);
      std::vector<int64_t> delta(n);
      std::vector<Threadmon__ThreadState> state(n);
      const int flaw = int(next(6));  // 0-3 one flaw somewhere, else none
      for (size_t i = 0; i < n; i++) {
        tid[i] = uint32_t(1 + next(1000));
        delta[i] = int64_t(next(2000)) - 500;
        state[i] = Threadmon__ThreadState(next(uint64_t(kWireStates)));
      }
      uint64_t base = uint64_t(at(int64_t(next(1000))));
      if (n && flaw == 0) tid[next(n)] = 0;
      if (n && flaw == 1) state[next(n)] = Threadmon__ThreadState(kWireStates + int(next(3)));
      if (n && flaw == 2) delta[next(n)] = next(2) ? (hi - lo + 1) : -int64_t(base);
      if (n && flaw == 3) delta[next(n)] = next(2) ? INT64_MAX : INT64_MIN;
      if (flaw == 4 && next(4) == 0) base = hi - next(3);  // at the window's end
      // The rule: each entry's exact time, kept when inside and of a thread.
      std::vector<int64_t> wantTime;
      std::vector<uint32_t> wantTid;
      bool summed = base <= uint64_t(INT64_MAX);
      int64_t t = summed ? int64_t(base) : 0;
      for (size_t i = 0; i < n; i++) {
        summed = summed && !__builtin_add_overflow(t, delta[i], &t);
        if (summed && t >= lo && t <= hi && tid[i]) {
          wantTime.push_back(t);
          wantTid.push_back(tid[i]);
        }
      }
      Threadmon__Transitions tr = THREADMON__TRANSITIONS__INIT;
      tr.base_ns = base;
      tr.n_tid = tr.n_delta_ns = tr.n_state = n;
      tr.tid = tid.data();
      tr.delta_ns = delta.data();
      tr.state = state.data();
      Threadmon__Frame f = THREADMON__FRAME__INIT;
      f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
      f.transitions = &tr;
      QVERIFY(check.check(&f));
      QCOMPARE(tr.n_tid, wantTid.size());
      QCOMPARE(tr.n_delta_ns, wantTid.size());
      int64_t got = int64_t(tr.base_ns);
      for (size_t i = 0; i < tr.n_tid; i++) {
        got += tr.delta_ns[i];
        QCOMPARE(got, wantTime[i]);
        QCOMPARE(tr.tid[i], wantTid[i]);
        int s;
        std::memcpy(&s, &tr.state[i], sizeof s);
        QVERIFY(s >= 0 && s < kWireStates);
      }
      kept += wantTid.size();
      dropped += n - wantTid.size();
    }
    QVERIFY(kept > 10000 && dropped > 1000);  // both paths taken
  }

  // What a few bytes could grow without end is bounded, and says so.
  void collectionsAreBounded() {
    SessionModel m;
    StreamBuilder b(intoModel(&m));
    b.hello(false);
    const size_t n = limits::kMaxThreads + 10;
    std::vector<uint32_t> tids(n);
    std::vector<int64_t> deltas(n, 0);
    for (size_t i = 0; i < n; i++) tids[i] = uint32_t(1000 + i);
    Threadmon__Transitions tr = THREADMON__TRANSITIONS__INIT;
    tr.base_ns = uint64_t(at(1));
    tr.n_tid = tr.n_delta_ns = n;
    tr.tid = tids.data();
    tr.delta_ns = deltas.data();
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
    f.transitions = &tr;
    b.frame(f);  // threads and times only
    QCOMPARE(size_t(m.threadCount()), limits::kMaxThreads);
    QVERIFY(warned(m, "dropped 10 records of threads past the first 65536"));

    for (int i = 0; i < limits::kMaxNotices + 5; i++) b.notice(0, "a source is unavailable");
    QCOMPARE(m.info().notices.size(), limits::kMaxNotices);
    QVERIFY(warned(m, "dropped 5 probe notices past the first 64"));

    StreamBuilder more;
    std::string longName(10000, 'x');
    longName.replace(4095, 2, "\xc3\xa9");  // a two-byte character across the limit
    more.threadStart(77, at(2), longName.c_str(), "app!worker");
    // 20 records of one thread at one nanosecond, each a different state.
    for (int k = 0; k < 20; k++)
      more.transition(1000, at(3), k % 2 ? THREADMON__THREAD_STATE__STATE_RUNNING
                                         : THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX,
                      uint32_t(k + 1));
    more.applyTo(&m);
    QCOMPARE(m.thread(m.indexOfTid(1000)).tid, 1000u);
    QVERIFY(warned(m, "dropped 4 records of a thread at an instant it already had 16"));
    QVERIFY(warned(m, "cut 1 strings or lists over their limits"));
    StreamBuilder end;
    end.goodbye(at(10), 0);
    end.applyTo(&m);
    QVERIFY(m.indexOfTid(77) < 0);  // no room for it either
    expectBounded(m);
  }

  // The text report prints evidence numbers past int64 as doubles (it
  // converted them to int64, undefined behaviour past 2^63).
  void textReportOfHugeEvidence() {
    const QJsonObject evidence{{"big", 1e19}, {"small", -3.0}, {"exact", 9007199254740992.0}};
    const QJsonObject f{{"severity", "low"}, {"kind", "data_lost"}, {"message", "m"},
                        {"view", "threads"}, {"evidence", evidence}};
    const QString text = reportText(QJsonObject{{"findings", QJsonArray{f}}});
    QVERIFY2(text.contains("big=1e+19, exact=9.007e+15, small=-3"), qPrintable(text));
  }

  // Inputs the fuzzer found (display/fuzz/regressions, docs/fuzzing.md), fed
  // as the fuzzer fed them: in two pieces, then the report and the views'
  // queries. `expect`: a line the model must give (a warning or the error).
  void fuzzRegressions_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expect");
    // Why each input is here: what it broke before it was fixed.
    const QHash<QString, QString> expect{
        // Empty reads: NULL + 0 in the wire decoder (UBSan).
        {"empty.tmcap", QString()},
        // A SwitchKind of 2^31 (negative as the int it is stored in): loaded
        // through the enum's type (UBSan).
        {"negative-switch-kind.tmcap", "enum values this reader does not know"},
        // A tick's LwpSample of tid 0, dropped from the list: protobuf-c
        // frees by the list's count, so it leaked (LeakSanitizer).
        {"dropped-sample-leak.tmcap", "dropped 1 records of thread or object id 0"},
        // frames_dropped of 2^63-1: the data_lost finding's evidence, a
        // double of 2^63, converted to int64 by the text report (UBSan).
        {"huge-drop-count.tmcap", "clamped 1 counters above 2^58"},
        // A body field numbered 801 shifted the windowed reader's 32-bit
        // kinds mask past its width (UBSan in fuzz-window; fuzz-short
        // replays it there). Streamed, the frame is refused.
        {"window-body-field-shift.tmcap", "malformed protobuf frame at byte 1470"},
        // Forged indexes (forgedIndexesAreRefused): the stream itself is whole.
        {"index-shuffled.tmcap", QString()},
        {"index-times-far.tmcap", QString()},
        // Forged as a long capture's (forge_capture.py; forgedLongCaptures).
        {"index-empty.tmcap", QString()},
        {"index-times-late.tmcap", QString()},
        {"block-times-far.tmcap", QString()},
        {"block-len-huge.tmcap", QString()},
        // A window's time of INT64_MIN: its span and its warm-up's start
        // overflowed (UBSan in fuzz-stream and fuzz-window).
        {"window-first-ns-min.tmcap", "dropped 1 records timed outside the session"},
        // A SyncObject.kind of 4294967294 in a description: loaded through
        // the enum's type where the windowed reader lists hidden locks
        // (UBSan in fuzz-stream).
        {"hidden-lock-kind-not-an-enum.tmcap", "enum values this reader does not know"},
    };
    const QDir dir(qEnvironmentVariable("THREADMON_FUZZ_REGRESSIONS"));
    const QFileInfoList files = dir.entryInfoList({"*.tmcap"}, QDir::Files, QDir::Name);
    QVERIFY2(!files.isEmpty(), qPrintable(dir.path()));
    for (const QFileInfo &f : files) {
      QVERIFY2(expect.contains(f.fileName()), qPrintable(f.fileName() + " has no expectation"));
      QTest::newRow(qPrintable(f.fileName())) << f.filePath() << expect.value(f.fileName());
    }
  }

  // A capture's index from its tail is checked before it is trusted: two
  // records swapped (with a valid checksum) read as an empty report; it is
  // refused in one line and the records found by a scan. Times spanning
  // 146 years made billions of windows (a report that never ended): such an
  // index is refused too, and the scan's block headers read.
  void forgedIndexesAreRefused() {
    const QDir dir(qEnvironmentVariable("THREADMON_FUZZ_REGRESSIONS"));
    CaptureWindow shuffled;
    QVERIFY(shuffled.open(dir.filePath("index-shuffled.tmcap")));
    QVERIFY(!shuffled.indexFromTail());
    QVERIFY2(shuffled.note().contains("its index is damaged (record 0 at byte 352 is not before "
                                      "the next one's at 16)"),
             qPrintable(shuffled.note()));
    ReportRows rows;
    CaptureLoadResult res = StreamedReport::read(dir.filePath("index-shuffled.tmcap"), &rows,
                                                 StreamedReport::kChunkNs);
    QCOMPARE(res.status, CaptureLoadResult::Damaged);
    QVERIFY(!rows.threads.empty());  // read, not lost
    QElapsedTimer took;
    took.start();
    rows = ReportRows();
    res = StreamedReport::read(dir.filePath("index-times-far.tmcap"), &rows,
                               StreamedReport::kChunkNs);
    QCOMPARE(res.status, CaptureLoadResult::Damaged);
    QVERIFY2(res.message.contains("is more than 78 hours after the first"),
             qPrintable(res.message));
    QVERIFY(!rows.threads.empty());
    QVERIFY(took.elapsed() < 5000);
  }

  // Forged as a capture over 64 MiB would be (display/fuzz/forge_capture.py;
  // test_report_forged.py does it on 73 MB), read the way the report reads
  // one (its whole-read threshold at 0, 10 ms windows, as fuzz-stream does):
  // an empty index or a time 77 hours on read that capture whole (770 MB)
  // or as 55,000 windows, with no word; a lying length word lost frames
  // silently. Each is one line now, the capture read by windows.
  void forgedLongCaptures_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("expect");
    QTest::newRow("empty index") << "index-empty.tmcap"
                                 << "its index is damaged (it lists no record from byte 16";
    QTest::newRow("time 77 h on") << "index-times-late.tmcap"
                                  << "ends more than 24 hours after the one before it";
    QTest::newRow("block header's time far") << "block-times-far.tmcap"
                                             << "1 block headers' times out of order or far";
    QTest::newRow("length word 16 MiB") << "block-len-huge.tmcap"
                                        << "a record's length word runs past byte";
  }

  void forgedLongCaptures() {
    QFETCH(QString, name);
    QFETCH(QString, expect);
    const QDir dir(qEnvironmentVariable("THREADMON_FUZZ_REGRESSIONS"));
    QElapsedTimer took;
    took.start();
    ReportRows rows;
    const CaptureLoadResult res = StreamedReport::rows(
        dir.filePath(name), &rows, StreamedReport::Mode::Auto, 10'000'000, /*wholeUpToBytes=*/0);
    QCOMPARE(res.status, CaptureLoadResult::Damaged);
    QVERIFY2(res.message.contains(expect), qPrintable(res.message));
    QVERIFY(!rows.threads.empty());  // read, not lost
    QVERIFY(took.elapsed() < 5000);
  }

  // A capture of plain frames (format 1, THREADMON_COMPRESS=0's) is cut at
  // its Ticks and read a window at a time like any other: the same report
  // as the same session written in blocks with an index, in one window's
  // memory. Shorter than a window, it is read whole (the plain bound).
  void plainFramesAreReadByWindows() {
    QTemporaryDir dir;
    const QString plain = dir.filePath(QStringLiteral("plain.tmcap"));
    const QString packed = dir.filePath(QStringLiteral("packed.tmcap"));
    QVERIFY(busycap::writePlainFile(plain, 6, 40'000'000'000ull));
    QVERIFY(busycap::writeFile(packed, 6, 40'000'000'000ull));
    CaptureWindow cw;
    QVERIFY2(cw.open(plain), qPrintable(cw.error()));
    QVERIFY(cw.plainFrames() && !cw.lostItsIndex() && cw.note().isEmpty());
    QVERIFY(cw.records() > 2);
    QVERIFY(cw.lastNs() - cw.firstNs() > 39'000'000'000ll);
    QVERIFY(StreamedReport::wanted(plain));
    ReportRows a, b;
    const CaptureLoadResult ra = StreamedReport::rows(plain, &a, StreamedReport::Mode::Auto);
    const CaptureLoadResult rb = StreamedReport::rows(packed, &b, StreamedReport::Mode::Auto);
    QVERIFY2(ra.status == CaptureLoadResult::Complete, qPrintable(ra.message));
    QVERIFY2(rb.status == CaptureLoadResult::Complete, qPrintable(rb.message));
    QVERIFY(a.threads.size() >= 6);
    QCOMPARE(QJsonDocument(reportJson(a)).toJson(), QJsonDocument(reportJson(b)).toJson());
    QVERIFY(busycap::writePlainFile(plain, 6, 3'000'000'000ull));
    QVERIFY(!StreamedReport::wanted(plain));
  }

  void fuzzRegressions() {
    QFETCH(QString, path);
    QFETCH(QString, expect);
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    SessionModel m;
    FrameDecoder dec(&m);
    const size_t first = size_t(bytes.size()) / 3;
    dec.feed(bytes.constData(), first);
    dec.feed(bytes.constData() + first, size_t(bytes.size()) - first);
    if (dec.headerSeen()) m.markEnded();
    queryEverything(m);
    QVERIFY(!reportText(reportJson(m)).isEmpty());
    expectBounded(m);
    const QString said = m.info().inputWarnings.join('\n') + '\n' + m.errorText();
    QVERIFY2(said.contains(expect), qPrintable(said));
  }
};

QTEST_GUILESS_MAIN(TestModelBadInput)
#include "test_model_badinput.moc"
