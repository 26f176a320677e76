// A long capture without Summary records (as the probe writes them) opened
// in the display: its whole-run strip is built in the background and fills
// in; once whole it holds what a build from the detail says, bucket for
// bucket; the second open takes it from the cache next to the capture, and a
// damaged cache is ignored (said in the strip) and built again.
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPainter>
#include <QPointer>
#include <QSlider>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "busy_capture.h"
#include "captureloader.h"
#include "captureopen.h"
#include "capturewindow.h"
#include "findingsview.h"
#include "mainwindow.h"
#include "modelview.h"
#include "overviewbuild.h"
#include "replaycontrols.h"
#include "runsummary.h"
#include "seekstill.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "statepalette.h"
#include "wholerunpainter.h"
#include "wholerunstrip.h"

namespace {

tmui::WholeRunStrip *stripOf(tmui::SessionView *page) {
  return dynamic_cast<tmui::WholeRunStrip *>(
      page->findChild<QWidget *>(QStringLiteral("wholeRun")));
}

bool sameSummary(const tmon::RunSummary &a, const tmon::RunSummary &b) {
  if (a.startNs() != b.startNs() || a.tids() != b.tids() || a.buckets() != b.buckets())
    return false;
  for (uint32_t tid : a.tids())
    for (size_t k = 0; k < a.buckets(); k++) {
      const tmon::StateTimes x = a.bucket(tid, k), y = b.bucket(tid, k);
      if (x.ns != y.ns || x.lifetimeNs != y.lifetimeNs) return false;
    }
  return true;
}

// The page of a capture at 60 s in a shown main window, or null.
tmui::SessionView *openShown(MainWindow &window, const QString &path) {
  window.resize(1200, 800);
  window.show();
  if (!QTest::qWaitForWindowExposed(&window)) return nullptr;
  auto page = std::make_shared<QPointer<tmui::SessionView>>();
  window.openCaptureFile(path, 60, [page](tmui::SessionView *p) { *page = p; });
  return QTest::qWaitFor([&] { return !page->isNull(); }, 60000) ? page->data() : nullptr;
}

// The page a seek to seconds gives in place of page (nullptr: none in 60 s).
tmui::SessionView *seekShown(MainWindow &window, tmui::SessionView *page, double seconds) {
  QPointer<tmui::SessionView> before(page);
  emit page->seekRequested(seconds);
  auto shown = [&] { return qobject_cast<tmui::SessionView *>(window.tabs()->currentWidget()); };
  if (!QTest::qWaitFor([&] { return before.isNull(); }, 60000) ||
      !QTest::qWaitFor([&] { return shown() != nullptr; }, 60000))
    return nullptr;
  return shown();
}

}  // namespace

class TestUiOverview : public QObject {
  Q_OBJECT

 private slots:
  // 100 threads, each asleep 3/4 of every second and blocked on a mutex the
  // rest, in a strip too low for a row each: the rows shared by several
  // threads show both states in their shares (a row of one thread under
  // 4 px showed only the larger, so the strip read as all asleep).
  void stripRowsOfManyThreadsShowTheirMix() {
    tmon::RunSummary sum;
    sum.setStart(0, 10);
    tmon::StateTimes st;
    st.lifetimeNs = tmon::RunSummary::kBucketNs;
    st.ns[size_t(tmon::FinalState::Sleeping)] = st.lifetimeNs * 3 / 4;
    st.ns[size_t(tmon::FinalState::BlockedMutex)] = st.lifetimeNs / 4;
    for (uint32_t tid = 1; tid <= 100; ++tid)
      for (size_t k = 0; k < 10; ++k) QVERIFY(sum.addBucket(tid, k, st));
    QImage image(600, 160, QImage::Format_RGB32);
    QPainter p(&image);
    const tmui::WholeRunLayout layout = tmui::paintWholeRun(&p, image.rect(), sum);
    p.end();
    QVERIFY(layout.plot.height() < 4 * 100);
    int sleeping = 0, blocked = 0;
    const QRgb asleep = tmui::stateColor(tmon::FinalState::Sleeping).rgb();
    const QRgb mutex = tmui::stateColor(tmon::FinalState::BlockedMutex).rgb();
    const int x = layout.plot.center().x();
    for (int y = layout.plot.top(); y <= layout.plot.bottom(); ++y) {
      const QRgb c = image.pixel(x, y);
      sleeping += c == asleep;
      blocked += c == mutex;
    }
    // Each row three quarters asleep, a quarter blocked (to a pixel a row).
    QVERIFY2(blocked > 0 && std::abs(3 * blocked - sleeping) <= 3 * 12,
             qPrintable(QStringLiteral("%1 px asleep, %2 px blocked").arg(sleeping).arg(blocked)));
  }

  void initTestCase() {
    QVERIFY(dir_.isValid());
    qputenv("XDG_CACHE_HOME", dir_.filePath(QStringLiteral("cache")).toLocal8Bit());
    // Longer than a window: opened a window at a time, with the strip.
    path_ = dir_.filePath(QStringLiteral("long.tmcap"));
    QVERIFY(busycap::writeFile(path_, 100, 150'000'000'000ull));
    tmon::CaptureWindow cw;
    QVERIFY(cw.open(path_));
    QVERIFY(cw.lastNs() - cw.firstNs() > kCaptureWindowNs);
    QVERIFY(!cw.hasSummaries());
    QVERIFY(fromDetail_.build(cw));
  }

  void builtInTheBackgroundThenFromTheCache() {
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path_, &error, 60));
    QVERIFY2(page, qPrintable(error));
    tmui::WholeRunStrip *strip = stripOf(page.get());
    QVERIFY(strip);
    // Returned before the build: the window is shown at once, the strip
    // says it is building and hatches what is not summed yet.
    QVERIFY(strip->building());
    QVERIFY(strip->pendingChunks() >= 13);  // 150 s in 10 s chunks, a few maybe done
    QVERIFY2(strip->status().startsWith(QLatin1String("Building the overview")),
             qPrintable(strip->status()));
    size_t least = strip->pendingChunks();
    QElapsedTimer t;
    t.start();
    while (strip->building() && t.elapsed() < 240000) {
      QApplication::processEvents(QEventLoop::WaitForMoreEvents);
      QVERIFY(strip->pendingChunks() <= least);  // it only fills in
      least = strip->pendingChunks();
    }
    QVERIFY(!strip->building());
    QVERIFY(strip->status().isEmpty());
    QVERIFY(sameSummary(strip->summary(), fromDetail_));
    page.reset();  // the build ends with the last page of the capture; its cache is written
    QVERIFY(QFile::exists(path_ + QStringLiteral(".tmsum")));

    std::unique_ptr<tmui::SessionView> again(openCapture(path_, &error, 100));
    QVERIFY(again);
    QVERIFY(!stripOf(again.get())->building());
    QVERIFY(sameSummary(stripOf(again.get())->summary(), fromDetail_));
  }

  // A seek (a click on the strip: the capture read again at another time,
  // in a new page) takes the overview open over without reading it again.
  // Its strip is not painted again: the new page shows the drawing the
  // page it replaced made (an hour of 100 threads is about 30 ms of the
  // GUI thread), the same pixels as a strip of its own would.
  void aSeekTakesTheOverviewOverUnread() {
    MainWindow window;
    tmui::SessionView *page = openShown(window, path_);
    QVERIFY(page);
    QTRY_VERIFY_WITH_TIMEOUT(!stripOf(page)->building(), 240000);
    stripOf(page)->repaint();
    const tmon::RunSummary *shown = &stripOf(page)->summary();
    std::shared_ptr<OverviewBuild> open = OverviewBuild::of(path_);
    QVERIFY(open);
    const tmon::CaptureIdentity id = open->identity();
    tmon::CaptureWindow cw;
    QVERIFY(cw.open(path_));
    OverviewBuild::Found skipped = OverviewBuild::find(path_, cw, &id);
    QVERIFY(skipped.ok && !skipped.summary);
    QCOMPARE(OverviewBuild::forCapture(path_, skipped), open);
    tmon::CaptureIdentity other = id;
    other.sessionId++;  // a capture written again since: read again
    QVERIFY(OverviewBuild::find(path_, cw, &other).summary);

    tmui::SessionView *next = seekShown(window, page, 120);
    QVERIFY(next && stripOf(next));
    QCOMPARE(&stripOf(next)->summary(), shown);
    tmui::WholeRunStrip *strip = stripOf(next);
    const QImage taken = strip->grab().toImage().convertToFormat(QImage::Format_RGB32);
    QCOMPARE(strip->wholePaints(), 0);
    tmui::WholeRunStrip own(open->summary(), strip->window());
    own.resize(strip->size());
    QCOMPARE(own.grab().toImage().convertToFormat(QImage::Format_RGB32), taken);
    QCOMPARE(own.wholePaints(), 1);
    // A seek asked while one is read abandons it: the page shows the newer.
    QPointer<tmui::SessionView> before(next);
    emit next->seekRequested(40);
    emit next->seekRequested(140);
    QTRY_VERIFY_WITH_TIMEOUT(!before, 60000);
    QTRY_VERIFY_WITH_TIMEOUT(qobject_cast<tmui::SessionView *>(window.tabs()->currentWidget()),
                             60000);
    next = qobject_cast<tmui::SessionView *>(window.tabs()->currentWidget());
    QVERIFY(next);
    QVERIFY2(next->notice().contains(QLatin1String("130.0 s to 140.0 s")),
             qPrintable(next->notice()));
    QTest::qWait(500);  // the abandoned read, stopped, replaces nothing
    QCOMPARE(window.tabs()->currentWidget(), next);
    // With every page of the capture gone, what skipped the read has no
    // overview to take over: none rather than an empty one.
    window.tabs()->clear();
    delete next;
    open.reset();
    QVERIFY(!OverviewBuild::of(path_));
    QVERIFY(!OverviewBuild::forCapture(path_, skipped));
  }

  // A seek's page shows the views on screen with the new window's data as
  // it enters its tab: their results were computed on the read's threads
  // (ModelView::ahead), and are what the views would compute themselves.
  void aSeeksPageShowsItsViewsAtOnce() {
    using tmui::ViewKind;
    MainWindow window;
    tmui::SessionView *page = openShown(window, path_);
    QVERIFY(page);
    const QList<ViewKind> shown{ViewKind::Timeline, ViewKind::Threads, ViewKind::Findings};
    for (ViewKind kind : shown) QTRY_VERIFY_WITH_TIMEOUT(!page->view(kind)->behind(), 60000);
    QPointer<tmui::SessionView> before(page);
    emit page->seekRequested(120);
    tmui::SessionView *next = nullptr;
    while (!next) {  // one event-loop turn at a time: checked as the page enters its tab
      QApplication::processEvents(QEventLoop::WaitForMoreEvents);
      QApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
      auto *current = qobject_cast<tmui::SessionView *>(window.tabs()->currentWidget());
      if (current && current != before) next = current;
    }
    for (int v = 0; v < tmui::kViewCount; v++) {
      const tmui::ModelView *view = next->view(ViewKind(v));
      QCOMPARE(view->behind(), !shown.contains(ViewKind(v)));
    }
    std::vector<QString> ahead;
    for (const tmon::Finding &f : next->findingsView()->findings()) ahead.push_back(f.message);
    std::vector<int> rows;
    for (ViewKind kind : shown) rows.push_back(next->view(kind)->rowCount());
    for (ViewKind kind : shown) {  // computed here again: the same
      next->view(kind)->refreshNow();
      QTRY_VERIFY_WITH_TIMEOUT(!next->view(kind)->behind(), 60000);
      QCOMPARE(next->view(kind)->rowCount(), rows[size_t(shown.indexOf(kind))]);
    }
    std::vector<QString> own;
    for (const tmon::Finding &f : next->findingsView()->findings()) own.push_back(f.message);
    QCOMPARE(own, ahead);
    // Elsewhere and back: the page shows what was computed for 120 s then,
    // at once.
    before = next;
    emit next->seekRequested(60);
    QTRY_VERIFY_WITH_TIMEOUT(!before, 60000);
    QTRY_VERIFY_WITH_TIMEOUT(qobject_cast<tmui::SessionView *>(window.tabs()->currentWidget()),
                             60000);
    before = qobject_cast<tmui::SessionView *>(window.tabs()->currentWidget());
    emit before->seekRequested(120);
    for (next = nullptr; !next;) {
      QApplication::processEvents(QEventLoop::WaitForMoreEvents);
      QApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
      auto *current = qobject_cast<tmui::SessionView *>(window.tabs()->currentWidget());
      if (current && current != before) next = current;
    }
    for (ViewKind kind : shown) {
      QVERIFY(!next->view(kind)->behind());
      QCOMPARE(next->view(kind)->rowCount(), rows[size_t(shown.indexOf(kind))]);
    }
    std::vector<QString> back;
    for (const tmon::Finding &f : next->findingsView()->findings()) back.push_back(f.message);
    QCOMPARE(back, own);
  }

  // The still a seek shows is the page as its window shows it, copied from
  // the window's backing store (not painted again).
  void aSeeksStillIsThePageAsShown() {
    MainWindow window;
    tmui::SessionView *page = openShown(window, path_);
    QVERIFY(page);
    QTRY_VERIFY_WITH_TIMEOUT(!stripOf(page)->building(), 240000);
    window.repaint();
    const QImage still = SeekStill::pictureOf(page).toImage().convertToFormat(QImage::Format_RGB32);
    QCOMPARE(still.size(), page->grab().size());
    QCOMPARE(still, page->grab().toImage().convertToFormat(QImage::Format_RGB32));
  }

  // A seek's page is made while its window is read, and reads its model
  // only once it is filled: its controls, title and notice are those of a
  // page opened at that window, not of an empty model (a replay position
  // of 0.00 s of 0.00 s, no threads in the title).
  void aSeeksPageMadeDuringTheReadShowsTheWindowRead() {
    MainWindow window;
    tmui::SessionView *page = openShown(window, path_);
    QVERIFY(page);
    tmui::SessionView *next = seekShown(window, page, 120);
    QVERIFY(next && next->replay());
    QString error;
    std::unique_ptr<tmui::SessionView> opened(openCapture(path_, &error, 120));
    QVERIFY2(opened, qPrintable(error));
    auto label = [](tmui::SessionView *p) { return p->replay()->findChild<QLabel *>()->text(); };
    auto slider = [](tmui::SessionView *p) { return p->replay()->findChild<QSlider *>()->value(); };
    QVERIFY2(!label(next).endsWith(QLatin1String("/ 0.00 s")), qPrintable(label(next)));
    QCOMPARE(label(next), label(opened.get()));
    QCOMPARE(slider(next), slider(opened.get()));
    QVERIFY(slider(next) > 0);
    QCOMPARE(next->title(), opened->title());
    QCOMPARE(next->notice(), opened->notice());
    QCOMPARE(next->model()->threadCount(), opened->model()->threadCount());
    QVERIFY(next->model()->threadCount() > 0);
    // A capture read whole (no window chosen after the read) the same.
    const QString shortPath = dir_.filePath(QStringLiteral("short.tmcap"));
    QVERIFY(busycap::writeFile(shortPath, 10, 3'000'000'000ull));
    auto whole = std::make_shared<QPointer<tmui::SessionView>>();
    window.openCaptureFile(shortPath, -1, [whole](tmui::SessionView *p) { *whole = p; });
    QTRY_VERIFY_WITH_TIMEOUT(!whole->isNull(), 60000);
    std::unique_ptr<tmui::SessionView> direct(openCapture(shortPath, &error));
    QVERIFY2(direct, qPrintable(error));
    QVERIFY2(!label(*whole).isEmpty() && !label(*whole).endsWith(QLatin1String("/ 0.00 s")),
             qPrintable(label(*whole)));
    QCOMPARE(label(*whole), label(direct.get()));
    QCOMPARE((*whole)->title(), direct->title());
  }

  // The views' results computed ahead are kept with the capture's index
  // for the windows read last: a read of one of them again computes none.
  void aWindowReadAgainTakesItsViewsAsComputedThen() {
    int computed = 0;
    std::vector<CaptureLoader::Ahead> aheads{
        {tmon::ViewKind::Findings,
         [&computed](const tmon::SessionModel &m, const tmon::TimeRange &r) {
           computed++;  // each thread's time in the window, whatever the view
           std::vector<int64_t> lives;
           for (int i = 0; i < m.threadCount(); i++)
             lives.push_back(m.threadStates(i, r).lifetimeNs);
           return std::any(lives);
         },
         1}};
    auto load = [&](double at, const std::shared_ptr<KeptIndex> &kept) {
      auto *loader = new CaptureLoader(path_, at, nullptr, aheads, kept);
      std::pair<std::vector<int64_t>, std::shared_ptr<KeptIndex>> got;
      bool done = false;
      connect(loader, &CaptureLoader::finished, [&](tmui::SessionView *page, const QString &e) {
        QVERIFY2(page, qPrintable(e));
        delete page;
        for (auto &[kind, result] : loader->takeComputed())
          if (kind == tmon::ViewKind::Findings)
            got.first = std::any_cast<std::vector<int64_t>>(result);
        got.second = loader->index();
        done = true;
      });
      return QTest::qWaitFor([&] { return done; }, 60000) ? got : decltype(got){};
    };
    const auto first = load(120, nullptr);
    QVERIFY(first.second);
    QCOMPARE(computed, 1);
    QVERIFY(first.first.size() >= 100);
    const auto elsewhere = load(60, first.second);
    QCOMPARE(elsewhere.second, first.second);
    QCOMPARE(computed, 2);
    const auto again = load(120, elsewhere.second);
    QCOMPARE(computed, 2);
    QCOMPARE(again.first, first.first);
    QCOMPARE(again.second, first.second);
  }

  // What is read follows the window, not the file: a capture of a few
  // hundred KiB longer than the window opens as a window of it (the same
  // path as an hour's), one as long as the window opens whole.
  void aSmallCaptureLongerThanTheWindowOpensByWindow() {
    const QString longer = dir_.filePath(QStringLiteral("small-long.tmcap"));
    const QString shorter = dir_.filePath(QStringLiteral("small-short.tmcap"));
    QVERIFY(busycap::writeFile(longer, 4, uint64_t(kCaptureWindowNs) + 5'000'000'000ull));
    QVERIFY(busycap::writeFile(shorter, 4, uint64_t(kCaptureWindowNs) - 1'000'000'000ull));
    QVERIFY(QFileInfo(longer).size() < (1 << 20));
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(longer, &error, 15));
    QVERIFY2(page, qPrintable(error));
    QVERIFY2(page->notice().contains(QLatin1String("showing 10 s of it")),
             qPrintable(page->notice()));
    QVERIFY(stripOf(page.get()));
    page.reset(openCapture(shorter, &error));
    QVERIFY2(page, qPrintable(error));
    QVERIFY2(!page->notice().contains(QLatin1String("showing")), qPrintable(page->notice()));
  }

  // A long capture's index is read once and kept across its seeks: the
  // next read takes it (no open, no load of the session's start) and fills
  // its model as a fresh open does; a file written since is opened again.
  void aSeekKeepsTheIndexUntilTheFileChanges() {
    const QString path = dir_.filePath(QStringLiteral("kept.tmcap"));
    QVERIFY(busycap::writeFile(path, 8, 40'000'000'000ull));
    auto first = std::make_unique<tmon::SessionModel>();
    const CaptureRead read = readCapture(path, 20, first.get());
    QVERIFY2(read.result.status == tmon::CaptureLoadResult::Complete,
             qPrintable(read.result.message));
    QVERIFY(read.index && read.index->session.read);
    auto fresh = std::make_unique<tmon::SessionModel>();
    const CaptureRead freshRead = readCapture(path, 35, fresh.get());
    auto kept = std::make_unique<tmon::SessionModel>();
    const CaptureRead keptRead =
        readCapture(path, 35, kept.get(), nullptr, nullptr, CaptureBounds{}, read.index);
    QCOMPARE(keptRead.index, read.index);
    QVERIFY(freshRead.index != read.index);
    QCOMPARE(keptRead.windowNotice, freshRead.windowNotice);
    QCOMPARE(keptRead.overview.run.t0, freshRead.overview.run.t0);
    QCOMPARE(keptRead.overview.id, freshRead.overview.id);
    QVERIFY(kept->threadCount() >= 8);
    QCOMPARE(kept->threadCount(), fresh->threadCount());
    for (int i = 0; i < kept->threadCount(); i++)
      QCOMPARE(kept->threadStates(i, keptRead.shown).ns,
               fresh->threadStates(i, freshRead.shown).ns);
    // Busy (a read abandoned, still stopping): the read opens its own.
    {
      const std::lock_guard<std::mutex> busy(read.index->busy);
      auto other = std::make_unique<tmon::SessionModel>();
      QVERIFY(
          readCapture(path, 35, other.get(), nullptr, nullptr, CaptureBounds{}, read.index).index !=
          read.index);
    }
    // Written since: its size and time say so.
    QVERIFY(busycap::writeFile(path, 9, 45'000'000'000ull));
    auto again = std::make_unique<tmon::SessionModel>();
    const CaptureRead rewritten =
        readCapture(path, 45, again.get(), nullptr, nullptr, CaptureBounds{}, read.index);
    QVERIFY(rewritten.index && rewritten.index != read.index);
    QCOMPARE(again->threadCount(), 9 + (kept->threadCount() - 8));
  }

  // A capture larger than a whole read should hold is read by windows even
  // when its times claim a short span; a window its records overfill (all
  // times forged or lost) is refused in one line instead of read whole. The
  // bounds are scaled down to a small capture here.
  void aCaptureTooDenseForItsTimesIsRefused() {
    const QString path = dir_.filePath(QStringLiteral("dense.tmcap"));
    QVERIFY(busycap::writeFile(path, 4, 5'000'000'000ull));
    CaptureBounds tight;
    tight.wholeUpToBytes = 0;
    tight.plainWholeUpToBytes = 0;
    tight.maxWindowBytes = 64;
    auto model = std::make_unique<tmon::SessionModel>();
    CaptureRead read = readCapture(path, -1, model.get(), nullptr, nullptr, tight);
    QCOMPARE(read.result.status, tmon::CaptureLoadResult::Unreadable);
    QVERIFY2(read.result.message.contains(QLatin1String("not read")),
             qPrintable(read.result.message));
    QCOMPARE(model->threadCount(), 0);
    CaptureBounds roomy;
    roomy.wholeUpToBytes = 0;
    model = std::make_unique<tmon::SessionModel>();
    read = readCapture(path, -1, model.get(), nullptr, nullptr, roomy);
    QVERIFY2(read.result.status != tmon::CaptureLoadResult::Unreadable,
             qPrintable(read.result.message));
    QVERIFY(model->threadCount() >= 4);
    // Plain frames (format 1) longer than a window are read by windows; too
    // many in one window are refused, saying so.
    const QString plain = dir_.filePath(QStringLiteral("plain.tmcap"));
    QVERIFY(busycap::writePlainFile(plain, 4, 25'000'000'000ull));
    model = std::make_unique<tmon::SessionModel>();
    read = readCapture(plain, -1, model.get());
    QVERIFY2(read.result.status == tmon::CaptureLoadResult::Complete,
             qPrintable(read.result.message));
    QVERIFY2(read.windowNotice.contains(QLatin1String("showing 10 s of it")),
             qPrintable(read.windowNotice));
    QVERIFY(model->threadCount() >= 4);
    model = std::make_unique<tmon::SessionModel>();
    read = readCapture(plain, -1, model.get(), nullptr, nullptr, tight);
    QCOMPARE(read.result.status, tmon::CaptureLoadResult::Unreadable);
    QVERIFY2(read.result.message.contains(QLatin1String("plain frames fall in one")),
             qPrintable(read.result.message));
  }

  void aDamagedCacheIsIgnoredAndBuiltAgain() {
    const QString cache = path_ + QStringLiteral(".tmsum");
    QFile f(cache);
    QVERIFY(f.exists() && f.open(QIODevice::ReadWrite));
    QVERIFY(f.seek(f.size() / 2));
    QVERIFY(f.write("\x55\xaa", 2) == 2);
    f.close();
    QString error;
    std::unique_ptr<tmui::SessionView> page(openCapture(path_, &error, 30));
    QVERIFY(page);
    tmui::WholeRunStrip *strip = stripOf(page.get());
    QVERIFY(strip->building());
    QVERIFY2(strip->status().contains(QLatin1String("ignored the overview cache")) &&
                 strip->status().contains(QLatin1String("damaged")),
             qPrintable(strip->status()));
    QTRY_VERIFY_WITH_TIMEOUT(!strip->building(), 240000);
    QVERIFY(sameSummary(strip->summary(), fromDetail_));
  }

 private:
  QTemporaryDir dir_;
  QString path_;
  tmon::RunSummary fromDetail_;
};

QTEST_MAIN(TestUiOverview)
#include "test_ui_overview.moc"
