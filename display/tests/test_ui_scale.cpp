// The display at scale: 10,000 threads and 10,000 sync objects, replayed,
// and 2,000 of each live. Every view is raised, the replay seeked and the
// lists scrolled, offscreen, while a heartbeat measures the longest the GUI
// thread went without its event loop (display/tests/guiblock.h). The bound
// is generous (500 ms of the GUI thread's CPU, 2 s of wall time on a loaded
// 2-core machine): it catches a view that works over every item on the GUI
// thread again (the matrix of 2,000 threads never finished; the sync view's
// ResizeToContents took a minute). tm-bench-display records the real
// figures (docs/benchmarks.md, "Display at scale").
#include <QLabel>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "captureopen.h"
#include "framedecoder.h"
#include "guiblock.h"
#include "matrixview.h"
#include "modelview.h"
#include "replaycontrols.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "synthscenarios.h"
#include "waitmatrixtable.h"

namespace {

constexpr double kMaxBlockCpuMs = 500;
constexpr double kMaxBlockWallMs = 2000;

using scale::kKinds;
using scale::measure;
using scale::showPage;

}  // namespace

class TestUiScale : public QObject {
  Q_OBJECT

  void check(const char *what, const QString &view, const scale::Step &b) {
    qInfo("%s %s: longest GUI block %.0f ms (%.0f ms CPU)", what, qPrintable(view), b.longestMs, b.cpuMs);
    QVERIFY2(b.cpuMs < kMaxBlockCpuMs,
             qPrintable(QStringLiteral("%1 %2: the GUI thread worked %3 ms in one go")
                            .arg(what, view).arg(b.cpuMs)));
    QVERIFY2(b.longestMs < kMaxBlockWallMs,
             qPrintable(QStringLiteral("%1 %2: the GUI thread was away %3 ms")
                            .arg(what, view).arg(b.longestMs)));
  }

 private slots:
  void tenThousandThreadsReplayed() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    synth::Workload w;
    w.workers = 9998;
    w.extraObjects = 9997;
    w.seconds = 1.0;
    const QString path = dir.filePath(QStringLiteral("scale.tmcap"));
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(synth::stream(w));
    }
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
    QVERIFY2(page, qPrintable(error));
    QCOMPARE(page->model()->threadCount(), 10000);
    QCOMPARE(page->model()->syncObjectCount(), 10000);
    check("first show", QStringLiteral("page"), measure(page.get(), [&] { showPage(page.get()); }));
    const double duration = page->model()->durationSeconds();
    for (tmui::ViewKind k : kKinds) {
      const QString name = tmui::viewKindName(k);
      check("raise", name, measure(page.get(), [&] { page->showView(k); }));
      check("seek", name, measure(page.get(), [&] { page->replay()->seek(duration / 2); }));
      check("seek back", name, measure(page.get(), [&] { page->replay()->seek(duration); }));
      for (auto *bar : page->view(k)->findChildren<QScrollBar *>())
        if (bar->orientation() == Qt::Vertical && bar->maximum() > 0 && bar->isVisible())
          check("scroll", name, measure(page.get(), [&] { bar->setValue(bar->maximum() / 2); }));
      if (k == tmui::ViewKind::Timeline)
        for (const auto &[what, step] : scale::timelineSteps(page.get()))
          check(qPrintable(what), name, step);
    }
    // The timeline pools its 10,000 threads: the workers one row.
    QVERIFY(page->timeline()->canvas()->rowCount() < 10);
    QCOMPARE(page->timeline()->rowCount(), 10000);
    // Every thread and object is there, and the matrix says what it summed.
    QCOMPARE(page->view(tmui::ViewKind::Threads)->rowCount(), 10000);
    QCOMPARE(page->view(tmui::ViewKind::Sync)->rowCount(), 10000);
    auto *matrix = static_cast<tmui::MatrixView *>(page->view(tmui::ViewKind::Matrix));
    auto *table = matrix->findChild<tmui::WaitMatrixTable *>();
    QVERIFY(table);
    QVERIFY(table->model()->rowCount() <= tmui::WaitMatrixTable::kMaxThreads + 1);
    QVERIFY(table->model()->columnCount() <= tmui::WaitMatrixTable::kMaxThreads + 1);
    // 10,000 workers of one routine: pools x pools.
    QVERIFY(matrix->pooled());
    QVERIFY(table->model()->headerData(0, Qt::Vertical).toString().contains(QStringLiteral("worker-#")));
  }

  // Live: frames arrive every 10 ms while each view in turn is raised.
  void twoThousandThreadsLive() {
    synth::Workload w;
    w.workers = 1998;
    w.extraObjects = 1997;
    w.seconds = 0.6;
    const QByteArray stream = synth::stream(w);
    auto *model = new tmon::SessionModel;
    std::unique_ptr<tmui::SessionView> page(
        new tmui::SessionView(model, tmui::SessionView::Source::Live));
    tmon::FrameDecoder decoder(nullptr);
    decoder.setFrameHook(
        [model](const uint8_t *payload, uint32_t len) { model->applyPayload(payload, len); });
    showPage(page.get());
    const int steps = 60;
    const qsizetype chunk = stream.size() / steps + 1;
    qsizetype at = 0;
    int step = 0;
    QTimer feed;
    feed.setInterval(10);
    QObject::connect(&feed, &QTimer::timeout, [&] {
      const qsizetype n = std::min(chunk, stream.size() - at);
      decoder.feed(stream.constData() + at, size_t(n));
      at += n;
      if (++step % (steps / 8) == 0) page->showView(kKinds[(step / (steps / 8)) % 8]);
      if (at >= stream.size()) feed.stop();
    });
    const scale::Step b = measure(page.get(), [&] {
      feed.start();
      while (feed.isActive()) QApplication::processEvents(QEventLoop::WaitForMoreEvents, 20);
    });
    QVERIFY(!decoder.failed());
    QCOMPARE(model->threadCount(), 2000);
    check("live", QStringLiteral("every view"), b);
  }
};

QTEST_MAIN(TestUiScale)
#include "test_ui_scale.moc"
