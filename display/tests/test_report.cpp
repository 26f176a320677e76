// threadmon-report over synthetic captures written here: the JSON numbers
// follow from the stream's known truth; damage and unreadable exit codes.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <random>

#include "busy_capture.h"
#include "capturewriter.h"
#include "jsonwriter.h"
#include "modeltypes.h"
#include "reportjson.h"
#include "reportrows.h"
#include "reportstream.h"
#include "synthstream.h"
#include "threadfilter.h"

using namespace tmtest;

namespace {

// Worker 21: on CPU 1 for [0,60), blocked on mutex 3 for [60,100). Main 20:
// sleeping all along. Mutex 3: 50 acquisitions, 10 contended, 40 ms waiting.
// Mutex 4: less waiting. CPU 0: 25% user, 75% idle.
StreamBuilder reportSession(bool withGoodbye, bool outside = false) {
  StreamBuilder b;
  b.setOutside(outside);
  b.hello(true);
  b.threadStart(20, kT0, "main", "app!main", false, true);
  b.threadStart(21, kT0, "worker", "app!_ZN3app6workerEv+0x1c");
  b.threadStart(22, kT0, "threadmon", "libthreadmon.so!sampler", true);
  b.syncObject(3, THREADMON__SYNC_KIND__KIND_MUTEX, 0x5000, "app", "queue_lock", "app!push+0x20");
  b.syncObject(4, THREADMON__SYNC_KIND__KIND_MUTEX, 0x5040, "app", "_ZN3app5statsE+0x8", nullptr);
  b.cpuSwitch(20, kT0, 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.cpuSwitch(22, kT0, 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.cpuSwitch(21, kT0, 1, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.transition(21, kT0 + 60 * kMs, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 3);
  b.cpuSwitch(21, kT0 + 60 * kMs, 1, THREADMON__SWITCH_KIND__SWITCH_OUT);
  for (int k = 0; k <= 10; k++) {
    uint64_t K = uint64_t(k);
    b.tick(kT0 + k * 10 * kMs,
           {Lwp{21, std::min<uint64_t>(K, 6) * 8 * kMs, std::min<uint64_t>(K, 6) * 2 * kMs,
                std::min<uint64_t>(K, 6) * 10 * kMs, 0, K, 0, 7 * K, 0, 1, 'R'}},
           {Cpu{0, 1000 * kMs + K * 2500000, 0, 0, 3000 * kMs + K * 7500000, 0, 0, 0, 0}},
           {Sync{3, 5 * K, K, 4 * K * kMs, 9 * kMs, 0}, Sync{4, 2 * K, K, K * kMs / 10, kMs, 0}},
           k == 10 ? 2 : 0);
  }
  if (withGoodbye) b.goodbye(kT0 + 100 * kMs, 7);
  return b;
}

// Workers 31 and 32 take turns on mutex 3 (app!table_lock) from
// app!update: each 10 ms they work 2 ms, then wait 8 ms for the other.
StreamBuilder contendedSession() {
  StreamBuilder b;
  b.setExe("/opt/app");
  b.hello(false);
  b.threadStart(31, kT0, "worker", "app!worker");
  b.threadStart(32, kT0, "worker", "app!worker");
  b.syncObject(3, THREADMON__SYNC_KIND__KIND_MUTEX, 0x5000, "/opt/app", "table_lock", nullptr);
  b.stack(1, {"app!update+0x10 (app.c:12)", "app!worker+0x20 (app.c:30)"});
  for (int p = 0; p < 500; p += 10)
    for (uint32_t tid : {31u, 32u}) {
      uint32_t other = tid == 31 ? 32 : 31;
      b.transition(tid, kT0 + (p + 2) * kMs, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 3, other);
      b.transition(tid, kT0 + (p + 10) * kMs, THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, other);
    }
  for (int k = 1; k <= 50; k++) {
    uint64_t K = uint64_t(k);
    b.tick(kT0 + k * 10 * kMs, {}, {}, {Sync{3, 4 * K, 2 * K, 16 * K * kMs, 8 * kMs, 0}}, 0,
           {Site{3, 1, 2 * K, 16 * K * kMs}});
  }
  b.goodbye(kT0 + 500 * kMs, 0);
  return b;
}

// contendedSession's workers, and a barrier 5 that 41 and 42 wait at for
// 80 ms of each 100 ms round while 43, working longer, arrives last and
// releases them. attached: the Hello lists what an external sampler reads
// (no interpose) and SyncStats carries no acquisitions nor holds.
StreamBuilder attachableSession(bool attached) {
  StreamBuilder b;
  b.setExe("/opt/app");
  if (attached)
    b.setSources({THREADMON__SOURCE__SOURCE_ATTACH, THREADMON__SOURCE__SOURCE_PROC_TASK,
                  THREADMON__SOURCE__SOURCE_PROC_STAT, THREADMON__SOURCE__SOURCE_FUTEX_SAMPLING});
  b.hello(false);
  for (uint32_t tid : {31u, 32u}) b.threadStart(tid, kT0, "worker", "app!worker");
  for (uint32_t tid : {41u, 42u, 43u}) b.threadStart(tid, kT0, "phase", "app!phase");
  b.syncObject(3, THREADMON__SYNC_KIND__KIND_MUTEX, 0x5000, "/opt/app", "table_lock", nullptr);
  b.syncObject(5, THREADMON__SYNC_KIND__KIND_BARRIER, 0x5100, "/opt/app", "phase_barrier", nullptr);
  for (int p = 0; p < 500; p += 10)
    for (uint32_t tid : {31u, 32u}) {
      uint32_t other = tid == 31 ? 32 : 31;
      b.transition(tid, kT0 + (p + 2) * kMs, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 3,
                   other);
      b.transition(tid, kT0 + (p + 10) * kMs, THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, other);
    }
  for (int end = 100; end <= 500; end += 100)
    for (uint32_t tid : {41u, 42u}) {
      b.transition(tid, kT0 + (end - 80) * kMs, THREADMON__THREAD_STATE__STATE_BLOCKED_BARRIER, 5);
      b.transition(tid, kT0 + end * kMs, THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, 43);
    }
  for (int k = 1; k <= 50; k++) {
    uint64_t K = uint64_t(k);
    const uint64_t acquired = attached ? 0 : 4 * K, held = attached ? 0 : 4 * K * kMs;
    b.tick(kT0 + k * 10 * kMs, {}, {},
           {Sync{3, acquired, 2 * K, 16 * K * kMs, 8 * kMs, held},
            Sync{5, attached ? 0 : 3 * (K / 10), 2 * (K / 10), 160 * (K / 10) * kMs, 80 * kMs, 0}});
  }
  b.goodbye(kT0 + 500 * kMs, 0);
  return b;
}

// Read from outside: main 20 sleeps in /usr/bin/jshell, which execs
// /usr/bin/test at 40 ms; then a forged Exec days past the session's
// window (dropped: no time of this session).
StreamBuilder execSession() {
  StreamBuilder b;
  b.setOutside(true);
  b.setExe("/usr/bin/jshell");
  b.hello(true);
  b.threadStart(20, kT0, "jshell", "", false, true);
  for (int k = 0; k <= 10; k++) {
    if (k == 4) b.exec(kT0 + 40 * kMs, "/usr/bin/test", {"test", "-x", "/bin/sh"});
    b.tick(kT0 + k * 10 * kMs, {Lwp{20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'S'}});
  }
  b.exec(kT0 + (int64_t(1) << 49), "/usr/bin/forged", {"forged"});
  b.goodbye(kT0 + 100 * kMs, 0);
  return b;
}

struct Run {
  int code;
  QByteArray out, err;
};

Run report(const QStringList &args) {
  QProcess p;
  p.start(qEnvironmentVariable("THREADMON_REPORT"), args);
  p.waitForFinished(30000);
  return Run{p.exitCode(), p.readAllStandardOutput(), p.readAllStandardError()};
}

// The frames of b written to file a block each: records to seek to.
bool writeBlockPerFrame(const StreamBuilder &b, const QString &file) {
  tmon::CaptureWriter w;
  if (!w.open(file)) return false;
  for (const std::string &f : b.frames())
    if (!w.writeFrame(reinterpret_cast<const uint8_t *>(f.data()), uint32_t(f.size())) ||
        !w.flush())
      return false;
  return w.close();
}

}  // namespace

class TestReport : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void initTestCase() { QVERIFY(!qEnvironmentVariable("THREADMON_REPORT").isEmpty()); }

  // Read from outside: no wrapper counted acquisitions or timed holds, and
  // the session detached from a process that ran on. Unknown, never 0.
  void attachedSessionShowsUnknowns() {
    QString file = dir_.filePath("attached.tmcap");
    QVERIFY(reportSession(true, true).writeFile(file));
    Run r = report({"--json", file});
    QCOMPARE(r.code, 0);
    QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QJsonObject p = o["process"].toObject();
    QVERIFY(p["exit_status"].isNull());
    QCOMPARE(p["detached"].toBool(), true);
    QJsonArray objects = o["sync_objects"].toArray();
    QVERIFY(!objects.isEmpty());
    for (const QJsonValue &v : objects) {
      QVERIFY(v["acquisitions"].isNull());
      QVERIFY(v["hold_s"].isNull());
      QVERIFY(v["contentions"].toInt() > 0);
    }
    Run text = report({file});
    QVERIFY2(text.out.contains("exit status none (detached: it ran on)"), text.out.constData());
    // The acquired column of queue_lock's row (the table comes before the
    // call-site section, which names it too): a dash.
    const QList<QByteArray> lines = text.out.split('\n');
    bool dashed = false;
    for (const QByteArray &l : lines)
      if (l.contains("queue_lock")) {
        dashed = l.simplified().split(' ').value(2) == "-";
        break;
      }
    QVERIFY2(dashed, text.out.constData());
    // The same session from the probe counts them.
    QVERIFY(reportSession(true).writeFile(file));
    o = QJsonDocument::fromJson(report({"--json", file}).out).object();
    QCOMPARE(o["sync_objects"].toArray()[0].toObject()["acquisitions"].toInt() > 0, true);
  }

  // An exec seen from outside: the process is the program it became, and
  // the report says when it exec'd and from what (whole and streamed).
  void execSeenFromOutsideNamesTheNewProgram() {
    QString file = dir_.filePath("exec.tmcap");
    QVERIFY(execSession().writeFile(file));
    for (const QStringList &mode : {QStringList{"--json"}, QStringList{"--stream", "--json"}}) {
      Run r = report(mode + QStringList{file});
      QJsonObject p = QJsonDocument::fromJson(r.out).object()["process"].toObject();
      QCOMPARE(p["exe"].toString(), QStringLiteral("/usr/bin/test"));
      QCOMPARE(p["argv"].toArray().size(), 3);
      const QJsonArray execs = p["execs"].toArray();
      QCOMPARE(execs.size(), 1);
      const QJsonObject e = execs[0].toObject();
      QCOMPARE(e["at_s"].toDouble(), 0.04);
      QCOMPARE(e["from_exe"].toString(), QStringLiteral("/usr/bin/jshell"));
      QCOMPARE(e["to_exe"].toString(), QStringLiteral("/usr/bin/test"));
      QCOMPARE(e["to_argv"].toArray()[2].toString(), QStringLiteral("/bin/sh"));
    }
    Run text = report({file});
    QVERIFY2(
        text.out.contains("): /usr/bin/test\n  argv: test -x /bin/sh\n  exec'd at 0.040 s: "
                          "from /usr/bin/jshell (argv: workload --threads=2) to /usr/bin/test"),
        text.out.constData());
    // A capture without one says nothing of execs.
    QVERIFY(reportSession(true, true).writeFile(file));
    QVERIFY(!report({file}).out.contains("exec'd at"));
    QCOMPARE(QJsonDocument::fromJson(report({"--json", file}).out)
                 .object()["process"]
                 .toObject()["execs"]
                 .toArray()
                 .size(),
             0);
  }

  void jsonSummaryOfACompleteCapture() {
    QString file = dir_.filePath("ok.tmcap");
    QVERIFY(reportSession(true).writeFile(file));
    Run r = report({"--json", file});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.isEmpty(), r.err.constData());
    QJsonParseError pe;
    QJsonObject o = QJsonDocument::fromJson(r.out, &pe).object();
    QCOMPARE(pe.error, QJsonParseError::NoError);

    QJsonObject p = o["process"].toObject();
    QCOMPARE(p["pid"].toInt(), 4242);
    QCOMPARE(p["exe"].toString(), QStringLiteral("/usr/bin/workload"));
    QCOMPARE(p["argv"].toArray().size(), 2);
    QCOMPARE(p["duration_s"].toDouble(), 0.1);
    QCOMPARE(p["exit_status"].toInt(), 7);
    QCOMPARE(p["frames_dropped"].toInt(), 2);
    QVERIFY(p["sources"].toArray().contains(QStringLiteral("perf_switch")));

    QJsonArray threads = o["threads"].toArray();
    QCOMPARE(threads.size(), 3);
    QJsonObject worker, probe;
    for (const QJsonValue &v : threads) {
      if (v.toObject()["tid"].toInt() == 21) worker = v.toObject();
      if (v.toObject()["tid"].toInt() == 22) probe = v.toObject();
    }
    QCOMPARE(worker["name"].toString(), QStringLiteral("worker"));
    QCOMPARE(worker["start_routine"].toString(), QStringLiteral("app!app::worker()+0x1c"));
    QCOMPARE(worker["main"].toBool(), false);
    QCOMPARE(probe["probe"].toBool(), true);
    QCOMPARE(worker["lifetime_s"].toDouble(), 0.1);
    QJsonObject st = worker["states"].toObject();
    QCOMPARE(st.size(), tmon::kFinalStateCount);
    QCOMPARE(st["on_cpu"].toDouble(), 60.0);
    QCOMPARE(st["stolen"].toDouble(), 0.0);  // the clock ran all 60 ms on the CPU
    QCOMPARE(st["blocked_mutex"].toDouble(), 40.0);
    QCOMPARE(st["runnable"].toDouble(), 0.0);
    QJsonObject lwp = worker["lwp"].toObject();
    QCOMPARE(lwp["user_s"].toDouble(), 0.048);
    QCOMPARE(lwp["system_s"].toDouble(), 0.012);
    QCOMPARE(lwp["vol_ctxsw"].toInt(), 10);
    QCOMPARE(lwp["minflt"].toInt(), 70);
    QCOMPARE(worker["cpus"].toObject()["1"].toDouble(), 0.06);
    QVERIFY(!worker["cpus"].toObject().contains("0"));

    QJsonArray cpus = o["cpus"].toArray();
    QCOMPARE(cpus.size(), 2);
    QCOMPARE(cpus[0].toObject()["user"].toDouble(), 25.0);
    QCOMPARE(cpus[0].toObject()["idle"].toDouble(), 75.0);

    QJsonArray sync = o["sync_objects"].toArray();
    QCOMPARE(sync.size(), 2);
    QJsonObject top = sync[0].toObject();
    QCOMPARE(top["id"].toInt(), 3);  // sorted by wait
    QCOMPARE(top["kind"].toString(), QStringLiteral("mutex"));
    QCOMPARE(top["address"].toString(), QStringLiteral("0x5000"));
    QCOMPARE(top["symbol"].toString(), QStringLiteral("queue_lock"));
    QCOMPARE(top["symbol_offset"].toInteger(), 0);
    QCOMPARE(top["symbol_raw"].toString(), QStringLiteral("queue_lock"));
    QCOMPARE(top["acquisitions"].toInt(), 50);
    QCOMPARE(top["contentions"].toInt(), 10);
    QCOMPARE(top["wait_s"].toDouble(), 0.04);
    QCOMPARE(top["max_wait_s"].toDouble(), 0.009);
    QCOMPARE(top["call_site"].toString(), QStringLiteral("app!push+0x20"));
    QJsonObject stats = sync[1].toObject();
    QCOMPARE(stats["id"].toInt(), 4);
    // The bare, demangled name; the offset and the mangled name apart.
    QCOMPARE(stats["symbol"].toString(), QStringLiteral("app::stats"));
    QCOMPARE(stats["symbol_offset"].toInteger(), 8);
    QCOMPARE(stats["symbol_raw"].toString(), QStringLiteral("_ZN3app5statsE"));
  }

  void textSummaryNamesTheParts() {
    QString file = dir_.filePath("ok.tmcap");
    QVERIFY(reportSession(true).writeFile(file));
    Run r = report({file});
    QCOMPARE(r.code, 0);
    QString text = QString::fromUtf8(r.out);
    QVERIFY(text.contains("Process 4242"));
    QVERIFY(text.contains("21 worker"));
    QVERIFY(text.contains("22 threadmon [probe]"));
    QVERIFY(text.contains(QRegularExpression("cpu +runq +stolen +mutex")));
    QVERIFY(text.contains("queue_lock"));
    QVERIFY(text.contains("app!push+0x20"));
    QVERIFY(text.contains("app!app::stats+0x8"));
    QVERIFY(text.contains("app!app::worker()+0x1c"));
  }

  void findingsCallSitesAndWhoBlockedWhom() {
    QString file = dir_.filePath("contended.tmcap");
    QVERIFY(contendedSession().writeFile(file));
    Run r = report({"--json", file});
    QCOMPARE(r.code, 0);
    QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QJsonArray findings = o["findings"].toArray();
    QCOMPARE(findings.size(), 1);
    QJsonObject f = findings[0].toObject();
    QCOMPARE(f["kind"].toString(), QStringLiteral("serialising_object"));
    QCOMPARE(f["severity"].toString(), QStringLiteral("high"));
    QCOMPARE(f["view"].toString(), QStringLiteral("sync"));
    QCOMPARE(f["evidence"].toObject()["object"].toInt(), 3);
    QVERIFY(qAbs(f["evidence"].toObject()["share"].toDouble() - 0.8) < 1e-9);
    QVERIFY(f["message"].toString().contains("app!update"));
    QVERIFY(f["message"].toString().contains("worker (31)"));

    QJsonObject s = o["sync_objects"].toArray()[0].toObject();
    QJsonArray sites = s["call_sites"].toArray();
    QCOMPARE(sites.size(), 1);
    QCOMPARE(sites[0].toObject()["frames"].toArray()[0].toString(),
             QStringLiteral("app!update+0x10 (app.c:12)"));
    QCOMPARE(sites[0].toObject()["contentions"].toInt(), 100);
    QCOMPARE(sites[0].toObject()["wait_s"].toDouble(), 0.8);
    QJsonArray by = s["blocked_by"].toArray();
    QCOMPARE(by.size(), 2);
    for (const QJsonValue &v : by) {
      QJsonObject c = v.toObject();
      QCOMPARE(c["holder"].toInt(), c["waiter"].toInt() == 31 ? 32 : 31);
      QCOMPARE(c["count"].toInt(), 50);
      QCOMPARE(c["wait_s"].toDouble(), 0.4);
    }
    QCOMPARE(s["waiters"].toArray().size(), 2);
    QCOMPARE(o["wait_matrix"].toArray().size(), 2);

    Run t = report({file});
    QString text = QString::fromUtf8(t.out);
    QVERIFY2(text.startsWith("Findings (1)\n  [HIGH] serialising_object: "), qPrintable(text.left(200)));
    QVERIFY(text.contains("see: the Sync view"));
    QVERIFY(text.contains("call site: 0.8000 s waiting, 100 contentions: app!update+0x10"));
    // Under the name the objects table gives it (was "table_lock" alone).
    QVERIFY2(text.contains("\n  object 3 (mutex) /opt/app!table_lock\n"), qPrintable(text));
    QVERIFY(text.contains(QRegularExpression("worker \\(31\\) +worker \\(32\\) +50 +0.4000")));
    QVERIFY(text.endsWith('\n'));
  }

  // Read from outside (no interpose in the Hello's sources): what no
  // wrapper counted is null in the JSON and "-" in the text, never 0, and
  // the finding that needs every arrival seen is not made.
  void attachedSessionShowsUnknownNotZero() {
    const QString preloaded = dir_.filePath("preloaded.tmcap");
    const QString attached = dir_.filePath("attached.tmcap");
    QVERIFY(attachableSession(false).writeFile(preloaded));
    QVERIFY(attachableSession(true).writeFile(attached));
    auto json = [](const QString &file) {
      Run r = report({"--json", file});
      return r.code == 0 ? QJsonDocument::fromJson(r.out).object() : QJsonObject();
    };
    auto kinds = [](const QJsonObject &o) {
      QStringList k;
      for (const QJsonValue &f : o["findings"].toArray()) k << f["kind"].toString();
      return k;
    };
    auto object = [](const QJsonObject &o, int id) {
      for (const QJsonValue &v : o["sync_objects"].toArray())
        if (v["id"].toInt() == id) return v.toObject();
      return QJsonObject();
    };
    const QJsonObject pre = json(preloaded), att = json(attached);
    QVERIFY(!pre.isEmpty() && !att.isEmpty());

    QCOMPARE(pre["process"]["acquisitions_known"].toBool(false), true);
    QCOMPARE(att["process"]["acquisitions_known"].toBool(true), false);
    QVERIFY(att["process"]["sources"].toArray().contains(QStringLiteral("attach")));
    const QJsonObject lock = object(att, 3), barrier = object(att, 5);
    for (const char *key : {"acquisitions", "hold_s", "hold_samples", "hold_exact"})
      QVERIFY2(lock[QLatin1String(key)].isNull(), key);
    QVERIFY(barrier["acquisitions"].isNull());
    // What the sampler saw stays: contentions, waits, the longest wait.
    QCOMPARE(lock["contentions"].toInt(), 100);
    QCOMPARE(lock["wait_s"].toDouble(), 0.8);
    QCOMPARE(lock["max_wait_s"].toDouble(), 0.008);
    QCOMPARE(object(pre, 3)["acquisitions"].toInt(), 200);
    QCOMPARE(object(pre, 3)["hold_s"].toDouble(), 0.2);

    QVERIFY2(kinds(pre).contains("barrier_imbalance"), qPrintable(kinds(pre).join(' ')));
    QVERIFY2(!kinds(att).contains("barrier_imbalance"), qPrintable(kinds(att).join(' ')));
    QVERIFY(kinds(att).contains("serialising_object"));  // waits alone say it

    const QString text = QString::fromUtf8(report({attached}).out);
    QVERIFY2(text.contains("read from outside the process (attach): acquisitions, hold times and "
                           "uncontended calls are unknown, shown as -"),
             qPrintable(text));
    // id, kind, acquired, contended, wait s, max ms, hold s
    QVERIFY2(text.contains(QRegularExpression("\n +3 +mutex +- +100 +0\\.8000 +8\\.000 +- ")),
             qPrintable(text));
    const QString full = QString::fromUtf8(report({preloaded}).out);
    QVERIFY2(full.contains(
                 QRegularExpression("\n +3 +mutex +200 +100 +0\\.8000 +8\\.000 +~0\\.2000 ")),
             qPrintable(full));
  }

  void cleanCaptureHasNoFindings() {
    QString file = dir_.filePath("clean.tmcap");
    QVERIFY(reportSession(true).writeFile(file));
    Run r = report({"--json", file});
    QJsonObject o = QJsonDocument::fromJson(r.out).object();
    // Its last tick says two frames were dropped on the way: only that.
    for (const QJsonValue &v : o["findings"].toArray()) {
      QJsonObject f = v.toObject();
      if (f["kind"].toString() == QStringLiteral("data_lost"))
        QCOMPARE(f["evidence"].toObject()["frames_dropped"].toInt(), 2);
      else
        QCOMPARE(f["severity"].toString(), QStringLiteral("low"));
    }
    QVERIFY(QString::fromUtf8(report({file}).out).startsWith("Findings ("));
  }

  void damagedCaptureIsReportedWithExitTwo() {
    StreamBuilder b = reportSession(false);
    QByteArray s = b.stream();
    std::vector<uint64_t> off = b.frameOffsets();
    QString file = dir_.filePath("cut.tmcap");
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(s.left(qsizetype(off.back() + 3)));
    f.close();
    Run r = report({"--json", file});
    QCOMPARE(r.code, 2);
    QCOMPARE(QString::fromUtf8(r.err),
             QStringLiteral("threadmon-report: %1: truncated at byte %2 after %3 frames; "
                            "reporting what was read\n")
                 .arg(file)
                 .arg(off.back())
                 .arg(off.size() - 1));
    QJsonObject o = QJsonDocument::fromJson(r.out).object();
    QVERIFY(o["process"].toObject()["exit_status"].isNull());
    QCOMPARE(o["threads"].toArray().size(), 3);
  }

  // Whole frames with values the reader cannot trust: reported without
  // them, one line each on stderr and in the JSON, exit 2.
  void impossibleValuesAreDroppedWithExitTwo() {
    StreamBuilder b = reportSession(true);
    Lwp far{21, 0, 0, 0, 0};
    far.cpu = 1 << 28;
    b.tick(kT0 + 105 * kMs, {far});
    b.tick(int64_t(1) << 62, {});
    QString file = dir_.filePath("values.tmcap");
    QVERIFY(b.writeFile(file));
    Run r = report({"--json", file});
    QCOMPARE(r.code, 2);
    const QString warnTime = QStringLiteral(
        "dropped 1 records timed outside the session (78 hours from its first time, before "
        "2^58 ns)");
    const QString warnCpu = QStringLiteral("took 1 CPU numbers outside 0-4094 as unknown");
    QCOMPARE(QString::fromUtf8(r.err), QStringLiteral("threadmon-report: %1: %2\n"
                                                      "threadmon-report: %1: %3\n")
                                           .arg(file, warnTime, warnCpu));
    QJsonObject p = QJsonDocument::fromJson(r.out).object()["process"].toObject();
    QCOMPARE(p["input_warnings"].toArray(), QJsonArray({warnTime, warnCpu}));
    QCOMPARE(p["duration_s"].toDouble(), 0.1);  // the Goodbye's, not 2^62 ns
    Run t = report({file});
    QVERIFY2(t.out.contains("warning: the capture is damaged: took 1 CPU numbers"), t.out);
  }

  // A capture read a window at a time gives the tables a whole read gives:
  // 12 s of 10 busy threads (under 30 s, where a whole model thins nothing)
  // in 3 s windows, waits and holders crossing every edge. No window has a
  // finding (as the whole read has none); the notice says how they were
  // looked for.
  void streamedTablesEqualTheWholeRead() {
    const QString file = dir_.filePath("busy.tmcap");
    tmon::CaptureWriter w;
    QVERIFY(w.open(file));
    QVERIFY(busycap::write(&w, 10, 12'000'000'000));
    QVERIFY(w.close());
    const Run whole = report({"--json", "--whole", file});
    const Run streamed = report({"--json", "--window", "3", file});
    QCOMPARE(whole.code, 0);
    QCOMPARE(streamed.code, 0);
    QJsonObject a = QJsonDocument::fromJson(whole.out).object();
    QJsonObject b = QJsonDocument::fromJson(streamed.out).object();
    QVERIFY(!a["threads"].toArray().isEmpty());
    QVERIFY(b["findings"].toArray().isEmpty());
    QCOMPARE(b["process"].toObject()["notices"].toArray().size(), qsizetype(1));
    const Run text = report({"--window", "3", file});
    QVERIFY(
        text.out.contains("none: no lock, scheduling or deadlock problem stood out in any window"));
    QVERIFY(text.out.contains("findings are each 3.0 s window's, merged"));
    for (const char *key : {"threads", "user_threads", "cpus", "sync_objects", "wait_matrix"})
      QCOMPARE(b[key], a[key]);
    QJsonObject pa = a["process"].toObject(), pb = b["process"].toObject();
    pa.remove("notices");
    pb.remove("notices");
    QCOMPARE(pb, pa);
  }

  // The main thread blocked in pthread_join for 5.8 s: in 1 s windows, the
  // windows after the first see no transition of it before its end (the
  // warm-up is 1 s), and carry its blocked state over from the one before.
  // Its transitions come before the first tick: the first window reads the
  // capture from its first record (their records have no time in the index).
  void streamedCarriesAWaitAcrossWindows() {
    StreamBuilder b;
    b.hello(false);
    b.threadStart(100, kT0, "main", "", false, true);
    b.threadStart(101, kT0, "worker", "app!work");
    // In time order, as a probe sends them (the index's times only grow).
    b.transition(100, kT0 + 50 * kMs, THREADMON__THREAD_STATE__STATE_BLOCKED_JOIN);
    b.transition(101, kT0 + 50 * kMs, THREADMON__THREAD_STATE__STATE_RUNNING);
    for (int64_t k = 1; k <= 60; k++) {
      const uint64_t K = uint64_t(k), T = K * 100 * kMs;
      if (k == 59) {
        b.transition(100, kT0 + 5850 * kMs, THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, 101);
        b.threadEnd(101, kT0 + 5850 * kMs);
      }
      // The main thread never runs while it waits (its CPU clock stays), then
      // does.
      const uint64_t main = kMs + (k > 58 ? (K - 58) * kMs : 0);
      b.tick(kT0 + int64_t(T), {Lwp{100, main, 0, main, 0}, Lwp{101, T, 0, T, 0}});
    }
    b.goodbye(kT0 + 6000 * kMs, 0);
    const QString file = dir_.filePath("join.tmcap");
    QVERIFY(writeBlockPerFrame(b, file));
    const Run whole = report({"--json", "--whole", file});
    const Run streamed = report({"--json", "--window", "1", file});
    QCOMPARE(whole.code, 0);
    QCOMPARE(streamed.code, 0);
    const QJsonObject a = QJsonDocument::fromJson(whole.out).object()["threads"][0].toObject();
    const QJsonObject c = QJsonDocument::fromJson(streamed.out).object()["threads"][0].toObject();
    QCOMPARE(a["tid"].toInt(), 100);
    QVERIFY(a["states"]["blocked_join"].toDouble() > 90);
    // Within a tick (0.1 s of 6 s): the carried span ends where the kernel's
    // view first shows the thread running, at a tick, not at the unblocking
    // transition itself. Without it: 17.5% (the first window's part).
    const double blocked = c["states"]["blocked_join"].toDouble();
    QVERIFY2(qAbs(blocked - a["states"]["blocked_join"].toDouble()) <= 100.0 / 60,
             qPrintable(QString::number(blocked)));
  }

  // A thread's folded changes are cumulative: a later segment whose model
  // holds none of its samples (memcached's workers idle after the load)
  // leaves them as the earlier one said, as a whole read does.
  void streamedKeepsFoldsOfAnEarlierSegment() {
    StreamBuilder b;
    b.hello(false);
    b.threadStart(100, kT0, "main", "", false, true);
    b.threadStart(101, kT0, "worker", "app!work");
    b.transition(101, kT0 + 50 * kMs, THREADMON__THREAD_STATE__STATE_RUNNING);
    b.transition(101, kT0 + 100 * kMs, THREADMON__THREAD_STATE__STATE_UNKNOWN);
    b.transition(101, kT0 + 150 * kMs, THREADMON__THREAD_STATE__STATE_RUNNING);
    for (int64_t k = 1; k <= 40; k++) {
      const uint64_t T = uint64_t(k) * 100 * kMs;
      std::vector<Lwp> lwps{Lwp{100, T / 10, 0, T / 10, 0}};
      if (k <= 10) {  // then asleep and unchanged: no more samples of it
        Lwp w{101, T, 0, T, 0};
        if (k >= 2) {
          w.folded.assign(tmon::kWireStates, 0);
          w.folded[THREADMON__THREAD_STATE__STATE_RUNNING] = 25 * kMs;
          w.folded[THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX] = 25 * kMs;
          w.foldedChanges = 40;
        }
        lwps.push_back(w);
      }
      b.tick(kT0 + int64_t(T), lwps);
    }
    b.goodbye(kT0 + 4000 * kMs, 0);
    const QString file = dir_.filePath("folds.tmcap");
    QVERIFY(writeBlockPerFrame(b, file));
    const Run whole = report({"--json", "--whole", file});
    const Run streamed = report({"--json", "--window", "1", "--segment", "1", file});
    const QJsonObject a = QJsonDocument::fromJson(whole.out).object()["process"].toObject();
    const QJsonObject c = QJsonDocument::fromJson(streamed.out).object()["process"].toObject();
    QCOMPARE(a["folded_threads"].toInt(), 1);
    QCOMPARE(a["folded_s"].toDouble(), 0.05);
    QCOMPARE(c["folded_threads"], a["folded_threads"]);
    QCOMPARE(c["folded_s"], a["folded_s"]);
  }

  // JsonWriter writes what QJsonDocument::toJson(Indented) does, byte for
  // byte, on what a report can hold: integers and doubles (1000000 against
  // 1e+06), non-finite doubles, strings needing escapes or UTF-8, empty
  // and nested containers, keys in their order; Qt's trees as they are.
  void jsonWriterIsQtsOwn() {
    QJsonObject inner{{"b", QJsonArray{}}, {"a", QJsonObject{}}, {"c", QJsonValue()}};
    QJsonArray mixed{qint64(1000000), 1000000.0, 0.1, 1e-7, -0.0, 2.5e300, qint64(-42),
                     qint64(INT64_MAX), std::nan(""), HUGE_VAL, true, false, QJsonValue(),
                     QString::fromUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
                     QStringLiteral("tab\there \"quoted\" back\\slash /path\n\x01\x1f\x7f"),
                     QStringLiteral("del\x7f /slash"), QString(QChar(0xD800)), inner,
                     QJsonArray{QJsonArray{}}};
    QJsonObject o{{"z", mixed}, {"with \"quote\"", 3}, {QString::fromUtf8("\xc3\xbc"), "u"},
                  {"empty", QJsonObject{}}, {"nested", QJsonObject{{"x", inner}}}, {"", 0.5}};
    auto written = [](const QJsonValue &v) {
      JsonWriter w;
      w.value(v);
      w.finish();
      return w.text();
    };
    QCOMPARE(written(o), QJsonDocument(o).toJson(QJsonDocument::Indented));
    QCOMPARE(written(QJsonObject{}), QJsonDocument(QJsonObject{}).toJson());
    // A parsed 1e+06 is a double Qt writes as one; a parsed 7 an integer.
    const QJsonDocument parsed = QJsonDocument::fromJson("[1e+06, 7, 1.0, 12345678901234567890]");
    QCOMPARE(written(parsed.array()), parsed.toJson());

    // Written value by value, as the report does: doubles as QJsonValue(d)
    // keeps them (whole ones up to 2^53 as integers), Qt's shortest form
    // in either notation, keys literal and escaped.
    const double doubles[] = {1e-9,
                              0.1,
                              1e21,
                              -0.0,
                              1e15,
                              1e16,
                              0x1p53,
                              -0x1p53,
                              0x1p53 + 2,
                              100000.0,
                              0.0001,
                              1.5e-4,
                              1.2345e-5,
                              123456700000.0,
                              1234567000000.0,
                              12.5,
                              -2.5,
                              1.7976931348623157e308,
                              5e-324,
                              1e-300,
                              0.3,
                              2.0 / 3,
                              std::nan(""),
                              -HUGE_VAL};
    const qint64 integers[] = {0, -1, INT64_MAX, INT64_MIN, 9007199254740993};
    const QString strings[] = {
        QString(), QStringLiteral("plain"), QStringLiteral("\"q\" \\b\\ \b\f\n\r\t \x01\x1f \x7f"),
        QString::fromUtf8("caf\xc3\xa9 \xf0\x9f\x98\x80"), QString(QChar(0xDC00))};
    JsonWriter w;
    QJsonObject want;
    QJsonArray ds, is, ss;
    w.beginObject();
    w.key(QString::fromUtf8("\"key\" \\ \xc3\xbc"));  // a key Qt escapes
    w.value(1);
    want[QString::fromUtf8("\"key\" \\ \xc3\xbc")] = 1;
    w.key("b");
    w.beginArray();
    for (double d : doubles) {
      w.value(d);
      ds.append(d);
    }
    w.endArray();
    w.key("c");
    w.beginArray();
    for (qint64 i : integers) {
      w.value(i);
      is.append(i);
    }
    w.endArray();
    w.key("d");
    w.beginObject();
    w.endObject();
    w.key("e");
    w.beginArray();
    w.endArray();
    w.key("f");
    w.beginArray();
    for (const QString &t : strings) {
      w.value(t);
      ss.append(t);
    }
    w.null();
    ss.append(QJsonValue());
    w.value(true);
    ss.append(true);
    w.value("utf-8 \xe2\x82\xac");
    ss.append(QString::fromUtf8("utf-8 \xe2\x82\xac"));
    w.endArray();
    w.key(QStringLiteral("g\x01"));
    w.value(false);
    w.endObject();
    w.finish();
    want["b"] = ds;
    want["c"] = is;
    want["d"] = QJsonObject{};
    want["e"] = QJsonArray{};
    want["f"] = ss;
    want[QStringLiteral("g\x01")] = false;
    QCOMPARE(w.text(), QJsonDocument(want).toJson());
  }

  // Every double's shortest form as Qt's: 100,000 of every magnitude and
  // of the kinds a report prints (nanoseconds in seconds, percentages);
  // seconds(ns) as value(ns / 1e9), at its edges and for 100,000 more.
  void jsonWriterDoublesAreQts() {
    std::mt19937_64 random(29);
    JsonWriter w;
    QJsonArray want;
    w.beginArray();
    for (int i = 0; i < 100000; i++) {
      double d;
      const uint64_t r = random();
      switch (i % 4) {
        case 0:
          std::memcpy(&d, &r, sizeof d);
          break;
        case 1:
          d = double(int64_t(r % 100'000'000'000)) / 1e9;
          break;
        case 2:
          d = 100.0 * double(r % 1000000) / double(1 + (r >> 32) % 1000000);
          break;
        default:
          d = double(r % 100000) * std::pow(10.0, int((r >> 40) % 60) - 30);
          break;
      }
      w.value(d);
      want.append(d);
    }
    for (int64_t ns :
         {int64_t(0), int64_t(1), int64_t(-1), int64_t(999'999'999), int64_t(1'000'000'001),
          int64_t(-2'500'000'000), int64_t(100'000), int64_t(999'999'999'999'999),
          int64_t(1'000'000'000'000'000), int64_t(1'000'000'000'000'001), INT64_MAX, INT64_MIN}) {
      w.seconds(ns);
      want.append(double(ns) / 1e9);
    }
    for (int i = 0; i < 100000; i++) {
      const uint64_t r = random();
      int64_t ns = int64_t(r >> (r % 64));
      if (i % 3 == 0) ns = int64_t(r % 1000) * int64_t(std::pow(10.0, double((r >> 20) % 16)));
      if (r >> 63) ns = -ns;
      w.seconds(ns);
      want.append(double(ns) / 1e9);
    }
    w.endArray();
    w.finish();
    QCOMPARE(w.text(), QJsonDocument(want).toJson());
  }

  // numbers() writes an object as its members one by one do, at every
  // depth (the room it makes at once is its indents'), in and out of
  // arrays, with seconds that take value(double) (whole seconds, beyond
  // 10^15 ns) and that do not, negatives, and no member at all; through a
  // small buffer written out (a FILE) as into memory.
  void jsonWriterNumbersAsMembers() {
    std::mt19937_64 random(3);
    const int64_t edges[] = {0,
                             1,
                             -1,
                             999'999'999,
                             1'000'000'000,
                             -3'000'000'000,
                             1'000'000'000'000'001,
                             INT64_MAX,
                             INT64_MIN,
                             12'345'678'900};
    auto write = [&](JsonWriter &w, bool fast) {
      std::mt19937_64 r = random;
      w.beginArray();
      for (int i = 0; i < 3000; i++) {
        const int depth = i % 19;
        for (int d = 0; d < depth; d++) w.beginArray();
        const int64_t a = int64_t(r() >> (r() % 64)) * (i % 2 ? 1 : -1);
        const int64_t b = i % 7 ? int64_t(r() % 100'000'000'000) : edges[r() % 10];
        if (fast) {
          if (i % 11 == 0)
            w.numbers({});
          else
            w.numbers({{"count", a}, {"holder", int64_t(r() % 70000)}, {"wait_s", b, true}});
        } else if (i % 11 == 0) {
          w.beginObject();
          w.endObject();
        } else {
          w.beginObject();
          w.key("count");
          w.value(qint64(a));
          w.key("holder");
          w.value(qint64(r() % 70000));
          w.key("wait_s");
          w.seconds(b);
          w.endObject();
        }
        for (int d = 0; d < depth; d++) w.endArray();
      }
      w.endArray();
      w.finish();
    };
    JsonWriter slow, fast;
    write(slow, false);
    write(fast, true);
    QCOMPARE(fast.text(), slow.text());
    const QByteArray want = slow.text();
    std::FILE *f = std::tmpfile();
    QVERIFY(f);
    {
      JsonWriter out(f);
      write(out, true);
    }
    std::rewind(f);
    QByteArray got(want.size() + 1, '\0');
    got.resize(qsizetype(std::fread(got.data(), 1, size_t(got.size()), f)));
    std::fclose(f);
    QCOMPARE(got, want);
  }

  // --json's text, written as it is made, is the report's QJsonObject as
  // Qt writes it, for captures with every kind of member (an attached
  // session's nulls, who blocked whom, findings, a streamed read's merged
  // evidence), and with --thread keeping some threads.
  void writtenReportIsTheObjectsText() {
    const QString contended = dir_.filePath("written-contended.tmcap"),
                  attached = dir_.filePath("written-attached.tmcap"),
                  plain = dir_.filePath("written-plain.tmcap");
    QVERIFY(contendedSession().writeFile(contended));
    QVERIFY(attachableSession(true).writeFile(attached));
    QVERIFY(reportSession(false, true).writeFile(plain));
    for (const QString &file : {contended, attached, plain})
      for (const auto mode : {StreamedReport::Mode::Whole, StreamedReport::Mode::Stream}) {
        ReportRows rows;
        StreamedReport::rows(file, &rows, mode, 100'000'000);
        QVERIFY(!rows.threads.empty());
        const QJsonObject report = reportJson(rows);
        JsonWriter w;
        writeReportJson(rows, &w);
        w.finish();
        QCOMPARE(w.text(), QJsonDocument(report).toJson());

        const ThreadFilter only(QStringList{"31"});
        QJsonObject kept = report;
        QJsonArray threads;
        for (const QJsonValue &t : report["threads"].toArray())
          if (t["tid"].toInteger() == 31) threads.append(t);
        kept["threads"] = threads;
        JsonWriter some;
        writeReportJson(rows, &some, &only);
        some.finish();
        QCOMPARE(some.text(), QJsonDocument(kept).toJson());
      }
  }

  void unreadableFileExitsOne() {
    Run r = report({dir_.filePath("nope.tmcap")});
    QCOMPARE(r.code, 1);
    QVERIFY(r.err.startsWith("threadmon-report: "));
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY(r.out.isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestReport)
#include "test_report.moc"
