// File > Export in the display: the dialog rendered offscreen (and saved
// where THREADMON_EXPORT_SHOT says, to look at), and exportPage() writing the
// whole session and the views' window through the export library.
#include <QComboBox>
#include <QDialog>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QRadioButton>
#include <QTemporaryDir>
#include <QtTest>

#include "comparepages.h"
#include "exportaction.h"
#include "exportformats.h"
#include "framedecoder.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "synthscenarios.h"
#include "viewwindow.h"

class TestExportDisplay : public QObject {
  Q_OBJECT

  static std::unique_ptr<tmui::SessionView> page(const synth::Workload &w = synth::Workload{}) {
    auto *model = new tmon::SessionModel;
    auto p = std::make_unique<tmui::SessionView>(model, tmui::SessionView::Source::Replay);
    tmon::FrameDecoder decoder(model);
    const QByteArray bytes = synth::stream(w);
    decoder.feed(bytes.constData(), size_t(bytes.size()));
    model->markEnded();
    model->settleNow();
    return p;
  }

  static QJsonArray states(const QString &path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &err);
    if (err.error != QJsonParseError::NoError) qWarning() << path << err.errorString();
    return doc.object()["traceEvents"].toArray();
  }

 private slots:
  void dialogOffersFormatsAndWindow() {
    auto p = page();
    ExportChoice choice;
    std::unique_ptr<QDialog> d(makeExportDialog(nullptr, *p, &choice));
    d->resize(520, 220);
    d->show();
    QVERIFY(QTest::qWaitForWindowExposed(d.get()));
    auto *format = d->findChild<QComboBox *>();
    QCOMPARE(format->count(), 4);
    const auto radios = d->findChildren<QRadioButton *>();
    QCOMPARE(radios.size(), 2);
    QVERIFY2(radios[1]->text().contains(p->viewWindow()->describe()), qPrintable(radios[1]->text()));
    format->setCurrentIndex(2);  // pprof: its line of what it cannot hold
    bool said = false;
    for (QLabel *l : d->findChildren<QLabel *>()) said = said || l->text().startsWith("pprof keeps");
    QVERIFY(said);
    const QString shot = qEnvironmentVariable("THREADMON_EXPORT_SHOT");
    if (!shot.isEmpty()) d->grab().save(shot);
    radios[1]->setChecked(true);
    d->accept();
    QVERIFY(choice.format && QLatin1String(choice.format->name) == QLatin1String("pprof"));
    QVERIFY(choice.selectedWindow);
  }

  void exportsWholeSessionAndWindow() {
    auto p = page();
    QTemporaryDir dir;
    ExportChoice c;
    c.format = tmon::exportFormat("chrome");
    c.path = dir.filePath("whole.json");
    QCOMPARE(exportPage(*p, c), QString());
    const QJsonArray whole = states(c.path);
    QVERIFY(whole.size() > 100);
    // The views' window: half a second in the middle.
    const tmon::TimeRange run = p->model()->resolve(tmon::Window::wholeRun());
    const int64_t t0 = run.t0 + 500'000'000, t1 = run.t0 + 1'000'000'000;
    p->viewWindow()->setRange(tmon::TimeRange{t0, t1});
    c.selectedWindow = true;
    c.path = dir.filePath("window.json");
    QCOMPARE(exportPage(*p, c), QString());
    const QJsonArray part = states(c.path);
    QVERIFY(!part.isEmpty() && part.size() < whole.size());
    for (const QJsonValue &v : part) {
      const QJsonObject e = v.toObject();
      if (e["ph"] != "X") continue;
      const double ts = e["ts"].toDouble() * 1000 + double(p->model()->startNs());
      QVERIFY2(ts >= double(t0) - 1 && ts + e["dur"].toDouble() * 1000 <= double(t1) + 1,
               qPrintable(QJsonDocument(e).toJson()));
    }
    // pprof through the same path: a gzip file.
    c.format = tmon::exportFormat("pprof");
    c.selectedWindow = false;
    c.path = dir.filePath("waits.pb.gz");
    QCOMPARE(exportPage(*p, c), QString());
    QFile f(c.path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.read(2), QByteArray("\x1f\x8b"));
  }

  // File > Compare with: a session with contention against one without.
  void comparesTwoPages() {
    auto before = page();
    synth::Workload calm;
    calm.contention = false;
    auto after = page(calm);
    const QString text = comparePages(*before, *after);
    QVERIFY2(text.contains("wall time"), qPrintable(text));
    QVERIFY2(text.contains(QRegularExpression("the wait on `[^`]+` is gone")), qPrintable(text));
    std::unique_ptr<QDialog> d(makeCompareDialog(nullptr, "before.tmcap", "after.tmcap", text));
    d->show();
    QVERIFY(QTest::qWaitForWindowExposed(d.get()));
    const QString shot = qEnvironmentVariable("THREADMON_COMPARE_SHOT");
    if (!shot.isEmpty()) d->grab().save(shot);
  }
};

QTEST_MAIN(TestExportDisplay)
#include "test_export_display.moc"
