// The export formats' names, file names and open hints
// (display/export/exportformats.h).
#include <QtTest>

#include "exportformats.h"

using namespace tmon;

class TestExportFormats : public QObject {
  Q_OBJECT
 private slots:
  void namesAndFileNames() {
    QVERIFY(exportFormat(QStringLiteral("svg")) == nullptr);
    const ExportFormat *pprof = exportFormat(QStringLiteral("pprof"));
    QVERIFY(pprof != nullptr);
    QCOMPARE(exportFileName(QStringLiteral("/tmp/run.tmcap"), *pprof),
             QStringLiteral("/tmp/run.pb.gz"));
  }

  // A hint one can paste: the file written, not the word FILE.
  void openHintNamesTheFile() {
    const ExportFormat *pprof = exportFormat(QStringLiteral("pprof"));
    QCOMPARE(exportOpenHint(*pprof, QStringLiteral("demo.pb.gz")),
             QStringLiteral("open it with go tool pprof -http=: demo.pb.gz"));
    const ExportFormat *perfetto = exportFormat(QStringLiteral("perfetto"));
    QCOMPARE(exportOpenHint(*perfetto, QStringLiteral("demo.pftrace")),
             QStringLiteral("open it in https://ui.perfetto.dev"));
  }
};

QTEST_GUILESS_MAIN(TestExportFormats)
#include "test_export_formats.moc"
