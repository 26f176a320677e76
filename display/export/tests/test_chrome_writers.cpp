// The Chrome writers' paths a recorded capture does not take: a pid of more
// than 7 digits (the waits' starts then copied as 112 bytes, not 96), each
// with and without AVX2 (THREADMON_EXPORT_NO_AVX2), the bytes compared and
// the events read back.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "exportformats.h"
#include "exportoutput.h"
#include "synthscenarios.h"

class TestChromeWriters : public QObject {
  Q_OBJECT

  // The capture of w, exported to Chrome JSON in memory.
  static QByteArray exportChrome(const QString &capture, bool avx2) {
    if (avx2)
      qunsetenv("THREADMON_EXPORT_NO_AVX2");
    else
      qputenv("THREADMON_EXPORT_NO_AVX2", "1");
    tmon::ExportOutput out;
    out.openBuffer(false);
    auto sink = tmon::makeExportSink(*tmon::exportFormat("chrome"), &out, false);
    QString writeError;
    const tmon::CaptureLoadResult r =
        tmon::exportCapture(capture, sink.get(), tmon::ExportOptions{}, &writeError);
    qunsetenv("THREADMON_EXPORT_NO_AVX2");
    if (r.status != tmon::CaptureLoadResult::Complete || !writeError.isEmpty()) return {};
    return out.buffer();
  }

  static void checkPid(uint32_t pid) {
    QTemporaryDir dir;
    synth::Workload w;
    w.pid = pid;
    const QString capture = dir.filePath("synth.tmcap");
    QFile f(capture);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(synth::stream(w));
    f.close();
    const QByteArray wide = exportChrome(capture, true), narrow = exportChrome(capture, false);
    QVERIFY(!wide.isEmpty());
    QCOMPARE(wide, narrow);
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(wide, &err);
    QVERIFY2(err.error == QJsonParseError::NoError, qPrintable(err.errorString()));
    int waits = 0, flows = 0;
    for (const QJsonValue &v : doc.object()["traceEvents"].toArray()) {
      const QJsonObject e = v.toObject();
      if (e["cat"] == "wait") {
        waits++;
        QCOMPARE(e["pid"].toDouble(), double(pid));
        QVERIFY(e["args"].toObject().contains("object"));
      }
      if (e["ph"] == "f") {
        flows++;
        QCOMPARE(e["pid"].toDouble(), double(pid));
      }
    }
    QVERIFY2(waits > 10 && flows > 10,
             qPrintable(QStringLiteral("%1 waits, %2 flows").arg(waits).arg(flows)));
  }

 private slots:
  void shortPid() { checkPid(4242); }
  void pidOfSevenDigits() { checkPid(9999999); }
  void pidOfNineDigits() { checkPid(123456789); }
  void pidOfTenDigits() { checkPid(4000000000u); }
};

QTEST_MAIN(TestChromeWriters)
#include "test_chrome_writers.moc"
