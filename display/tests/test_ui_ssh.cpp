// The streams `threadmon serve-stdio` relays over ssh (tmnet::MuxReader):
// a tab per process, labelled by host and pid; the session's end, another
// wire version and garbage each said in one line; the "Watch over SSH"
// dialog's target. With THREADMON_SCREENSHOT_DIR set, the window with its
// tabs and the dialog are saved there as PNGs.
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QListWidget>
#include <QPointer>
#include <QProcess>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QtTest>

#include "mainwindow.h"
#include "muxreader.h"
#include "probeconnection.h"
#include "sshdialog.h"
#include "synthscenarios.h"

namespace {

QByteArray muxRecord(char kind, quint32 stream, const QByteArray &body) {
  QByteArray r(9, '\0');
  r[0] = kind;
  for (int i = 0; i < 4; ++i) {
    r[1 + i] = char((stream >> (8 * i)) & 0xff);
    r[5 + i] = char((quint32(body.size()) >> (8 * i)) & 0xff);
  }
  return r + body;
}

// Two processes' streams, their records interleaved as a forking program's
// would be, then the exit status.
QByteArray twoProcesses(int exitStatus) {
  synth::Workload parent, child;
  parent.pid = 100;
  child.pid = 200;
  parent.seconds = child.seconds = 0.5;
  const QByteArray a = synth::stream(parent), b = synth::stream(child);
  QByteArray out = "threadmon-serve 1 0.1.0\n";
  out += muxRecord('O', 1, "100") + muxRecord('O', 2, "200");
  for (int at = 0; at < qMax(a.size(), b.size()); at += 4096) {
    if (at < a.size()) out += muxRecord('D', 1, a.mid(at, 4096));
    if (at < b.size()) out += muxRecord('D', 2, b.mid(at, 4096));
  }
  out += muxRecord('E', 1, {}) + muxRecord('E', 2, {});
  return out + muxRecord('X', 0, QByteArray::number(exitStatus));
}

// The command lines of the running processes (other than this one) that
// hold word.
QStringList processesWith(const QString &word) {
  QStringList found;
  const QString self = QString::number(QCoreApplication::applicationPid());
  for (const QString &pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
    if (pid == self || !pid.front().isDigit()) continue;
    QFile f(QStringLiteral("/proc/%1/cmdline").arg(pid));
    if (!f.open(QIODevice::ReadOnly)) continue;
    const QString line = QString::fromLocal8Bit(f.readAll()).replace(QChar(0), QChar(' '));
    if (line.contains(word)) found << line;
  }
  return found;
}

void saveShot(QWidget *w, const char *name) {
  const QString dir = qEnvironmentVariable("THREADMON_SCREENSHOT_DIR");
  if (!dir.isEmpty()) QVERIFY(w->grab().save(dir + QLatin1Char('/') + QLatin1String(name)));
}

}  // namespace

class TestUiSsh : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { qRegisterMetaType<tmnet::ProbeConnection *>(); }

  void aTabPerProcessLabelledByHost() {
    MainWindow w;
    w.resize(1100, 700);
    auto *reader = new tmnet::MuxReader(QStringLiteral("ssh testhost"), &w);
    w.watchMux(reader);
    QSignalSpy ended(reader, &tmnet::MuxReader::ended);
    const QByteArray bytes = twoProcesses(3);
    for (int at = 0; at < bytes.size(); at += 1000) reader->consume(bytes.mid(at, 1000));
    QTRY_COMPARE(w.tabs()->count(), 3);  // Start, and one per process
    // Each title follows its model: the Hello gives it the pid and host.
    QStringList titles;
    QTRY_VERIFY((titles = {w.tabs()->tabText(1), w.tabs()->tabText(2)},
                 titles.join(' ').count(QLatin1String("(ended)")) == 2));
    titles.sort();
    QVERIFY2(titles[0].contains(QLatin1String("[100]")) &&
                 titles[0].contains(QLatin1String("on testhost")),
             qPrintable(titles[0]));
    QVERIFY2(titles[1].contains(QLatin1String("[200]")) &&
                 titles[1].contains(QLatin1String("on testhost")),
             qPrintable(titles[1]));
    QCOMPARE(ended.count(), 1);
    QCOMPARE(ended.at(0).at(0).toString(),
             QStringLiteral("ssh testhost: the session ended, exit status 3"));
    QCOMPARE(w.statusBar()->currentMessage(), ended.at(0).at(0).toString());
    w.show();
    saveShot(&w, "ssh-tabs.png");
  }

  void oneLineForWhatIsNotAStream_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("said");
    QTest::newRow("another wire") << QByteArray("threadmon-serve 2 9.0\n")
                                  << "ssh h runs threadmon 9.0, whose remote wire is 2; this "
                                     "display speaks 1";
    QTest::newRow("not threadmon") << QByteArray("SSH-2.0-OpenSSH_9.2\r\n")
                                   << "ssh h: not a threadmon stream";
    QTest::newRow("no line") << QByteArray(300, 'x') << "ssh h: not a threadmon stream";
    QTest::newRow("huge record")
        << QByteArray("threadmon-serve 1 0.1.0\n") + muxRecord('D', 1, {}).left(5) +
               QByteArray("\xff\xff\xff\x7f", 4)
        << "ssh h: a record of 2147483647 bytes: not a threadmon stream";
    QTest::newRow("unknown kind") << QByteArray("threadmon-serve 1 0.1.0\n") +
                                         muxRecord('Z', 1, "x")
                                  << "ssh h: a record of unknown kind: not a threadmon stream";
    QTest::newRow("failed to start") << QByteArray("threadmon-serve 1 0.1.0\n") +
                                            muxRecord('F', 0, "127 ./server: no such file")
                                     << "ssh h: ./server: no such file";
  }

  void oneLineForWhatIsNotAStream() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, said);
    tmnet::MuxReader reader(QStringLiteral("ssh h"));
    QSignalSpy ended(&reader, &tmnet::MuxReader::ended);
    QSignalSpy sessions(&reader, &tmnet::MuxReader::sessionAccepted);
    reader.consume(bytes);
    reader.consume(twoProcesses(0));  // nothing after the refusal is read
    QCOMPARE(ended.count(), 1);
    QCOMPARE(ended.at(0).at(0).toString(), said);
    QCOMPARE(sessions.count(), 0);
  }

  void aLinkCutShortEndsItsSessions() {
    MainWindow w;
    auto *reader = new tmnet::MuxReader(QStringLiteral("ssh h"), &w);
    w.watchMux(reader);
    const QByteArray bytes = twoProcesses(0);
    reader->consume(bytes.left(bytes.size() / 2));
    QTRY_COMPARE(w.tabs()->count(), 3);
    reader->finish();
    QCOMPARE(w.statusBar()->currentMessage(),
             QStringLiteral("ssh h: the link ended before the session did"));
    QTRY_VERIFY(w.tabs()->tabText(1).contains(QLatin1String("ended")) ||
                w.tabs()->tabText(1).contains(QLatin1String("error")));
  }

  // A tab closed while its stream still comes: the rest of the stream and
  // the link's end find the session gone (it crashed the display once).
  void aTabClosedWhileItsStreamRuns() {
    MainWindow w;
    auto *reader = new tmnet::MuxReader(QStringLiteral("ssh h"), &w);
    w.watchMux(reader);
    const QByteArray bytes = twoProcesses(0);
    reader->consume(bytes.left(bytes.size() / 2));
    QTRY_COMPARE(w.tabs()->count(), 3);
    emit w.tabs()->tabCloseRequested(1);
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    QCOMPARE(w.tabs()->count(), 2);
    reader->consume(bytes.mid(bytes.size() / 2));
    QCOMPARE(w.statusBar()->currentMessage(),
             QStringLiteral("ssh h: the session ended, exit status 0"));
    QTRY_VERIFY(w.tabs()->tabText(1).contains(QLatin1String("(ended)")));
  }

  // File > Watch over SSH's work against a real sshd: tests/e2e/test_ssh.py
  // runs this with THREADMON_TEST_SSH_HOST (and THREADMON_SSH) set, and
  // THREADMON_TEST_WORKLOAD; skipped otherwise.
  void watchOverRealSsh() {
    const QString host = qEnvironmentVariable("THREADMON_TEST_SSH_HOST");
    const QString workload = qEnvironmentVariable("THREADMON_TEST_WORKLOAD");
    if (host.isEmpty() || workload.isEmpty()) {  // QSKIP's variadic form warns under -pedantic
      QTest::qSkip("run by tests/e2e/test_ssh.py (an sshd)", __FILE__, __LINE__);
      return;
    }
    QVERIFY2(!threadmonLauncher().isEmpty(), "no threadmon launcher beside the display");
    MainWindow w;
    w.watchOverSsh(host, {QStringLiteral("--"), workload, QStringLiteral("--rounds"),
                          QStringLiteral("10")});
    QTRY_COMPARE_WITH_TIMEOUT(w.tabs()->count(), 2, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(w.tabs()->tabText(1).contains(QLatin1String("(ended)")), 30000);
    QVERIFY2(w.tabs()->tabText(1).contains(QLatin1String(" on ")),
             qPrintable(w.tabs()->tabText(1)));
    QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().endsWith(
                                 QLatin1String(": the session ended, exit status 0")),
                             30000);
  }

  // Closing the last tab of a Watch over SSH stops the program on the host
  // (as closing run --display --ssh's window does): nothing of it, the
  // relay or ssh is left running. Run by tests/e2e/test_ssh.py, as above.
  void closingTheTabStopsTheRemoteProgram() {
    const QString host = qEnvironmentVariable("THREADMON_TEST_SSH_HOST");
    const QString workload = qEnvironmentVariable("THREADMON_TEST_WORKLOAD");
    if (host.isEmpty() || workload.isEmpty()) {
      QTest::qSkip("run by tests/e2e/test_ssh.py (an sshd)", __FILE__, __LINE__);
      return;
    }
    const QString mark = QStringLiteral("987651");  // rounds enough to outlive the test
    MainWindow w;
    w.watchOverSsh(host, {QStringLiteral("--"), workload, QStringLiteral("--rounds"), mark});
    QTRY_COMPARE_WITH_TIMEOUT(w.tabs()->count(), 2, 30000);
    QVERIFY(!processesWith(mark).isEmpty());
    const QList<QProcess *> relays = w.findChildren<QProcess *>();
    QCOMPARE(relays.size(), 1);
    QPointer<QProcess> relay = relays[0];
    emit w.tabs()->tabCloseRequested(1);
    QCOMPARE(w.tabs()->count(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(relay.isNull(), 30000);
    QTRY_VERIFY2_WITH_TIMEOUT(processesWith(mark).isEmpty(),
                              qPrintable(processesWith(mark).join(QLatin1String(" | "))), 10000);
  }

  void dialogTarget() {
    SshDialog d(QStringLiteral("/bin/true"));
    d.resize(520, 420);
    const QList<QLineEdit *> edits = d.findChildren<QLineEdit *>();
    QCOMPARE(edits.size(), 2);  // the host, the command
    edits[0]->setText(QStringLiteral("deploy@web1"));
    edits[1]->setText(QStringLiteral("./server --name \"a b\""));
    QCOMPARE(d.host(), QStringLiteral("deploy@web1"));
    QCOMPARE(d.target(), (QStringList{"--", "./server", "--name", "a b"}));
    d.setProcessListing(QStringLiteral("    1 root /sbin/init\n 4242 deploy ./server --port 80\n"
                                       "garbage\n"));
    auto *list = d.findChild<QListWidget *>();
    QCOMPARE(list->count(), 2);
    list->setCurrentRow(1);
    QCOMPARE(d.target(), (QStringList{"-p", "4242"}));
    d.show();
    saveShot(&d, "ssh-dialog.png");
  }
};

QTEST_MAIN(TestUiSsh)
#include "test_ui_ssh.moc"
