// A process tree's capture (model/capturetree.h, docs/format.md "Process
// trees"): the index read (which process started which, how each ended,
// lines it cannot read skipped), and in the display a tab listing the
// processes beside the program's own capture, a double-click on a process
// with a session opening its capture in a tab of its own.
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include "capturetree.h"
#include "mainwindow.h"
#include "synthscenarios.h"

namespace {

void write(const QString &path, const QByteArray &bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(bytes);
}

// The root 100 (a session, exit 3), a child 150 that ran no thread
// (exit 0), a child 200 that started a session (exit 0), a grandchild 250
// killed (no end), and a line no reader can use.
void makeTree(const QString &dir) {
  synth::Workload root, child;
  root.pid = 100;
  child.pid = 200;
  root.seconds = child.seconds = 0.3;
  write(dir + "/100.tmcap", synth::stream(root));
  write(dir + "/200.tmcap", synth::stream(child));
  write(dir + "/lives",
        "life 1 start pid=100 ppid=1 t=1000000 capture=100.tmcap name=sh -c x\n"
        "life 1 fork pid=150 ppid=100 t=2000000 name=sh\n"
        "life 1 end pid=150 ppid=100 t=2500000 since=2000000 how=exit status=0 utime=300000 "
        "stime=100000 name=true\n"
        "life 1 start pid=200 ppid=100 t=3000000 capture=200.tmcap name=tool\n"
        "garbage\n"
        "life 1 fork pid=250 ppid=200 t=3500000 name=tool\n"
        "life 1 start pid=666 ppid=100 t=3600000 capture=../escape.tmcap name=x\n"
        "life 1 end pid=200 ppid=100 t=9000000 since=3000000 how=_exit status=0 utime=5 "
        "stime=6 name=tool\n"
        "life 1 end pid=100 ppid=1 t=10000000 since=1000000 how=exit status=3 utime=1 stime=2 "
        "name=sh\n");
}

}  // namespace

class TestUiTree : public QObject {
  Q_OBJECT
 private slots:
  void indexRead() {
    QTemporaryDir dir;
    makeTree(dir.path());
    QVERIFY(tmon::CaptureTree::isTree(dir.path()));
    QVERIFY(!tmon::CaptureTree::isTree(dir.path() + "/100.tmcap"));
    tmon::CaptureTree tree;
    QVERIFY2(tree.open(dir.path()), qPrintable(tree.error()));
    QCOMPARE(tree.skippedLines(), 1);
    QCOMPARE(tree.rootPid(), 100u);
    QStringList order;
    for (const tmon::TreeProcess &p : tree.processes())
      order << QStringLiteral("%1@%2").arg(p.pid).arg(p.depth);
    QCOMPARE(order, QStringList({"100@0", "150@1", "200@1", "250@2", "666@1"}));
    const tmon::TreeProcess *sh = tree.find(100), *tru = tree.find(150), *tool = tree.find(200);
    QVERIFY(sh && tru && tool);
    QCOMPARE(sh->status, 3);
    QCOMPARE(sh->name, QStringLiteral("sh"));
    QVERIFY(tru->ended && tru->how == "exit" && tru->status == 0);
    QCOMPARE(tru->endNs - tru->startNs, 500000ull);
    QCOMPARE(tru->utimeNs, 300000ull);
    QCOMPARE(tool->how, QStringLiteral("_exit"));
    QVERIFY(!tree.find(250)->ended);
    QCOMPARE(tree.captureFor(200), QDir(dir.path()).absoluteFilePath("200.tmcap"));
    QVERIFY(tree.captureFor(150).isEmpty());
    QVERIFY(tree.captureFor(666).isEmpty());  // a name with a slash is never followed
    QCOMPARE(tmon::CaptureTree::mainCapture(dir.path()), tree.captureFor(100));
  }

  void notATree() {
    QTemporaryDir dir;
    tmon::CaptureTree tree;
    QVERIFY(!tree.open(dir.path()));
    QVERIFY(!tree.error().isEmpty());
    write(dir.path() + "/lives", "garbage\n");
    QVERIFY(!tree.open(dir.path()));
    QCOMPARE(tree.error(), QStringLiteral("its index names no process"));
  }

  void displayListsAndOpens() {
    QTemporaryDir dir;
    makeTree(dir.path());
    MainWindow w;
    w.openCaptureFile(dir.path());
    // Start, the processes' tab, and the program's own capture read in another.
    QTRY_COMPARE_WITH_TIMEOUT(w.tabs()->count(), 3, 30000);
    auto *view = w.tabs()->widget(1)->findChild<QTreeWidget *>();
    QVERIFY(view);
    QCOMPARE(view->topLevelItemCount(), 1);
    QTreeWidgetItem *root = view->topLevelItem(0);
    QCOMPARE(root->text(0), QStringLiteral("100"));
    QCOMPARE(root->text(2), QStringLiteral("exit 3"));
    QCOMPARE(root->childCount(), 3);
    QTreeWidgetItem *tool = root->child(1);
    QCOMPARE(tool->text(1), QStringLiteral("tool"));
    QCOMPARE(tool->child(0)->text(2), QStringLiteral("not seen"));
    QCOMPARE(root->child(0)->text(6), QStringLiteral("life only"));
    QTRY_VERIFY_WITH_TIMEOUT(!qobject_cast<QLabel *>(w.tabs()->widget(2)), 30000);  // read
    QCOMPARE(w.tabs()->tabToolTip(2), QDir(dir.path()).absoluteFilePath("100.tmcap"));
    // A life only opens nothing; a session opens its capture.
    emit view->itemActivated(root->child(0), 0);
    QCOMPARE(w.tabs()->count(), 3);
    emit view->itemActivated(tool, 0);
    QTRY_COMPARE_WITH_TIMEOUT(w.tabs()->count(), 4, 30000);
    QCOMPARE(w.tabs()->tabToolTip(3), QDir(dir.path()).absoluteFilePath("200.tmcap"));
  }
};

QTEST_MAIN(TestUiTree)
#include "test_ui_tree.moc"
