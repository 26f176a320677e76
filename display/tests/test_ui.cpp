// The display's views over synthetic captures, rendered offscreen; live
// sessions over loopback; damaged captures; the command line policy.
#include <QDockWidget>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QProcess>
#include <QScrollBar>
#include <QSet>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTreeView>
#include <QtTest>
#include <cmath>
#include <set>

#include "barchartview.h"
#include "captureloader.h"
#include "captureopen.h"
#include "chartsview.h"
#include "commandline.h"
#include "findings_util.h"
#include "findingsview.h"
#include "livesession.h"
#include "mainwindow.h"
#include "mappingview.h"
#include "modelview.h"
#include "names.h"
#include "probeconnection.h"
#include "probelistener.h"
#include "replaycontrols.h"
#include "runsummary.h"
#include "scratchtmpdir.h"
#include "screenshot.h"
#include "seekstill.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "statepalette.h"
#include "syncdetails.h"
#include "synctree.h"
#include "syncview.h"
#include "synthscenarios.h"
#include "timelinecanvas.h"
#include "timelineview.h"
#include "viewwindow.h"

using tmui::ViewKind;

namespace {

const QSize kShot(1000, 640);

// A live page (a LiveSession's) for the next session listener accepts,
// client connected to it.
bool connectLive(tmnet::ProbeListener *listener, std::unique_ptr<tmui::SessionView> *page,
                 QTcpSocket *client) {
  if (!listener->listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty()) return false;
  QObject::connect(
      listener, &tmnet::ProbeListener::sessionAccepted, listener,
      [page](tmnet::ProbeConnection *c) { page->reset((new LiveSession(c))->page()); });
  client->connectToHost(QHostAddress::LocalHost, listener->port());
  return client->waitForConnected(5000);
}

QString writeCapture(const QTemporaryDir &dir, const QString &name, const QByteArray &bytes) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) qFatal("cannot write capture");
  return path;
}

// Distinct colours on a coarse grid: a blank or single-colour image has few.
int distinctColours(const QImage &img) {
  QSet<QRgb> seen;
  for (int y = 0; y < img.height(); y += 3)
    for (int x = 0; x < img.width(); x += 3) seen.insert(img.pixel(x, y));
  return int(seen.size());
}

int pixelsOf(const QImage &img, const QColor &c) {
  int n = 0;
  const QRgb want = c.rgb();
  for (int y = 0; y < img.height(); ++y)
    for (int x = 0; x < img.width(); ++x)
      if (img.pixel(x, y) == want) ++n;
  return n;
}

// A sample of tid alone, last on `cpu`: what the hostile streams send.
tmtest::Lwp bareSample(uint32_t tid, int cpu) {
  tmtest::Lwp l{tid, 0, 0, 0, 0};
  l.cpu = cpu;
  l.kstate = 0;
  return l;
}

}  // namespace

class TestUi : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  synth::Workload w_;
  QString capture_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    capture_ = writeCapture(dir_, "synthetic.tmcap", synth::stream(w_));
  }

  void everyViewRendersItsRows_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("rows");
    const int threads = synth::threadCount(w_);
    QTest::newRow("threads") << int(ViewKind::Threads) << threads;
    QTest::newRow("lwps") << int(ViewKind::Lwps) << threads;
    QTest::newRow("cpus") << int(ViewKind::Cpus) << synth::kCpuCount;
    QTest::newRow("timeline") << int(ViewKind::Timeline) << threads;
    QTest::newRow("sync") << int(ViewKind::Sync) << synth::kObjectCount;
    QTest::newRow("charts") << int(ViewKind::Charts) << 3;
  }

  void everyViewRendersItsRows() {
    QFETCH(int, kind);
    QFETCH(int, rows);
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY2(page, qPrintable(error));
    QVERIFY(page->notice().isEmpty());
    const QImage img = renderView(page.get(), ViewKind(kind), -1, kShot);
    std::unique_ptr<tmui::ModelView> view(page->view(ViewKind(kind)));  // detached by renderView
    QCOMPARE(img.size(), kShot);
    QVERIFY2(distinctColours(img) > 8, "the view looks blank");
    QCOMPARE(view->rowCount(), rows);
  }

  // views.def is the one registration: every view is made, placed in a tab
  // titled as there (the timeline in the middle), and found by its name.
  void everyRegisteredViewIsOnThePage() {
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY2(page, qPrintable(error));
    QStringList titles;
    for (const QDockWidget *d : page->findChildren<QDockWidget *>()) titles << d->windowTitle();
    QSet<QString> names;
    for (const tmon::ViewInfo &v : tmon::kViews) {
      QVERIFY(page->view(v.kind));
      ViewKind parsed;
      QVERIFY(tmui::parseViewKind(QString::fromLatin1(v.name), &parsed) && parsed == v.kind);
      names.insert(QString::fromLatin1(v.name));
      if (v.place == tmon::ViewPlace::Center) QCOMPARE(page->view(v.kind), page->timeline());
      else QVERIFY2(titles.contains(QString::fromLatin1(v.title)), v.title);
    }
    QCOMPARE(names.size(), qsizetype(tmon::kViewCount));
    QCOMPARE(titles.size(), qsizetype(tmon::kViewCount - 1));
    ViewKind unknown;
    QVERIFY(!tmui::parseViewKind(QStringLiteral("window"), &unknown));
  }

  // 200 workers are one pool row until clicked; the filter narrows the
  // threads by name, tid or state; the main and probe threads stand alone.
  void threadsPoolFoldAndFilter() {
    synth::Workload w;
    w.workers = 200;
    const QString path = writeCapture(dir_, "pool.tmcap", synth::stream(w));
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
    QVERIFY2(page, qPrintable(error));
    const QImage img = renderView(page.get(), ViewKind::Threads, -1, kShot);
    std::unique_ptr<tmui::ModelView> view(page->view(ViewKind::Threads));
    auto *bars = static_cast<tmui::BarChartView *>(view.get());
    QCOMPARE(bars->rowCount(), 202);
    const tmui::StackedBarChart *chart = bars->chart();
    int pool = -1;
    for (int i = 0; i < chart->rowCount(); ++i)
      if (chart->row(i).label.contains(QStringLiteral("worker-#"))) pool = i;
    QVERIFY(pool >= 0);
    const int folded = chart->rowCount();
    QVERIFY2(folded < 10, qPrintable(QString::number(folded)));
    QCOMPARE(chart->row(pool).markText, QStringLiteral("pool of 200"));
    QVERIFY(distinctColours(img) > 8);
    bars->toggleRow(pool);
    QVERIFY(chart->rowCount() > 200);
    bars->toggleRow(pool);
    QCOMPARE(chart->rowCount(), folded);
    bars->setFilter(QStringLiteral("worker-17"));  // worker-17 and worker-170..179
    QCOMPARE(bars->rowCount(), 11);
    bars->setFilter(QString::number(w.pid));       // the main thread's tid (and the probe's)
    QVERIFY(bars->rowCount() >= 1 && bars->rowCount() < 10);
    bars->setFilter(QStringLiteral("join"));      // the main thread waits in pthread_join
    QCOMPARE(bars->rowCount(), 1);
    bars->setFilter(QString());
    QCOMPARE(bars->rowCount(), 202);
  }

  // The timeline pools threads as the Threads view does: 200 workers are
  // one row whose strip is their state mix (a column split by the share of
  // the workers in each state), its label folds and unfolds them, hover
  // counts the workers in each state, and the filter and sort are shared.
  void timelinePoolFoldAndFilter() {
    synth::Workload w;
    w.workers = 200;
    const QString path = writeCapture(dir_, "tlpool.tmcap", synth::stream(w));
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
    QVERIFY2(page, qPrintable(error));
    const QImage img = renderView(page.get(), ViewKind::Timeline, -1, QSize(1000, 600));
    std::unique_ptr<tmui::ModelView> view(page->view(ViewKind::Timeline));
    auto *tl = static_cast<tmui::TimelineView *>(view.get());
    tmui::TimelineCanvas *c = tl->canvas();
    QCOMPARE(tl->rowCount(), 202);
    const int folded = c->rowCount();
    QVERIFY2(folded < 10, qPrintable(QString::number(folded)));
    int pool = -1;
    for (int i = 0; i < folded; ++i)
      if (c->layout().rows[size_t(i)].label == QStringLiteral("worker-#")) pool = i;
    QVERIFY(pool >= 0);
    const tmui::TimelineRow &row = c->layout().rows[size_t(pool)];
    QVERIFY(row.aggregate() && !row.open);
    QCOMPARE(int(row.threads.size()), 200);
    // The pool's strip: running and mutex-blocked workers in one column.
    const int top = c->rowTop(pool), bottom = c->rowTop(pool + 1);
    const QPoint origin = c->viewport()->mapTo(tl, QPoint(0, 0));
    const QImage strip = img.copy(origin.x() + 220, origin.y() + top, 700, bottom - top);
    QVERIFY(pixelsOf(strip, tmui::stateColor(tmon::FinalState::OnCpu)) > 200);
    QVERIFY(pixelsOf(strip, tmui::stateColor(tmon::FinalState::BlockedMutex)) > 200);
    // Hover: threads per state at that time, 200 in all.
    const QString tip = c->tooltipText(QPoint(600, (top + bottom) / 2));
    QVERIFY2(tip.contains(QStringLiteral("worker-#")), qPrintable(tip));
    int counted = 0;
    static const QRegularExpression count(QStringLiteral("■</span> (\\d+) "));
    for (auto it = count.globalMatch(tip); it.hasNext();) counted += it.next().captured(1).toInt();
    QCOMPARE(counted, 200);
    // A click on its label unfolds it, another folds it.
    QTest::mouseClick(c->viewport(), Qt::LeftButton, {}, QPoint(20, (top + bottom) / 2));
    QCOMPARE(c->rowCount(), folded + 200);
    QTest::mouseClick(c->viewport(), Qt::LeftButton, {}, QPoint(20, (top + bottom) / 2));
    QCOMPARE(c->rowCount(), folded);
    tl->setFilter(QStringLiteral("worker-17"));  // worker-17 and worker-170..179
    QCOMPARE(tl->rowCount(), 11);
    tl->setFilter(QString());
    QCOMPARE(tl->rowCount(), 202);
    tl->setSortCategory(int(tmon::FinalState::BlockedJoin));  // the main thread first
    QVERIFY(!c->layout().rows.front().aggregate());
    QVERIFY(page->model()->thread(c->layout().rows.front().thread).main);
  }

  // User threads (M:N): one row each, their LWPs' states and dispatchable
  // in their colours, the LWP they ran on beside the bar.
  void userThreadsViewShowsEachUserThread() {
    const QString path =
        writeCapture(dir_, "userthreads.tmcap", synth::userThreadScenario().stream());
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
    QVERIFY2(page, qPrintable(error));
    const QImage img = renderView(page.get(), ViewKind::Users, -1, kShot);
    std::unique_ptr<tmui::ModelView> view(page->view(ViewKind::Users));  // detached by renderView
    QCOMPARE(view->rowCount(), 2);
    QVERIFY(pixelsOf(img, tmui::dispatchableColor()) > 500);
    QVERIFY(pixelsOf(img, tmui::stateColor(tmon::FinalState::OnCpu)) > 200);
    QVERIFY(pixelsOf(img, tmui::stateColor(tmon::FinalState::BlockedMutex)) > 200);
  }

  // Mapping (M:N): a strip per user thread in its LWP's colour where it ran
  // and pale where dispatchable, then the LWP's strip in its CPUs' colours
  // and amber while it waited for one (the scenario's exact shares).
  void mappingViewShowsUserThreadToLwpToCpu() {
    const tmtest::StreamBuilder b = synth::userThreadScenario();
    tmon::SessionModel m;
    b.applyTo(&m);
    const tmon::TimeRange r{tmtest::kT0, tmtest::kT0 + 120 * tmtest::kMs};
    const tmui::MappingData d = tmui::computeMapping(m, r, 120);  // 1 ms columns
    QCOMPARE(d.users.size(), size_t(2));
    QCOMPARE(d.lwps.size(), size_t(1));
    using Col = tmui::MappingData::Column;
    auto only = [](const Col &c, int16_t part) {
      return c.size() == 1 && c[0].first == part && std::fabs(c[0].second - 1.0f) < 1e-3f;
    };
    QVERIFY(only(d.users[0].columns[15], 0));  // u1 on the first LWP
    QVERIFY(only(d.users[1].columns[15], tmui::MappingData::Dispatchable));
    QVERIFY(only(d.users[1].columns[45], 0));
    QVERIFY(d.users[0].columns[95].empty());  // u1 done at 90 ms
    QVERIFY(only(d.lwps[0].columns[5], 1));    // the LWP on CPU 1
    QVERIFY(only(d.lwps[0].columns[25], tmui::MappingData::Runnable));
    QVERIFY(only(d.lwps[0].columns[45], 0));   // on CPU 0
    QVERIFY(only(d.lwps[0].columns[65], tmui::MappingData::OffCpu));  // blocked on the mutex

    const QString path = writeCapture(dir_, "mapping.tmcap", b.stream());
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
    QVERIFY2(page, qPrintable(error));
    const QImage img = renderView(page.get(), ViewKind::Mapping, -1, kShot);
    std::unique_ptr<tmui::ModelView> view(page->view(ViewKind::Mapping));  // detached by renderView
    QCOMPARE(view->rowCount(), 3);
    QVERIFY(pixelsOf(img, tmui::mappingLwpColor(0)) > 500);
    QVERIFY(pixelsOf(img, tmui::dispatchableColor()) > 500);
    QVERIFY(pixelsOf(img, tmui::mappingCpuColor(0)) > 200);
    QVERIFY(pixelsOf(img, tmui::mappingCpuColor(1)) > 200);
    QVERIFY(pixelsOf(img, tmui::stateColor(tmon::FinalState::Runnable)) > 200);
    ViewKind parsed;
    QVERIFY(tmui::parseViewKind(QStringLiteral("mapping"), &parsed) && parsed == ViewKind::Mapping);
  }

  void statesShowInTheirColours() {
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY(page);
    const QImage threads = renderView(page.get(), ViewKind::Threads, -1, kShot);
    delete page->view(ViewKind::Threads);
    // The synthetic workers run, queue and block on the mutex.
    QVERIFY(pixelsOf(threads, tmui::stateColor(tmon::FinalState::OnCpu)) > 500);
    QVERIFY(pixelsOf(threads, tmui::stateColor(tmon::FinalState::BlockedMutex)) > 500);
    const QImage timeline = renderView(page.get(), ViewKind::Timeline, -1, kShot);
    QVERIFY(pixelsOf(timeline, tmui::stateColor(tmon::FinalState::OnCpu)) > 500);
    QVERIFY(pixelsOf(timeline, tmui::stateColor(tmon::FinalState::BlockedMutex)) > 200);
    // The legend shows every state, stolen too, with an 11x11 swatch each.
    for (int s = 0; s < tmon::kFinalStateCount; ++s)
      QVERIFY2(pixelsOf(timeline, tmui::stateColor(tmon::FinalState(s))) >= 100,
               tmon::finalStateKey(tmon::FinalState(s)));
    delete page->view(ViewKind::Timeline);
  }

  void selectingAnObjectHighlightsItsWaits() {
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY(page);
    page->syncView()->refreshNow();
    page->syncView()->selectObject(1);  // the synthetic mutex
    QCOMPARE(page->timeline()->canvas()->highlightedObject(), 1u);
    const QImage img = renderView(page.get(), ViewKind::Timeline, -1, kShot);
    delete page->view(ViewKind::Timeline);
    QVERIFY(pixelsOf(img, tmui::highlightColor()) > 100);
  }

  // Grouped by call site: the contended mutex under the program's function
  // that contended for it; the selection survives the regrouping.
  void syncGroupsByCallSite() {
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY(page);
    tmui::SyncView *sync = page->syncView();
    sync->refreshNow();
    sync->selectObject(1);
    sync->setGrouping(tmui::SyncTree::Grouping::CallSite);
    QCOMPARE(sync->rowCount(), 3);
    QCOMPARE(sync->selectedObject(), 1u);
    const auto *tree = sync->findChild<tmui::SyncTree *>();
    QVERIFY(tree);
    QStringList parents;
    for (int i = 0; i < tree->rowCount(); ++i) parents << tree->index(i, 0).data().toString();
    const tmon::SessionModel &m = *page->model();
    const QString site = m.objectCallSite(m.indexOfSyncObject(1), {m.startNs(), m.latestNs()});
    QVERIFY2(!site.isEmpty() && parents.contains(site), qPrintable(parents.join(" | ")));
    QVERIFY(!parents.contains(m.syncObject(m.indexOfSyncObject(1)).module));
    sync->setGrouping(tmui::SyncTree::Grouping::Module);
    QCOMPARE(sync->rowCount(), 3);
    QCOMPARE(tree->index(0, 0).parent(), QModelIndex());
    QStringList modules;
    for (int i = 0; i < tree->rowCount(); ++i) modules << tree->index(i, 0).data().toString();
    QVERIFY(modules.contains(m.syncObject(m.indexOfSyncObject(1)).module));
  }

  // A session read from outside (no interpose among the Hello's sources):
  // the Sync view shows its acquisitions, contended share and hold time as
  // unknown, on the object and its module, and the waits it saw.
  void syncShowsUnknownCountsOfAnAttachedSession() {
    for (bool attached : {false, true}) {
      tmtest::StreamBuilder b;
      if (attached)
        b.setSources({THREADMON__SOURCE__SOURCE_ATTACH, THREADMON__SOURCE__SOURCE_PROC_TASK});
      b.hello(false);
      b.threadStart(31, tmtest::kT0, "worker", "app!worker");
      b.syncObject(3, THREADMON__SYNC_KIND__KIND_MUTEX, 0x5000, "/opt/app", "table_lock", nullptr);
      b.tick(tmtest::kT0 + 10 * tmtest::kMs, {}, {},
             {tmtest::Sync{3, attached ? 0u : 40u, 4, 6 * tmtest::kMs, 2 * tmtest::kMs,
                           attached ? 0 : uint64_t(3 * tmtest::kMs)}});
      tmon::SessionModel m;
      b.applyTo(&m);
      tmui::SyncTree tree;
      tree.apply(tmui::SyncTree::collect(m, {m.startNs(), m.latestNs()}));
      QCOMPARE(tree.rowCount(), 1);
      const QModelIndex module = tree.index(0, 0), object = tree.index(0, 0, module);
      auto text = [&](const QModelIndex &row, int column) {
        return tree.index(row.row(), column, row.parent()).data().toString();
      };
      const QString dash = QStringLiteral("–");
      for (const QModelIndex &row : {module, object}) {
        QCOMPARE(text(row, tmui::SyncTree::Contentions), QStringLiteral("4"));
        QCOMPARE(text(row, tmui::SyncTree::Wait) == dash, false);
        QCOMPARE(text(row, tmui::SyncTree::MaxWait) == dash, false);
        QCOMPARE(text(row, tmui::SyncTree::Acquisitions) == dash, attached);
        QCOMPARE(text(row, tmui::SyncTree::ContendedPct) == dash, attached);
        QCOMPARE(text(row, tmui::SyncTree::Hold) == dash, attached);
      }
      if (!attached) QCOMPARE(text(object, tmui::SyncTree::ContendedPct), QStringLiteral("10.0 %"));
      // The page says why, above the views.
      auto *model = new tmon::SessionModel;
      b.applyTo(model);
      tmui::SessionView page(model, tmui::SessionView::Source::Replay);
      QCOMPARE(page.notice().startsWith("Read from outside the process: acquisitions, hold times"),
               attached);
    }
  }

  // A heap object is named by where the program made it (its initialiser's
  // call site), else where it was first contended, else its address; a
  // global keeps its symbol. The Sync view's rows and tooltips, the label
  // the views share and the findings' and exports' name all say that name.
  void syncNamesObjectsByWhereTheyWereMade() {
    tmtest::StreamBuilder b;
    b.hello(false);
    b.threadStart(31, tmtest::kT0, "worker", "app!worker");
    b.syncObject(1, THREADMON__SYNC_KIND__KIND_MUTEX, 0x55550010, "[heap]", "", nullptr,
                 "app!make_table+0x1c (db.c:40)");
    b.syncObject(2, THREADMON__SYNC_KIND__KIND_SEM, 0x55550100, "[heap]", "",
                 "app!worker+0x33 (db.c:55)");
    b.syncObject(3, THREADMON__SYNC_KIND__KIND_COND, 0x55550200, "[heap]", "", nullptr,
                 "app!make_queue+0x8");
    b.syncObject(4, THREADMON__SYNC_KIND__KIND_MUTEX, 0x55550300, "[heap]", "", nullptr);
    b.syncObject(5, THREADMON__SYNC_KIND__KIND_MUTEX, 0x5000, "/opt/app", "table_lock", nullptr,
                 "app!main+0x10 (db.c:70)");
    tmon::SessionModel m;
    b.applyTo(&m);
    const QMap<uint32_t, QString> want{{1, "made in make_table (db.c:40)"},
                                       {2, "first used in worker (db.c:55)"},
                                       {3, "made in make_queue in app"},
                                       {4, "0x55550300"},
                                       {5, "table_lock"}};
    const auto rows = tmui::SyncTree::collect(m, {m.startNs(), m.latestNs()});
    QCOMPARE(int(rows.size()), int(want.size()));
    for (const tmui::SyncTree::ObjectRow &row : rows) {
      QCOMPARE(row.name, want[row.id]);
      QCOMPARE(tmui::objectLabel(m, row.id), want[row.id]);
    }
    for (const tmui::SyncTree::ObjectRow &row : rows)
      if (row.id == 1) {
        QVERIFY2(row.tip.startsWith("Made at app!make_table+0x1c (db.c:40)\n"),
                 qPrintable(row.tip));
        QVERIFY2(row.tip.endsWith("Address 0x55550010"), qPrintable(row.tip));
      }
    // Findings and exports (pprof labels, Perfetto and Chrome tracks) say
    // the kind before it.
    QCOMPARE(tmon::findings_detail::objectName(m, 1),
             QStringLiteral("mutex made in make_table (db.c:40)"));
    QCOMPARE(tmon::findings_detail::objectName(m, 2),
             QStringLiteral("sem first used in worker (db.c:55)"));
    QCOMPARE(tmon::findings_detail::objectName(m, 4),
             QStringLiteral("mutex at 0x55550300 ([heap])"));
    QCOMPARE(tmon::findings_detail::objectName(m, 5), QStringLiteral("mutex app!table_lock"));
    // --object selects by the start of that name too.
    auto *model = new tmon::SessionModel;
    b.applyTo(model);
    tmui::SessionView page(model, tmui::SessionView::Source::Replay);
    QVERIFY(selectSyncObject(&page, QStringLiteral("first used in worker")));
    QCOMPARE(page.syncView()->selectedObject(), 2u);
    QVERIFY(selectSyncObject(&page, QStringLiteral("table_lock")));
    QCOMPARE(page.syncView()->selectedObject(), 5u);
    QVERIFY(!selectSyncObject(&page, QStringLiteral("made in nowhere")));
  }

  void syncFilterNarrowsRows() {
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY(page);
    tmui::SyncView *sync = page->syncView();
    sync->refreshNow();
    QCOMPARE(sync->rowCount(), 3);
    sync->setFilterText("libc");
    QCOMPARE(sync->rowCount(), 1);
    sync->setFilterText("queue_");
    QCOMPARE(sync->rowCount(), 2);
  }

  // The table's figures in view beside the details pane: at 1,100 pixels
  // through the hold time (it was cut at Contended), at 1,400 through the
  // acquisitions; the details pane keeps a readable width.
  void syncFiguresFitBesideTheDetails() {
    for (const auto &[width, lastWhole] : {std::pair{1100, int(tmui::SyncTree::Hold)},
                                           std::pair{1400, int(tmui::SyncTree::Acquisitions)}}) {
      QString error;
      std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
      QVERIFY(page);
      renderView(page.get(), ViewKind::Sync, -1, QSize(width, 600));
      std::unique_ptr<tmui::ModelView> view(page->view(ViewKind::Sync));  // detached by renderView
      auto *sync = static_cast<tmui::SyncView *>(view.get());
      const QTreeView *tree = sync->findChild<QTreeView *>();
      const QHeaderView *h = tree->header();
      const int right = h->sectionViewportPosition(lastWhole) + h->sectionSize(lastWhole);
      QVERIFY2(right <= tree->viewport()->width(),
               qPrintable(QStringLiteral("%1 px: column %2 ends at %3 of %4")
                              .arg(width)
                              .arg(lastWhole)
                              .arg(right)
                              .arg(tree->viewport()->width())));
      QVERIFY(sync->details()->width() >= 200);
    }
  }

  void windowSelectorDrivesTheViews() {
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY(page);
    tmui::ViewWindow *win = page->viewWindow();
    QCOMPARE(win->mode(), tmui::ViewWindow::Mode::WholeRun);
    win->setMode(tmui::ViewWindow::Mode::Last1s);
    QCOMPARE(win->range().length(), int64_t(1000000000));
    QCOMPARE(win->range().t1, page->model()->latestNs());
    win->setRange({page->model()->startNs() + 200000000, page->model()->startNs() + 300000000});
    QCOMPARE(win->mode(), tmui::ViewWindow::Mode::Range);
    QCOMPARE(win->range().length(), int64_t(100000000));
    auto *charts = static_cast<tmui::ChartsView *>(page->view(ViewKind::Charts));
    charts->refreshNow();
    QVERIFY(charts->pointCount(0) >= 9 && charts->pointCount(0) <= 11);  // 10 ms ticks
  }

  void chartLabelsFitShortCharts() {
    // Qt elides all of an axis's labels when they overlap: a short chart
    // keeps fewer ticks instead (16 px a label).
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY(page);
    auto *charts = static_cast<tmui::ChartsView *>(page->view(ViewKind::Charts));
    // Alone at a given size, as --screenshot renders it; back home at the end.
    charts->setParent(nullptr);
    charts->setAttribute(Qt::WA_DontShowOnScreen);
    charts->resize(900, 420);
    charts->show();
    QCoreApplication::processEvents();
    charts->refreshNow();
    for (int tall : {420, 900}) {
      charts->resize(900, tall);
      QCoreApplication::processEvents();
      for (int i = 0; i < charts->rowCount(); i++) {
        double h = charts->plotHeight(i);
        QVERIFY2(h > 0, qPrintable(QString::number(i)));
        QVERIFY2(charts->yTickCount(i) == 2 || (charts->yTickCount(i) - 1) * 16 <= h,
                 qPrintable(QStringLiteral("chart %1: %2 ticks in %3 px at height %4")
                                .arg(i).arg(charts->yTickCount(i)).arg(h).arg(tall)));
        if (tall == 900) QVERIFY(charts->yTickCount(i) > 2);  // room for the nice ones
      }
    }
    charts->hide();
    charts->setParent(page.get());
  }

  void chartTimeLabelsAreRoundSeconds() {
    // The synthetic run is 2 s: labels every 0.5 s ("%.1f"), not the range in quarters.
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY(page);
    auto *charts = static_cast<tmui::ChartsView *>(page->view(ViewKind::Charts));
    charts->refreshNow();
    for (int i = 0; i < charts->rowCount(); i++) {
      QCOMPARE(charts->xTickInterval(i), 0.5);
      QCOMPARE(charts->xLabelFormat(i), QStringLiteral("%.1f"));
    }
  }

  // Ended live sessions are bounded: past MainWindow::kMaxEndedSessions the
  // oldest is closed and freed (300 short sessions cost 640 MiB before).
  void endedSessionsAreBounded() {
    MainWindow window;
    QVERIFY(window.listen({QHostAddress(QHostAddress::LocalHost), 0}, QByteArray{}).isEmpty());
    const int tabsBefore = window.tabs()->count();
    constexpr int kSessions = MainWindow::kMaxEndedSessions + 8;
    for (int i = 0; i < kSessions; ++i) {
      QTcpSocket probe;
      probe.connectToHost(QHostAddress::LocalHost, window.listener()->port());
      QVERIFY(probe.waitForConnected(5000));
      probe.write(tmtest::header() + synth::helloFrame(uint32_t(1000 + i), QByteArray{}));
      QVERIFY(probe.waitForBytesWritten(5000));
      probe.disconnectFromHost();
      // Accepted, and ended, before the next comes.
      QTRY_VERIFY_WITH_TIMEOUT(
          [&] {
            auto *page = qobject_cast<tmui::SessionView *>(window.tabs()->currentWidget());
            auto *live = page ? page->findChild<LiveSession *>() : nullptr;
            return live && live->connection()->pid() == uint32_t(1000 + i) &&
                   live->connection()->state() == tmnet::ProbeConnection::State::Ended;
          }(),
          5000);
    }
    QCOMPARE(window.tabs()->count(), tabsBefore + MainWindow::kMaxEndedSessions);
    // The oldest went first: the first kept is the 9th.
    auto *first = qobject_cast<tmui::SessionView *>(window.tabs()->widget(tabsBefore));
    QVERIFY(first);
    QCOMPARE(first->findChild<LiveSession *>()->connection()->pid(),
             uint32_t(1000 + kSessions - MainWindow::kMaxEndedSessions));
  }

  // The window reads a capture on a thread of its own: its event loop runs
  // meanwhile, a "Reading" tab stands in, and the page takes its place; a
  // seek (a click on the whole run) replaces the page in the same tab.
  void windowReadsCapturesOffTheGuiThread() {
    MainWindow window;
    const int tabsBefore = window.tabs()->count();
    int opened = 0, heartbeats = 0;
    QTimer heartbeat;
    connect(&heartbeat, &QTimer::timeout, [&] { heartbeats += opened == 0; });
    heartbeat.start(0);
    tmui::SessionView *page = nullptr;
    window.openCaptureFile(capture_, -1, [&](tmui::SessionView *p) {
      opened++;
      page = p;
    });
    QCOMPARE(opened, 0);  // not read on this thread, before the call returned
    QCOMPARE(window.tabs()->count(), tabsBefore + 1);
    QVERIFY(!qobject_cast<tmui::SessionView *>(window.tabs()->currentWidget()));
    QTRY_COMPARE_WITH_TIMEOUT(opened, 1, 20000);
    QVERIFY(heartbeats > 0);
    QCOMPARE(window.tabs()->currentWidget(), page);
    QCOMPARE(window.tabs()->count(), tabsBefore + 1);
    QCOMPARE(page->model()->threadCount(), synth::threadCount(w_));

    QPointer<tmui::SessionView> before(page);
    page->showView(ViewKind::Sync);
    QVERIFY(page->isViewRaised(ViewKind::Sync) && !page->isViewRaised(ViewKind::Findings));
    emit page->seekRequested(1.0);
    // The page goes before the new window is read: a still of it holds the
    // tab, and no two windows are held at once.
    QCOMPARE(window.tabs()->currentWidget()->objectName(), QStringLiteral("seekStill"));
    QTRY_VERIFY_WITH_TIMEOUT(!before, 20000);
    QTRY_VERIFY_WITH_TIMEOUT(qobject_cast<tmui::SessionView *>(window.tabs()->currentWidget()),
                             20000);
    auto *next = qobject_cast<tmui::SessionView *>(window.tabs()->currentWidget());
    QCOMPARE(window.tabs()->count(), tabsBefore + 1);
    QCOMPARE(next->model()->threadCount(), synth::threadCount(w_));
    // The view raised before the seek is the one raised after it.
    QVERIFY(next->isViewRaised(ViewKind::Sync) && !next->isViewRaised(ViewKind::Findings));
  }

  // A new page starts the views it shows, and only those: the views behind
  // another dock tab wait until raised.
  void aNewPageRebuildsOnlyTheViewsItShows() {
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY2(page, qPrintable(error));
    page->resize(1200, 800);
    page->show();  // no event processed: only the show events' catch-ups are scheduled
    for (int v = 0; v < tmui::kViewCount; v++) QVERIFY(page->view(ViewKind(v))->behind());
    const QList<ViewKind> shown{ViewKind::Timeline, ViewKind::Threads, ViewKind::Findings};
    QVERIFY(QTest::qWaitForWindowExposed(page.get()));
    // The shown ones start after the first paint: on a loaded machine (CI's)
    // that is later than a fixed 50 ms wait allowed.
    for (ViewKind v : shown) QTRY_VERIFY_WITH_TIMEOUT(!page->view(v)->behind(), 10000);
    QTest::qWait(50);
    for (int v = 0; v < tmui::kViewCount; v++)
      QCOMPARE(page->view(ViewKind(v))->behind(), !shown.contains(ViewKind(v)));
    page->showView(ViewKind::Sync);  // raised: rebuilt
    QTRY_VERIFY(!page->view(ViewKind::Sync)->behind());
  }

  // A seek whose window cannot be read (the file was replaced) goes back
  // to the window that was shown; when that cannot be read either, the
  // still says why and the tab stays.
  void aSeekThatCannotReadSaysWhy() {
    const QString path = writeCapture(dir_, "seek-then-junk.tmcap", synth::stream(w_));
    MainWindow window;
    tmui::SessionView *page = nullptr;
    window.openCaptureFile(path, -1, [&page](tmui::SessionView *p) { page = p; });
    QTRY_VERIFY_WITH_TIMEOUT(page, 20000);
    const int tabs = window.tabs()->count();
    QFile junk(path);
    QVERIFY(junk.open(QIODevice::WriteOnly | QIODevice::Truncate));
    junk.write("not a capture any more");
    junk.close();
    emit page->seekRequested(1.0);
    QWidget *still = window.tabs()->currentWidget();
    QCOMPARE(still->objectName(), QStringLiteral("seekStill"));
    auto *shown = static_cast<SeekStill *>(still);
    QTRY_VERIFY_WITH_TIMEOUT(shown->text().startsWith(path), 20000);
    QCOMPARE(window.tabs()->count(), tabs);
    QCOMPARE(window.tabs()->currentWidget(), still);
  }

  void unreadableCaptureLoadSaysWhy() {
    const QString path = writeCapture(dir_, "junk.tmcap", QByteArray("not a capture at all"));
    auto *loader = new CaptureLoader(path, -1);
    int done = 0;
    tmui::SessionView *page = nullptr;
    QString error;
    connect(loader, &CaptureLoader::finished, [&](tmui::SessionView *p, const QString &e) {
      done++;
      page = p, error = e;
    });
    QTRY_COMPARE_WITH_TIMEOUT(done, 1, 20000);
    QVERIFY(!page);
    QVERIFY2(error.startsWith(path), qPrintable(error));
  }

  // A long capture's whole-run strip: a click asks for the window centred
  // on the time under it (MainWindow then reopens the capture there).
  void wholeRunClickAsksForThatTime() {
    constexpr int64_t kSecond = tmon::RunSummary::kBucketNs;
    auto summary = std::make_shared<tmon::RunSummary>();
    const int64_t start = 5 * kSecond;
    summary->setStart(start, 100);
    tmon::StateTimes busy;
    busy.ns[size_t(tmon::FinalState::OnCpu)] = kSecond;
    busy.lifetimeNs = kSecond;
    for (size_t b = 0; b < 100; b++) QVERIFY(summary->addBucket(7, b, busy));
    tmon::SessionModel *model = new tmon::SessionModel;
    tmui::SessionView page(model, tmui::SessionView::Source::Replay);
    const tmon::TimeRange window{start, start + 10 * kSecond};
    page.setWholeRun(summary, window);
    page.resize(1000, 700);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    auto *strip = page.findChild<QWidget *>(QStringLiteral("wholeRun"));
    QVERIFY(strip);
    QSignalSpy asked(&page, &tmui::SessionView::seekRequested);
    // Pressed on the strip itself (whatever the docks around it cover).
    const auto press = [strip](int x, Qt::MouseButton button) {
      const QPointF at(x, strip->height() / 2);
      QMouseEvent e(QEvent::MouseButtonPress, at, strip->mapToGlobal(at), button, button, {});
      QApplication::sendEvent(strip, &e);
    };
    press(2, Qt::LeftButton);
    QCOMPARE(asked.size(), 0);  // the row labels: no time there
    press(strip->width() - 1, Qt::LeftButton);
    press(strip->width() / 2, Qt::LeftButton);
    QCOMPARE(asked.size(), 2);
    // The window ends half its length after the click: near the run's end
    // at the right edge (100 s + 5 s), and between there and the label
    // column's share of the run at the middle.
    const double right = asked.at(0).at(0).toDouble(), middle = asked.at(1).at(0).toDouble();
    QVERIFY2(right > 103 && right <= 105, qPrintable(QString::number(right)));
    QVERIFY2(middle > 45 && middle < 75, qPrintable(QString::number(middle)));
    press(strip->width() / 2, Qt::RightButton);
    QCOMPARE(asked.size(), 2);  // only the left button seeks
  }

  void replaySeeksAndPlays() {
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY(page);
    tmui::ReplayControls *replay = page->replay();
    QVERIFY(replay);
    replay->seek(0.5);
    QCOMPARE(page->viewWindow()->now(), page->model()->startNs() + 500000000);
    replay->setSpeed(16);
    QCOMPARE(replay->speed(), 16.0);
    replay->play();
    QTRY_VERIFY_WITH_TIMEOUT(replay->position() > 1.0, 3000);
    QTRY_VERIFY_WITH_TIMEOUT(!replay->playing(), 3000);  // stops at the end
    QCOMPARE(replay->position(), page->model()->durationSeconds());
  }

  void truncatedCaptureOpensUpToTheDamage() {
    const QByteArray whole = synth::stream(w_);
    const QString path = writeCapture(dir_, "cut.tmcap", whole.left(whole.size() * 2 / 3));
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
    QVERIFY2(page, qPrintable(error));
    QVERIFY2(page->notice().contains("damaged"), qPrintable(page->notice()));
    QVERIFY(page->model()->threadCount() == synth::threadCount(w_));
    QVERIFY(page->model()->durationSeconds() > 0.5);
    QVERIFY(page->model()->durationSeconds() < w_.seconds);
  }

  void repeatedProbeNoticesShowOnceWithTheirCount() {
    const QStringList shown = tmui::collapseNotices(
        {"switch records paused for 1 s: the program switched more than 25000 times",
         "switch records resumed", "perf events off (THREADMON_PERF=0): states split by schedstat",
         "switch records paused for 2 s: the program switched more than 25000 times",
         "switch records resumed",
         "switch records paused for 4 s: the program switched more than 25000 times"});
    QCOMPARE(shown, QStringList({"perf events off (THREADMON_PERF=0): states split by schedstat",
                                 "switch records resumed (2 times)",
                                 "switch records paused for 4 s: the program switched more than "
                                 "25000 times (3 times)"}));
    QCOMPARE(tmui::collapseNotices({"a", "b"}), QStringList({"a", "b"}));
  }

  void probeNoticesShowInTheBanner() {
    synth::Workload w;
    w.notice = "switch records stopped after 50 ms above 25000 switches/s per CPU";
    const QString path = writeCapture(dir_, "notice.tmcap", synth::stream(w));
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
    QVERIFY2(page, qPrintable(error));
    QVERIFY2(page->notice().startsWith("Probe: switch records stopped"), qPrintable(page->notice()));

    // The app's own notice (here: the capture is damaged) wins over the probe's.
    const QByteArray whole = synth::stream(w);
    const QString cut = writeCapture(dir_, "notice-cut.tmcap", whole.left(whole.size() * 3 / 4));
    page.reset(openCapture(cut, &error));
    QVERIFY2(page, qPrintable(error));
    QVERIFY2(page->notice().contains("damaged"), qPrintable(page->notice()));
  }

  void corruptCaptureSaysWhere() {
    QByteArray bytes = synth::stream(w_);
    bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x5a);
    const QString path = writeCapture(dir_, "corrupt.tmcap", bytes);
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
    QVERIFY2(page, qPrintable(error));
    QVERIFY2(page->notice().contains("byte"), qPrintable(page->notice()));
  }

  void notACaptureIsRefused() {
    const QString path = writeCapture(dir_, "junk.tmcap", QByteArray("hello world, not a capture"));
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
    QVERIFY(!page);
    QVERIFY2(error.contains("junk.tmcap"), qPrintable(error));
  }

  void screenshotCommandWritesAPng() {
    const QString out = dir_.filePath("threads.png");
    QCOMPARE(screenshotCapture(capture_, "threads", 1.0, QSize(800, 500), out), QString());
    QImage img(out);
    QCOMPARE(img.size(), QSize(800, 500));
    QVERIFY(distinctColours(img) > 8);
    QVERIFY(!screenshotCapture(capture_, "nope", -1, QSize(800, 500), out).isEmpty());
  }

  void liveSessionSeesThreadsAndObjects() {
    // The session's spools have no names in $TMPDIR, so that a display
    // killed by a signal leaves nothing there; they are read all the same.
    tmtest::ScratchTmpDir tmp;
    tmnet::ProbeListener listener(QByteArray{});
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    std::unique_ptr<tmui::SessionView> page;
    LiveSession *live = nullptr;
    connect(&listener, &tmnet::ProbeListener::sessionAccepted, this,
            [&](tmnet::ProbeConnection *c) {
              live = new LiveSession(c);
              page.reset(live->page());
            });
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, listener.port());
    QVERIFY(client.waitForConnected(5000));
    const QByteArray bytes = synth::stream(w_);
    // Half first: the session is live and partly known.
    client.write(bytes.left(bytes.size() / 2));
    QTRY_VERIFY_WITH_TIMEOUT(page && page->model()->threadCount() == synth::threadCount(w_), 5000);
    QVERIFY(!page->model()->info().ended);
    QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden), QStringList());
    // One copy of the stream in $TMPDIR, compressed: the detail spool.
    QCOMPARE(tmp.filesOpenInside(), 1);
    const QString rec = dir_.filePath("recorded.tmcap");
    QCOMPARE(live->startRecording(rec), QString());
    client.write(bytes.mid(bytes.size() / 2));
    client.disconnectFromHost();
    QTRY_VERIFY_WITH_TIMEOUT(page->model()->info().ended, 5000);
    QCOMPARE(page->model()->syncObjectCount(), synth::kObjectCount);
    QVERIFY(page->notice().isEmpty());
    live->stopRecording();
    QVERIFY(!live->recording());
    // The recording, made from the compressed spool, holds every frame
    // received from the first one, and its index: it reads as the stream.
    tmon::SessionModel recorded, sent;
    const tmon::CaptureLoadResult read = tmon::CaptureReader::load(rec, &recorded);
    QCOMPARE(int(read.status), int(tmon::CaptureLoadResult::Complete));
    QVERIFY2(read.message.isEmpty(), qPrintable(read.message));
    QCOMPARE(int(tmon::CaptureReader::load(writeCapture(dir_, "sent.tmcap", bytes), &sent).status),
             int(tmon::CaptureLoadResult::Complete));
    QCOMPARE(recorded.framesApplied(), sent.framesApplied());
    QCOMPARE(recorded.threadCount(), sent.threadCount());
    const tmon::TimeRange run = sent.resolve(tmon::Window::wholeRun());
    QCOMPARE(recorded.resolve(tmon::Window::wholeRun()).t1, run.t1);
    for (int i = 0; i < sent.threadCount(); i++)
      QVERIFY(recorded.threadStates(i, run).ns == sent.threadStates(i, run).ns);
    tmon::SessionModel fromSpool;
    const tmon::CaptureLoadResult spooled =
        live->loadDetail(page->model()->startNs(), page->model()->latestNs(), &fromSpool);
    QVERIFY2(spooled.message.isEmpty(), qPrintable(spooled.message));
    QCOMPARE(fromSpool.threadCount(), synth::threadCount(w_));
    // Every view renders the live session too.
    const QImage img = renderView(page.get(), ViewKind::Threads, -1, kShot);
    std::unique_ptr<tmui::ModelView> view(page->view(ViewKind::Threads));
    QCOMPARE(view->rowCount(), synth::threadCount(w_));
    QVERIFY(distinctColours(img) > 8);
  }

  // A range dragged back past what a live model holds (after 60 s its
  // intervals and mutex waits leave) is read from the session's spool: the
  // findings and who-blocks-whom of that range are those of the stream read
  // whole as a capture, not the few waits the live model still holds there.
  void liveRangeBeforeTheDetailReadsTheSpool() {
    synth::Workload w = w_;
    w.seconds = 80;
    const QByteArray bytes = synth::stream(w);
    tmnet::ProbeListener listener(QByteArray{});
    std::unique_ptr<tmui::SessionView> page;
    QTcpSocket client;
    QVERIFY(connectLive(&listener, &page, &client));
    client.write(bytes);
    QTRY_VERIFY_WITH_TIMEOUT(client.bytesToWrite() == 0, 20000);
    client.disconnectFromHost();
    QTRY_VERIFY_WITH_TIMEOUT(page && page->model()->info().ended, 20000);
    const tmon::SessionModel *live = page->model();
    constexpr int64_t kSec = 1'000'000'000;
    QVERIFY(live->detailFromNs() >= live->startNs() + 10 * kSec);
    const tmon::TimeRange r{live->startNs() + 2 * kSec, live->startNs() + 7 * kSec};
    tmon::SessionModel whole;
    QCOMPARE(int(tmon::CaptureReader::load(writeCapture(dir_, "long.tmcap", bytes), &whole).status),
             int(tmon::CaptureLoadResult::Complete));
    const std::vector<tmon::WaitPair> pairs = whole.waitMatrix(r);
    QVERIFY(!pairs.empty());
    std::set<uint32_t> waiters;
    for (const tmon::WaitPair &p : pairs) waiters.insert(p.waiter);
    const auto waitsIn = [](const std::vector<tmon::WaitPair> &v) {
      uint64_t n = 0;
      for (const tmon::WaitPair &p : v) n += p.count;
      return n;
    };
    QVERIFY(waitsIn(live->waitMatrix(r)) < waitsIn(pairs));  // the mutex waits left it
    page->viewWindow()->setRange(r);
    std::unique_ptr<tmui::ModelView> matrix(page->view(ViewKind::Matrix));
    matrix->refreshNow();
    QCOMPARE(matrix->rowCount(), int(waiters.size()));
    tmui::FindingsView *findings = page->findingsView();
    findings->refreshNow();
    const std::vector<tmon::Finding> want = whole.findings(r);
    QVERIFY(!want.empty());
    QCOMPARE(findings->findings().size(), want.size());
    for (size_t i = 0; i < want.size(); i++)
      QCOMPARE(findings->findings()[i].message, want[i].message);
  }

  // The mutants that crashed or hung a live display, sent over TCP: a wait
  // on a barrier sent twice (a zero-length wait), a tick at 2^63 ns, a CPU
  // of 2^28. The session stays up, every view paints, the banner says what
  // was dropped.
  void liveHostileStreamIsSurvived() {
    tmnet::ProbeListener listener(QByteArray{});
    std::unique_ptr<tmui::SessionView> page;
    QTcpSocket client;
    QVERIFY(connectLive(&listener, &page, &client));
    QByteArray bytes = tmtest::header() + synth::helloFrame(9, QByteArray{});
    tmtest::StreamBuilder b(tmtest::intoBytes(&bytes));
    b.syncObject(5, THREADMON__SYNC_KIND__KIND_BARRIER, 0x5000, nullptr, nullptr);
    for (int r = 0; r < 10; r++) {
      const int64_t t = 1'000'000'000 + r * 10'000'000;
      for (int twice = 0; twice < 2; twice++)
        b.transition(10, t + 2'000'000, THREADMON__THREAD_STATE__STATE_BLOCKED_BARRIER, 5);
      b.transition(10, t + 9'000'000, THREADMON__THREAD_STATE__STATE_RUNNING);
      b.tick(t + 10'000'000, {bareSample(10, r == 5 ? 1 << 28 : 0)});
    }
    b.tick(tmtest::kAt2To63, {bareSample(10, 0)});
    client.write(bytes);
    QTRY_VERIFY_WITH_TIMEOUT(page && page->model()->threadCount() == 1, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(page->notice().startsWith("Damaged input: "), 5000);
    QVERIFY(!page->model()->hasError());
    QCOMPARE(page->model()->cpuCount(), synth::kCpuCount);  // the Hello's, not 2^28
    for (ViewKind kind : {ViewKind::Timeline, ViewKind::Findings, ViewKind::Charts}) {
      QElapsedTimer timer;
      timer.start();
      const QImage img = renderView(page.get(), kind, -1, kShot);
      std::unique_ptr<tmui::ModelView> view(page->view(kind));  // detached by renderView
      QVERIFY2(timer.elapsed() < 5000, qPrintable(viewKindName(kind)));
    }
    client.disconnectFromHost();
    QTRY_VERIFY_WITH_TIMEOUT(page->model()->info().ended, 5000);
  }

  void liveMalformedFrameClosesWithANotice() {
    tmnet::ProbeListener listener(QByteArray{});
    std::unique_ptr<tmui::SessionView> page;
    QTcpSocket client;
    QVERIFY(connectLive(&listener, &page, &client));
    client.write(tmtest::header() + synth::helloFrame(9, QByteArray{}) +
                 tmtest::framed(QByteArray("\x0a\xff\xff\xff\xff\x0f", 6)));
    QTRY_VERIFY_WITH_TIMEOUT(page && !page->notice().isEmpty(), 5000);
    QVERIFY2(page->notice().contains("malformed"), qPrintable(page->notice()));
    QVERIFY(page->model()->hasError());
  }

  // The real probe, preloaded into a workload, streaming to us over
  // loopback (paths come from meson; skipped when the probe is not built).
  void liveSessionFromTheRealProbe() {
    const QString probe = qEnvironmentVariable("THREADMON_TEST_PROBE");
    const QString workload = qEnvironmentVariable("THREADMON_TEST_WORKLOAD");
    if (probe.isEmpty() || workload.isEmpty()) {
      QTest::qSkip("libthreadmon.so or the workload not built", __FILE__, __LINE__);
      return;
    }
    tmnet::ProbeListener listener("e2e-token", nullptr, tmnet::ProbeListener::Link::PlainForTests);
    QVERIFY(listener.listen({QHostAddress(QHostAddress::LocalHost), 0}).isEmpty());
    std::vector<std::unique_ptr<tmui::SessionView>> pages;
    connect(&listener, &tmnet::ProbeListener::sessionAccepted, this,
            [&](tmnet::ProbeConnection *c) { pages.emplace_back((new LiveSession(c))->page()); });
    QProcess proc;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("LD_PRELOAD", probe);
    env.insert("THREADMON_CONNECT", QStringLiteral("127.0.0.1:%1").arg(listener.port()));
    env.insert("THREADMON_TOKEN", "e2e-token");
    proc.setProcessEnvironment(env);
    proc.start(workload, {"--threads", "4", "--size", "200", "--rounds", "5"});
    QVERIFY2(proc.waitForStarted(5000), qPrintable(proc.errorString()));
    QTRY_VERIFY_WITH_TIMEOUT(proc.state() == QProcess::NotRunning, 60000);
    QCOMPARE(proc.exitCode(), 0);
    QTRY_VERIFY_WITH_TIMEOUT(!pages.empty() && pages.front()->model()->info().ended, 10000);
    tmon::SessionModel *model = pages.front()->model();
    QVERIFY2(!model->hasError(), qPrintable(model->errorText()));
    QVERIFY(model->threadCount() >= 5);  // main, 4 workers (and the probe's own)
    QVERIFY(model->syncObjectCount() >= 1);  // the barrier
    const QImage img = renderView(pages.front().get(), ViewKind::Threads, -1, kShot);
    std::unique_ptr<tmui::ModelView> view(pages.front()->view(ViewKind::Threads));
    QCOMPARE(view->rowCount(), model->threadCount());
    QVERIFY(distinctColours(img) > 8);
  }

  void commandLinePolicy() {
    DisplayOptions o;
    QCOMPARE(parseDisplayOptions({"threadmon-display"}, &o), QString());
    QCOMPARE(o.listen.port, quint16(7411));
    QVERIFY(o.listen.host.isLoopback());
    o = DisplayOptions();
    qputenv("THREADMON_TOKEN", "");
    QVERIFY(parseDisplayOptions({"threadmon-display", "--listen", "0.0.0.0:7411"}, &o)
                .contains("token"));
    o = DisplayOptions();
    QCOMPARE(parseDisplayOptions({"threadmon-display", "--listen", "0.0.0.0:7411", "--insecure"}, &o),
             QString());
    o = DisplayOptions();
    QCOMPARE(parseDisplayOptions({"threadmon-display", "--listen", "0.0.0.0:7411", "--token", "x"}, &o),
             QString());
    QCOMPARE(o.token, QByteArray("x"));
    o = DisplayOptions();
    QVERIFY(parseDisplayOptions({"threadmon-display", "--view", "bogus", "--open", "a"}, &o)
                .contains("bogus"));
  }

  // A tick at 2^63 ns hung the axis painting, a CPU number of 2^28 sized
  // every per-CPU list to gigabytes: the model drops the one and takes the
  // other as unknown, every view paints at once, and the banner says so.
  void hostileCaptureRendersInEveryView() {
    QByteArray bytes = synth::stream(w_);
    tmtest::StreamBuilder b(tmtest::intoBytes(&bytes));
    b.tick(tmtest::kAt2To63, {bareSample(w_.pid, 0)});
    b.tick(1'500'000'000, {bareSample(w_.pid, 1 << 28)});
    const QString path = writeCapture(dir_, "hostile.tmcap", bytes);
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
    QVERIFY2(page, qPrintable(error));
    QVERIFY2(page->notice().startsWith("Damaged input: "), qPrintable(page->notice()));
    QCOMPARE(page->model()->cpuCount(), synth::kCpuCount);
    for (const tmon::ViewInfo &v : tmon::kViews) {
      const ViewKind kind = v.kind;
      QElapsedTimer timer;
      timer.start();
      const QImage img = renderView(page.get(), kind, -1, kShot);
      std::unique_ptr<tmui::ModelView> view(page->view(kind));  // detached by renderView
      QCOMPARE(img.size(), kShot);
      QVERIFY2(timer.elapsed() < 5000, qPrintable(viewKindName(kind)));
    }
  }

  // Ranges no session has (a wild zoom or pan, a damaged live stream): the
  // axis and rows paint at once, and the range stays one the canvas can show.
  void timelineSurvivesExtremeRanges() {
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(capture_, &error));
    QVERIFY2(page, qPrintable(error));
    tmui::TimelineView *tl = page->timeline();
    tl->setParent(nullptr);
    std::unique_ptr<tmui::TimelineView> owner(tl);
    tl->resize(1000, 600);
    tl->setAttribute(Qt::WA_DontShowOnScreen);
    tl->show();
    tmui::TimelineCanvas *c = tl->canvas();
    QElapsedTimer timer;
    timer.start();
    const tmon::TimeRange ranges[] = {{0, INT64_MAX},         {INT64_MIN, INT64_MAX},
                                      {INT64_MAX - 5, INT64_MAX}, {INT64_MIN, INT64_MIN + 1},
                                      {5, -5}};
    for (const tmon::TimeRange &r : ranges) {
      c->setVisibleRange(r);
      c->viewport()->repaint();
      const tmon::TimeRange v = c->visibleRange();
      QVERIFY(v.t1 > v.t0 && v.length() >= 10000);
      for (int i = 0; i < 80; ++i) QTest::keyClick(c, Qt::Key_Minus);
      for (int i = 0; i < 20; ++i) QTest::keyClick(c, Qt::Key_Right);
      c->viewport()->repaint();
      for (int i = 0; i < 80; ++i) QTest::keyClick(c, Qt::Key_Plus);
      for (int i = 0; i < 20; ++i) QTest::keyClick(c, Qt::Key_Left);
      c->viewport()->repaint();
      QVERIFY(c->visibleRange().t1 > c->visibleRange().t0);
    }
    QVERIFY2(timer.elapsed() < 5000, qPrintable(QString::number(timer.elapsed())));
  }

  // 1,000 threads: one pool row, its mix computed on a worker thread; a
  // repaint touches only the visible rows, so it stays fast folded and
  // unfolded (998 thread rows).
  void timelineWithAThousandThreads() {
    synth::Workload big;
    big.workers = 998;
    big.seconds = 1.0;
    const QString path = writeCapture(dir_, "big.tmcap", synth::stream(big));
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path, &error));
    QVERIFY2(page, qPrintable(error));
    QCOMPARE(page->model()->threadCount(), 1000);
    tmui::TimelineView *tl = page->timeline();
    tl->setParent(nullptr);
    std::unique_ptr<tmui::TimelineView> owner(tl);
    tl->resize(1400, 900);
    tl->setAttribute(Qt::WA_DontShowOnScreen);
    tl->show();
    tl->refreshNow();
    QVERIFY(tl->busy());  // large: pooled and mixed off the GUI thread
    QTRY_VERIFY_WITH_TIMEOUT(!tl->busy(), 60000);
    QCOMPARE(tl->rowCount(), 1000);
    tmui::TimelineCanvas *c = tl->canvas();
    QCOMPARE(c->rowCount(), 3);  // the workers' pool, main, the probe
    auto msPerRepaint = [&] {
      QElapsedTimer timer;
      timer.start();
      constexpr int kFrames = 10;
      for (int i = 0; i < kFrames; ++i) {
        c->verticalScrollBar()->setValue(i * 1500);
        c->viewport()->repaint();
      }
      return double(timer.elapsed()) / kFrames;
    };
    const double folded = msPerRepaint();
    for (const tmui::TimelineRow &r : c->layout().rows)
      if (r.aggregate()) tl->toggle(r.key);
    QCOMPARE(c->rowCount(), 1001);
    const double unfolded = msPerRepaint();
    qInfo("timeline, 1000 threads, 1400x900: %.1f ms per repaint folded, %.1f unfolded", folded,
          unfolded);
    QVERIFY2(folded < 250 && unfolded < 250,
             qPrintable(QStringLiteral("%1 %2").arg(folded).arg(unfolded)));
  }
};

QTEST_MAIN(TestUi)
#include "test_ui.moc"
