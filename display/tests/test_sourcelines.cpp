// Source lines (sourcelines.h): a function of this test binary is found at
// its line; a module that is not a regular file, not here, or another
// build gives nothing, and never blocks.
#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include "sourcelines.h"

namespace {

// The lines of this function: a frame inside it reads one of them.
const int kFirstLine = __LINE__ + 1, kLastLine = __LINE__ + 4;
__attribute__((noinline)) int markedFunction(int x) {
  asm volatile("" ::: "memory");
  return x * 3 + 1;
}

// Where markedFunction's first instruction lies in this binary.
tmon::CodeLocation markedLocation() {
  Dl_info info;
  link_map *lm = nullptr;
  void *fn = reinterpret_cast<void *>(&markedFunction);
  if (!dladdr1(fn, &info, reinterpret_cast<void **>(&lm), RTLD_DL_LINKMAP) || !lm) return {};
  return tmon::CodeLocation{QCoreApplication::applicationFilePath(),
                            reinterpret_cast<uintptr_t>(fn) - lm->l_addr, QByteArray()};
}

}  // namespace

class TestSourceLines : public QObject {
  Q_OBJECT

 private slots:
  void functionOfThisBinary() {
    QVERIFY(markedFunction(1) == 4);
    tmon::CodeLocation where = markedLocation();
    QVERIFY(!where.modulePath.isEmpty());
    const QString line = tmon::sourceLine(where);
    // Its first instruction belongs to one of its lines: the statement
    // optimised builds start with, or its opening line, where a sanitizer's
    // instrumentation puts it.
    const QString prefix = QStringLiteral("test_sourcelines.cpp:");
    QVERIFY2(line.startsWith(prefix), qPrintable(line));
    const int n = line.mid(prefix.size()).toInt();
    QVERIFY2(n >= kFirstLine && n <= kLastLine, qPrintable(line));
  }

  void anotherBuildGivesNothing() {
    tmon::CodeLocation where = markedLocation();
    where.buildId = QByteArray(20, '\x5a');
    QCOMPARE(tmon::sourceLine(where), QString());
  }

  void notAModuleGivesNothing() {
    QTemporaryDir dir;
    const QString fifo = dir.filePath("fifo");
    QCOMPARE(mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    const uint64_t addr = 0x1000;
    for (const QString &path : {fifo, QStringLiteral("/dev/zero"), QStringLiteral("/nonexistent/x"),
                                QStringLiteral("relative/path"), dir.path(), QString()})
      QCOMPARE(tmon::sourceLine(tmon::CodeLocation{path, addr, QByteArray()}), QString());
    QFile junk(dir.filePath("junk"));
    QVERIFY(junk.open(QIODevice::WriteOnly));
    junk.write(QByteArray(4096, '\x7f'));
    junk.close();
    QCOMPARE(tmon::sourceLine(tmon::CodeLocation{junk.fileName(), addr, QByteArray()}), QString());
  }

  // A stream names the module: /etc/shadow or a device gets a line saying
  // it is not read, and a file only its (root) owner may read is not read
  // either, while the same bytes readable by everyone are.
  void onlyFilesEveryoneMayReadAreRead() {
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("not reading debug information from "
                                                           "/dev/null: not a regular file")));
    QCOMPARE(tmon::sourceLine(tmon::CodeLocation{QStringLiteral("/dev/null"), 0x1000, {}}),
             QString());
    if (geteuid() != 0) {  // a user's own private files are read: nothing to refuse
      QTest::qSkip("the rest needs a root-owned private file", __FILE__, __LINE__);
      return;
    }
    QTemporaryDir dir;
    const tmon::CodeLocation where = markedLocation();
    const QString secret = dir.filePath(QStringLiteral("secret")),
                  open = dir.filePath(QStringLiteral("open"));
    QVERIFY(QFile::copy(where.modulePath, secret) && QFile::copy(where.modulePath, open));
    QVERIFY(chmod(QFile::encodeName(secret).constData(), 0600) == 0);
    QVERIFY(chmod(QFile::encodeName(open).constData(), 0644) == 0);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("from .*/secret: not a "
                                                                         "regular file that")));
    QCOMPARE(tmon::sourceLine(tmon::CodeLocation{secret, where.address, where.buildId}), QString());
    const QString line = tmon::sourceLine(tmon::CodeLocation{open, where.address, where.buildId});
    QVERIFY2(line.startsWith(QStringLiteral("test_sourcelines.cpp:")), qPrintable(line));
    // Libraries are loaded through links (libstdc++.so.6 -> libstdc++.so.6.0.30):
    // what is checked is the file a link leads to, not the link.
    const QString toOpen = dir.filePath(QStringLiteral("to-open")),
                  toSecret = dir.filePath(QStringLiteral("to-secret"));
    QVERIFY(QFile::link(open, toOpen) && QFile::link(secret, toSecret));
    const QString linked =
        tmon::sourceLine(tmon::CodeLocation{toOpen, where.address, where.buildId});
    QVERIFY2(linked == line, qPrintable(linked));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("from .*/to-secret: not "
                                                                         "a regular file that")));
    QCOMPARE(tmon::sourceLine(tmon::CodeLocation{toSecret, where.address, where.buildId}),
             QString());
  }
};

QTEST_GUILESS_MAIN(TestSourceLines)
#include "test_sourcelines.moc"
