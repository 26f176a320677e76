// The Findings panel, its Show navigation, the live deadlock banner and the
// sync view's details pane (call sites, waiter x holder matrix), over
// synthetic streams whose findings are known, rendered offscreen.
#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>
#include <QtTest>

#include "captureopen.h"
#include "deadlockbanner.h"
#include "findingsview.h"
#include "framedecoder.h"
#include "matrixview.h"
#include "replaycontrols.h"
#include "screenshot.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "syncdetails.h"
#include "syncview.h"
#include "synthscenarios.h"
#include "timelinecanvas.h"
#include "timelineview.h"
#include "viewwindow.h"
#include "waitmatrixtable.h"

using tmui::ViewKind;

namespace {

QString writeCapture(const QTemporaryDir &dir, const QString &name, const QByteArray &bytes) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) qFatal("cannot write capture");
  return path;
}

std::unique_ptr<tmui::SessionView> open(const QString &path) {
  QString error;
  std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
  if (!page) qWarning("%s", qPrintable(error));
  return page;
}

// Shows the page offscreen so docks, tabs and views lay out as on screen.
void showOffscreen(tmui::SessionView *page) {
  page->resize(1200, 800);
  page->setAttribute(Qt::WA_DontShowOnScreen);
  page->show();
  QCoreApplication::processEvents();
}

QList<QPushButton *> showButtons(QWidget *w) {
  QList<QPushButton *> out;
  for (QPushButton *b : w->findChildren<QPushButton *>())
    if (b->text() == QLatin1String("Show")) out << b;
  return out;
}

}  // namespace

class TestUiFindings : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString contended_, clean_, deadlock_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    contended_ = writeCapture(dir_, "contended.tmcap", synth::stream(synth::Workload()));
    synth::Workload clean;
    clean.contention = false;
    clean_ = writeCapture(dir_, "clean.tmcap", synth::stream(clean));
    deadlock_ = writeCapture(dir_, "deadlock.tmcap", synth::deadlockStream(true).bytes);
  }

  void findingsPanelListsTheModelsFindings() {
    auto page = open(contended_);
    QVERIFY(page);
    showOffscreen(page.get());
    tmui::FindingsView *view = page->findingsView();
    view->refreshNow();
    const std::vector<tmon::Finding> want = page->model()->findings(page->viewWindow()->range());
    QVERIFY(!want.empty());
    QCOMPARE(view->rowCount(), int(want.size()));
    QCOMPARE(int(showButtons(view).size()), int(want.size()));
    // Most severe first, and the workers' mutex is among them.
    for (size_t i = 1; i < want.size(); ++i)
      QVERIFY(int(view->findings()[i - 1].severity) <= int(view->findings()[i].severity));
    bool mutex = false;
    QStringList seen;
    for (const tmon::Finding &f : view->findings()) {
      seen << QString::fromLatin1(tmon::findingKindKey(f.kind)) + ": " + f.message;
      for (uint32_t o : f.objects) mutex |= o == synth::kMutexObject;
    }
    QVERIFY2(mutex, qPrintable(seen.join('\n')));
    // The message is on screen as written.
    bool shown = false;
    for (QLabel *l : view->findChildren<QLabel *>()) shown |= l->text() == want.front().message;
    QVERIFY(shown);
  }

  void cleanRunSaysSoPlainly() {
    auto page = open(clean_);
    QVERIFY(page);
    showOffscreen(page.get());
    page->showView(ViewKind::Findings);
    tmui::FindingsView *view = page->findingsView();
    view->refreshNow();
    for (const tmon::Finding &f : view->findings()) qWarning("unexpected: %s", qPrintable(f.message));
    QCOMPARE(view->rowCount(), 0);
    QVERIFY(showButtons(view).isEmpty());
    bool empty = false;
    for (QLabel *l : view->findChildren<QLabel *>())
      empty |= l->isVisible() && l->text().startsWith(QLatin1String("No problems found in this window"));
    QVERIFY(empty);
  }

  void showSwitchesViewAndSelectsTheObject() {
    auto page = open(contended_);
    QVERIFY(page);
    showOffscreen(page.get());
    page->showView(ViewKind::Threads);
    tmui::FindingsView *view = page->findingsView();
    page->showView(ViewKind::Findings);
    view->refreshNow();
    int row = -1;
    for (int i = 0; i < view->rowCount() && row < 0; ++i) {
      const tmon::Finding &f = view->findings()[size_t(i)];
      if (!f.objects.empty() && tmon::findingInfo(f.kind).view == ViewKind::Sync) row = i;
    }
    QVERIFY(row >= 0);
    const uint32_t object = view->findings()[size_t(row)].objects.front();
    QVERIFY(!page->isViewRaised(ViewKind::Sync));
    showButtons(view)[row]->click();
    QCoreApplication::processEvents();
    QVERIFY(page->isViewRaised(ViewKind::Sync));
    QVERIFY(!page->isViewRaised(ViewKind::Findings));
    QCOMPARE(page->syncView()->selectedObject(), object);
    QCOMPARE(page->timeline()->canvas()->highlightedObject(), object);
    QCOMPARE(page->syncView()->details()->object(), object);
  }

  void syncDetailsListCallSitesAndMatrix() {
    auto page = open(contended_);
    QVERIFY(page);
    tmui::SyncView *sync = page->syncView();
    sync->refreshNow();
    sync->selectObject(synth::kMutexObject);
    const tmui::SyncDetails *details = sync->details();
    QCOMPARE(details->callSiteRows(), synth::kMutexCallSites);
    // Each worker waited only for the next one: one cell per worker.
    const synth::Workload w;
    QCOMPARE(details->matrixCells(), w.workers);
    QCOMPARE(details->waiterRows(), 0);
    // The hidden lock: its call site and the threads sampled waiting on it.
    sync->selectObject(synth::kInternalObject);
    QCOMPARE(details->callSiteRows(), 1);
    QCOMPARE(details->matrixCells(), 0);
    QVERIFY(details->waiterRows() >= 2);
    QVERIFY(details->waiterRows() <= w.workers);
  }

  void wholeRunMatrix() {
    auto page = open(contended_);
    QVERIFY(page);
    auto *matrix = static_cast<tmui::MatrixView *>(page->view(ViewKind::Matrix));
    matrix->refreshNow();
    const synth::Workload w;
    QCOMPARE(matrix->rowCount(), w.workers);
    QCOMPARE(matrix->cellCount(), int(page->model()->waitMatrix(page->viewWindow()->range()).size()));
    QVERIFY(matrix->cellCount() >= w.workers);
  }

  void matrixPutsWaitsOfNobodyKnownApart() {
    // memcached's shape: idle housekeepers wait 10 s on a condition nobody
    // signals; the workers wait milliseconds on each other.
    std::vector<tmon::WaitPair> pairs = {
        {101, 0, 1, 10'000'000'000},  {102, 0, 1, 9'990'000'000},  // idle
        {201, 202, 4540, 69'600'000}, {202, 201, 3663, 55'100'000},
        {201, 0, 931, 6'400'000},  // a worker's timed-out waits
    };
    const auto name = [](uint32_t tid) { return tid ? QString::number(tid) : QStringLiteral("?"); };
    tmui::BoundedMatrix b = tmui::boundMatrix(pairs, name);
    QCOMPARE(b.rows, 4);
    QCOMPARE(b.cols, 3);
    QCOMPARE(b.unknownCol, 2);  // last
    QCOMPARE(b.colNames.last(), QStringLiteral("for nobody known"));
    // Rows by the waits someone caused: the workers first, then the idle.
    QCOMPARE(b.rowTids, (std::vector<uint32_t>{201, 202, 101, 102}));
    QCOMPARE(b.colTids, (std::vector<uint32_t>{202, 201}));  // 202 caused 69.6 ms, 201 55.1
    QCOMPARE(b.cells[0 * 3 + 0].waitNs, uint64_t(69'600'000));
    QCOMPARE(b.cells[0 * 3 + 2].count, uint64_t(931));
    QCOMPARE(b.cells[2 * 3 + 2].waitNs, uint64_t(10'000'000'000));

    // The heat's red is the known waits' own: the largest of them is the
    // reddest cell, though the idle waits are 140 times longer.
    tmui::WaitMatrixTable table;
    table.setMatrix(std::move(b));
    const QAbstractItemModel *m = table.model();
    const QColor hottest = m->index(0, 0).data(Qt::BackgroundRole).value<QColor>();
    QCOMPARE(hottest.red(), 255);
    QVERIFY(hottest.green() < 100);
    const QColor idle = m->index(2, 2).data(Qt::BackgroundRole).value<QColor>();
    QCOMPARE(idle.red(), idle.green());  // grey
    QVERIFY(m->headerData(2, Qt::Horizontal, Qt::ToolTipRole).toString().contains("idle"));

    // At the bound the column of nobody known still has its own column.
    pairs.clear();
    for (uint32_t h = 1; h <= 60; h++) pairs.push_back({1000, 1000 + h, 1, h * 1000});
    pairs.push_back({1000, 0, 1, 5});
    b = tmui::boundMatrix(pairs, name);
    QCOMPARE(b.cols, tmui::kMatrixMaxThreads + 1);
    QCOMPARE(b.unknownCol, b.cols - 1);
    QCOMPARE(b.otherCols, 60 - (tmui::kMatrixMaxThreads - 1));
    QCOMPARE(b.cells[size_t(b.unknownCol)].waitNs, uint64_t(5));
    uint64_t sum = 0;
    for (const auto &c : b.cells) sum += c.waitNs;
    QCOMPARE(sum, uint64_t(61 * 30 * 1000 + 5));
  }

  void deadlockBannerComesAndGoesLive() {
    const synth::Deadlock d = synth::deadlockStream(true);
    auto *model = new tmon::SessionModel;
    tmui::SessionView page(model, tmui::SessionView::Source::Live);
    tmon::FrameDecoder decoder(model);
    QVERIFY(decoder.feed(d.bytes.constData(), size_t(d.formedAt)));
    QTRY_VERIFY_WITH_TIMEOUT(!page.deadlockBanner()->isHidden(), 2000);
    const QString text = page.deadlockBanner()->text();
    for (const char *want : {"left (5152)", "right (5153)", "lock_a", "lock_b", "bank!transfer",
                             "bank!audit"})
      QVERIFY2(text.contains(QLatin1String(want)), qPrintable(text));
    // Show: the sync view selects one of the two locks.
    page.deadlockBanner()->activate();
    const uint32_t sel = page.syncView()->selectedObject();
    QVERIFY(sel == d.lockA || sel == d.lockB);
    // Right's timed lock gives up: the cycle resolves and the banner goes.
    QVERIFY(decoder.feed(d.bytes.constData() + d.formedAt, size_t(d.bytes.size() - d.formedAt)));
    QTRY_VERIFY_WITH_TIMEOUT(page.deadlockBanner()->isHidden(), 2000);
    QVERIFY(page.deadlockBanner()->text().isEmpty());
  }

  void deadlockBannerFollowsTheReplay() {
    auto page = open(deadlock_);
    QVERIFY(page);
    page->replay()->seek(0.2);
    QVERIFY(page->deadlockBanner()->isHidden());
    page->replay()->seek(0.6);
    QVERIFY(!page->deadlockBanner()->isHidden());
    page->replay()->seek(1.3);
    QVERIFY(page->deadlockBanner()->isHidden());
    // Post-mortem, the finding remains and Show narrows the window to it.
    page->replay()->seek(1.5);
    tmui::FindingsView *view = page->findingsView();
    view->refreshNow();
    int row = -1;
    for (int i = 0; i < view->rowCount(); ++i)
      if (view->findings()[size_t(i)].kind == tmon::FindingKind::Deadlock) row = i;
    QVERIFY(row >= 0);
    QCOMPARE(view->findings()[size_t(row)].severity, tmon::Severity::High);
    view->activate(row);
    QCOMPARE(page->viewWindow()->mode(), tmui::ViewWindow::Mode::Range);
    const tmon::TimeRange r = page->viewWindow()->range();
    QVERIFY(r.t0 >= page->model()->startNs() + 290000000);
    QVERIFY(r.t1 <= page->model()->startNs() + 1100000000);
  }

  void findingsScreenshot() {
    const QString out = dir_.filePath("findings.png");
    QCOMPARE(screenshotCapture(contended_, "findings", -1, QSize(900, 400), out), QString());
    QImage img(out);
    QCOMPARE(img.size(), QSize(900, 400));
    // --object selects by symbol prefix; an unknown name is an error.
    QCOMPARE(screenshotCapture(contended_, "sync", -1, QSize(900, 400), out, "random"), QString());
    QVERIFY(screenshotCapture(contended_, "sync", -1, QSize(900, 400), out, "nope").contains("nope"));
  }
};

QTEST_MAIN(TestUiFindings)
#include "test_ui_findings.moc"
