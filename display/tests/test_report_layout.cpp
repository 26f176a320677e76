// threadmon-report's text layout: columns stay apart whatever the figures,
// and --top / --thread keep a report of thousands of threads readable.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "synthstream.h"

using namespace tmtest;

namespace {

constexpr int kWorkers = 100;

// Workers 1000..1099 ("worker-0".."worker-99"), worker-k on a CPU k ms of
// 100; mutex 3 with a wait of 381.55 s and a longest wait of 187036 ms (so
// fixed-width columns ran them together as "381.5515187036.000").
StreamBuilder crowdSession() {
  StreamBuilder b;
  b.hello(false);
  std::vector<std::string> names;
  for (int k = 0; k < kWorkers; k++) names.push_back("worker-" + std::to_string(k));
  for (int k = 0; k < kWorkers; k++)
    b.threadStart(uint32_t(1000 + k), kT0, names[size_t(k)].c_str(), "app!work");
  b.syncObject(3, THREADMON__SYNC_KIND__KIND_MUTEX, 0x5000, "app", "big_lock", nullptr);
  std::vector<Lwp> lwps;
  for (int k = 0; k < kWorkers; k++)
    lwps.push_back(Lwp{uint32_t(1000 + k), 0, 0, uint64_t(k) * kMs, 0});
  b.tick(kT0 + 10 * kMs, {});
  b.tick(kT0 + 100 * kMs, lwps, {},
         {Sync{3, 7, 5, uint64_t(381'550) * kMs, uint64_t(187'036) * kMs, 0}});
  b.goodbye(kT0 + 100 * kMs, 0);
  return b;
}

QString report(const QStringList &args, int *code = nullptr) {
  QProcess p;
  p.start(qEnvironmentVariable("THREADMON_REPORT"), args);
  p.waitForFinished(30000);
  if (code) *code = p.exitCode();
  return QString::fromUtf8(p.readAllStandardOutput());
}

// The rows of the "Thread states" table.
QStringList stateRows(const QString &text) {
  QStringList lines = text.split('\n');
  int at = int(lines.indexOf(QRegularExpression(QStringLiteral("thread +life s.*"))));
  QStringList rows;
  for (int i = at + 1; at >= 0 && i < lines.size() && lines[i].startsWith(u'1'); i++) rows << lines[i];
  return rows;
}

}  // namespace

class TestReportLayout : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString file_;

 private slots:
  void initTestCase() {
    QVERIFY(!qEnvironmentVariable("THREADMON_REPORT").isEmpty());
    file_ = dir_.filePath("crowd.tmcap");
    QVERIFY(crowdSession().writeFile(file_));
  }

  void wideFiguresStayApart() {
    int code = -1;
    QString text = report({file_}, &code);
    QCOMPARE(code, 0);
    QVERIFY2(text.contains(QRegularExpression(
                 "\\n +3 +mutex +7 +5 +381\\.5500 +187036\\.000 +~?0\\.0000 +app!big_lock")),
             qPrintable(text));
  }

  void tablesStopAtTopWithACount() {
    QString text = report({file_});
    QStringList rows = stateRows(text);
    QCOMPARE(rows.size(), 30);  // the default
    // The busiest: worker-70..99, in their order of first sight.
    QVERIFY2(rows.first().startsWith("1070 worker-70 "), qPrintable(rows.first()));
    QVERIFY2(rows.last().startsWith("1099 worker-99 "), qPrintable(rows.last()));
    QVERIFY(text.contains("  … and 70 more threads (the 30 shown spent the most time on a CPU"));

    rows = stateRows(report({"--top", "5", file_}));
    QCOMPARE(rows.size(), 5);
    QCOMPARE(stateRows(report({"--top=0", file_})).size(), kWorkers);
    text = report({"--top", QString::number(kWorkers - 1), file_});
    QVERIFY2(text.contains("  … and 1 more thread (the "), qPrintable(text.right(2000)));
    int code = -1;
    report({"--top", "many", file_}, &code);
    QCOMPARE(code, 1);
  }

  void threadPatternPicks() {
    QString text = report({"--thread", "worker-1?", file_});
    QStringList rows = stateRows(text);
    QCOMPARE(rows.size(), 10);  // worker-10..19
    QVERIFY(text.contains("  10 of 100 threads match --thread"));
    QVERIFY(!text.contains("more threads"));
    // A word: any name containing it, or a tid.
    QCOMPARE(stateRows(report({"--thread", "worker-5", file_})).size(), 11);
    rows = stateRows(report({"--thread", "1042", "--thread", "1043", file_}));
    QCOMPARE(rows.size(), 2);
    QVERIFY(rows[0].startsWith("1042 worker-42"));

    QJsonObject o = QJsonDocument::fromJson(
                        report({"--json", "--thread", "10[0-9][0-4]", file_}).toUtf8())
                        .object();
    QJsonArray threads = o["threads"].toArray();
    QCOMPARE(threads.size(), 50);  // tids ending in 0-4
    QCOMPARE(o["sync_objects"].toArray().size(), 1);
  }
};

QTEST_GUILESS_MAIN(TestReportLayout)
#include "test_report_layout.moc"
