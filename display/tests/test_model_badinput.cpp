// Hostile input: mutants of real streams that crashed, hung or exhausted the
// readers (issue 11), and the inputs the fuzzer found (display/fuzz/). Each
// must load without a crash, keep what was good, and say in one line what it
// dropped or clamped.
#include <QDir>
#include <QFile>
#include <QtTest>

#include "findings.h"
#include "framedecoder.h"
#include "framecheck.h"
#include "reportjson.h"
#include "reporttext.h"
#include "sessionmodel.h"
#include "test_model_stream.h"

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
  }

  // A zero-length wait (blocked and released in the same nanosecond) is a
  // round of its own that nobody waited in.
  void zeroLengthBarrierWait() {
    StreamBuilder b = barrierSession();
    b.transition(10, at(205), THREADMON__THREAD_STATE__STATE_BLOCKED_BARRIER, 5);
    b.transition(10, at(205), THREADMON__THREAD_STATE__STATE_RUNNING);
    b.tick(at(210), {});
    b.goodbye(at(210), 0);
    SessionModel m;
    b.applyTo(&m);
    queryEverything(m);
  }

  // A tick at 2^63 ns: the findings' phase bins overflowed into a
  // std::length_error; the tick is dropped, the rest reported.
  void timeTwoToThe63() {
    StreamBuilder b = barrierSession();
    b.tick(int64_t(kTwo63 - 1), {Lwp{10, 0, 0, 5 * kMs, 0}});
    StreamBuilder raw;
    for (const std::string &f : b.frames()) raw.rawPayload(f);
    // And one exactly at 2^63 (an int64 in the builder cannot say it).
    Threadmon__Tick tk = THREADMON__TICK__INIT;
    tk.time_ns = kTwo63;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_TICK;
    f.tick = &tk;
    std::string buf(threadmon__frame__get_packed_size(&f), '\0');
    threadmon__frame__pack(&f, reinterpret_cast<uint8_t *>(&buf[0]));
    raw.rawPayload(buf);
    SessionModel m;
    raw.applyTo(&m);
    m.markEnded();
    queryEverything(m);
    QCOMPARE(m.latestNs(), at(200));
    QVERIFY(warned(m, "dropped 2 records timed outside the session"));
    QCOMPARE(m.lwpSampleCount(m.indexOfTid(10)), size_t(0));
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
    };
    const QDir dir(qEnvironmentVariable("THREADMON_FUZZ_REGRESSIONS"));
    const QFileInfoList files = dir.entryInfoList({"*.tmcap"}, QDir::Files, QDir::Name);
    QVERIFY2(!files.isEmpty(), qPrintable(dir.path()));
    for (const QFileInfo &f : files) {
      QVERIFY2(expect.contains(f.fileName()), qPrintable(f.fileName() + " has no expectation"));
      QTest::newRow(qPrintable(f.fileName())) << f.filePath() << expect.value(f.fileName());
    }
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
