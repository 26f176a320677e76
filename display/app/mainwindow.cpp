#include "mainwindow.h"

#include <fcntl.h>
#include <unistd.h>

#include <QAction>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPointer>
#include <QProcess>
#include <QSocketNotifier>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>
#include <cerrno>

#include "captureloader.h"
#include "captureopen.h"
#include "capturetree.h"
#include "comparepages.h"
#include "exportaction.h"
#include "livesession.h"
#include "muxreader.h"
#include "probeconnection.h"
#include "probelistener.h"
#include "seeksteps.h"
#include "seekstill.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "sshdialog.h"
#include "treepage.h"

namespace {
// The property of a ProbeConnection that names the ssh relay it came through.
constexpr char kRelayProperty[] = "threadmonSshRelay";
// Set on a relay the display stopped itself: its exit is no failure to show.
constexpr char kStoppingProperty[] = "threadmonStopping";

// The live session a tab shows, or null (a capture, the Start page).
LiveSession *liveOf(QWidget *tab) {
  auto *page = qobject_cast<tmui::SessionView *>(tab);
  return page ? page->findChild<LiveSession *>(QString(), Qt::FindDirectChildrenOnly) : nullptr;
}

// The ssh relay (a QProcess) a live tab's session came through, or null.
QProcess *relayOf(QWidget *tab) {
  LiveSession *live = liveOf(tab);
  if (!live) return nullptr;
  const QVariant tag = live->connection()->property(kRelayProperty);
  return qobject_cast<QProcess *>(tag.value<QPointer<QObject>>().data());
}

}  // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent),
      tabs_(new QTabWidget(this)),
      welcome_(new QWidget(this)),
      welcomeText_(new QLabel(welcome_)),
      listenLabel_(new QLabel(this)) {
  setWindowTitle(tr("threadmon"));
  setAcceptDrops(true);
  resize(1400, 900);
  tabs_->setTabsClosable(true);
  tabs_->setDocumentMode(true);
  auto *wl = new QVBoxLayout(welcome_);
  welcomeText_->setAlignment(Qt::AlignCenter);
  welcomeText_->setTextFormat(Qt::RichText);
  wl->addWidget(welcomeText_);
  tabs_->addTab(welcome_, tr("Start"));
  setCentralWidget(tabs_);
  statusBar()->addPermanentWidget(listenLabel_);

  QMenu *file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open capture…"), QKeySequence::Open, this, &MainWindow::chooseCapture);
  file->addAction(tr("Watch over &SSH…"), this, &MainWindow::chooseSsh);
  recordAction_ = file->addAction(tr("&Record session…"), QKeySequence(tr("Ctrl+R")), this,
                                  &MainWindow::recordCurrent);
  saveLastAction_ = file->addAction(tr("Save &last…"), QKeySequence(tr("Ctrl+L")), this,
                                    &MainWindow::saveLastCurrent);
  file->addAction(tr("&Export…"), QKeySequence(tr("Ctrl+E")), this, [this] {
    exportPageInteractively(this, qobject_cast<tmui::SessionView *>(tabs_->currentWidget()));
  });
  file->addAction(tr("Co&mpare with…"), this, [this] { compareInteractively(this, tabs_); });
  file->addAction(tr("&Close tab"), QKeySequence::Close, this,
                  [this] { closeTab(tabs_->currentIndex()); });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  connect(tabs_, &QTabWidget::tabCloseRequested, this, &MainWindow::closeTab);
  connect(tabs_, &QTabWidget::currentChanged, this, &MainWindow::updateActions);
  updateActions();
}

QString MainWindow::listen(const tmnet::ListenAddress &addr, const QByteArray &token) {
  listener_ = new tmnet::ProbeListener(token, this);
  const QString err = listener_->listen(addr);
  if (!err.isEmpty()) return err;
  connect(listener_, &tmnet::ProbeListener::sessionAccepted, this, &MainWindow::onSessionAccepted);
  connect(listener_, &tmnet::ProbeListener::sessionRefused, this, &MainWindow::onSessionRefused);
  const QString where = listener_->addressText();
  listenLabel_->setText(tr("Listening on %1%2").arg(where, token.isEmpty() ? QString()
                                                                           : tr(" (token required)")));
  welcomeText_->setText(
      tr("<h2>threadmon</h2><p>Listening for probes on <b>%1</b>.</p>"
         "<p>Run a program under the probe:<br><code>threadmon run --connect %1 -- ./program</code><br>"
         "or <code>LD_PRELOAD=libthreadmon.so THREADMON_CONNECT=%1 ./program</code></p>"
         "<p>Each process (and each forked child) opens its own tab.<br>"
         "Or open a capture with File ▸ Open, or drop a <code>.tmcap</code> file here.</p>")
          .arg(where.toHtmlEscaped()));
  return QString();
}

void MainWindow::addSession(tmui::SessionView *page) {
  const int i = tabs_->addTab(page, page->title());
  followTitle(page);
  tabs_->setCurrentIndex(i);
}

void MainWindow::followTitle(tmui::SessionView *page) {
  tabs_->setTabToolTip(tabs_->indexOf(page), page->windowFilePath());
  connect(page, &tmui::SessionView::titleChanged, this, [this, page] {
    const int at = tabs_->indexOf(page);
    if (at >= 0) tabs_->setTabText(at, page->title());
  });
}

void MainWindow::openCaptureFile(const QString &path, double atSeconds,
                                 std::function<void(tmui::SessionView *)> opened) {
  if (tmon::CaptureTree::isTree(path)) {
    // A process tree: its processes in a tab, the program's own capture in another.
    tmon::CaptureTree tree;
    if (!tree.open(path)) {
      QMessageBox::warning(this, tr("Cannot open capture"), tree.error());
      return;
    }
    QWidget *processes = makeTreePage(tree, path, [this](const QString &c) { openCaptureFile(c); });
    const int i = tabs_->addTab(processes, tr("%1: processes").arg(QFileInfo(path).fileName()));
    tabs_->setTabToolTip(i, path);
    tabs_->setCurrentIndex(i);
    const QString root = tree.captureFor(tree.rootPid());
    if (!root.isEmpty()) openCaptureFile(root, atSeconds, opened);
    return;
  }
  auto *reading = new QLabel(tr("Reading %1…").arg(QFileInfo(path).fileName()));
  reading->setAlignment(Qt::AlignCenter);
  const int i = tabs_->addTab(reading, QFileInfo(path).fileName());
  tabs_->setTabToolTip(i, path);
  tabs_->setCurrentIndex(i);
  auto *loader = new CaptureLoader(path, atSeconds, this);
  QPointer<QLabel> tab(reading);
  connect(loader, &CaptureLoader::finished, this,
          [this, tab, path, opened, loader](tmui::SessionView *page, const QString &error) {
            if (!tab) {  // closed while it was read
              delete page;
              return;
            }
            const int at = tabs_->indexOf(tab);
            if (!page) {
              closeTab(at);
              statusBar()->showMessage(error, 10000);
              QMessageBox::warning(this, tr("Cannot open capture"), error);
              return;
            }
            replaceTab(at, page);
            followSeeks(page, path, loader->index());
            if (opened) opened(page);
          });
}

void MainWindow::replaceTab(int index, tmui::SessionView *page) {
  putInTab(index, page, page->title());
  followTitle(page);
}

void MainWindow::putInTab(int index, QWidget *widget, const QString &title) {
  const bool current = tabs_->currentIndex() == index;
  QWidget *old = tabs_->widget(index);
  const QString tip = tabs_->tabToolTip(index);
  tabs_->insertTab(index, widget, title);
  tabs_->setTabToolTip(index, tip);
  if (current) tabs_->setCurrentIndex(index);
  tabs_->removeTab(tabs_->indexOf(old));
  old->deleteLater();
}

// A tab's seeks from one page on: the read under way, the still that holds
// the tab meanwhile, and the window to go back to if the read fails.
struct MainWindow::Seek {
  QPointer<CaptureLoader> loader;
  QPointer<SeekStill> still;
  double backSeconds = -1;
  // The views raised on the page left: raised again on the next. (Not its
  // whole saveState: restored docks resize the strip, which then repaints
  // the whole run instead of taking the shared drawing.)
  std::vector<tmon::ViewKind> raised;
  // What the views on screen will show first on the next page, computed
  // on the read's threads (the next page shows with its data at once).
  std::vector<CaptureLoader::Ahead> aheads;
  std::shared_ptr<KeptIndex> index;  // the capture's, from one read to the next
  QPointer<QWidget> leaving;         // the page the still replaced, deleted later
};

void MainWindow::followSeeks(tmui::SessionView *page, const QString &path,
                             std::shared_ptr<KeptIndex> index) {
  // A long capture shows a window of it: a click on its whole run reads
  // another. The page goes at once, a still picture of it holding the tab,
  // so that two windows are never held together; the new page replaces the
  // still when it is read. The read starts after the still, not beside it:
  // begun before the grab it held 30-45 MiB more at the peak (the hour,
  // docs/benchmarks.md "The display's seek").
  auto seek = std::make_shared<Seek>();
  seek->index = std::move(index);
  connect(page, &tmui::SessionView::seekRequested, this,
          [this, page, path, seek](double endSeconds) {
            if (!seek->still) {
              const int at = tabs_->indexOf(page);
              if (at < 0) return;
              seek->backSeconds = page->shownEndSeconds();
              seek->raised.clear();
              for (const tmon::ViewInfo &info : tmon::kViews)
                if (page->isViewRaised(info.kind)) seek->raised.push_back(info.kind);
              seek->aheads.clear();
              for (const tmon::ViewInfo &info : tmon::kViews) {
                const tmui::ModelView *view = page->view(info.kind);
                if (!view || !view->showing()) continue;
                if (tmui::ModelView::Ahead ahead = view->ahead())
                  seek->aheads.push_back({info.kind, std::move(ahead), view->lastCostMs()});
              }
              SeekStep step("still");
              seek->still = new SeekStill(SeekStill::pictureOf(page), page->title());
              putInTab(at, seek->still, page->title());
              seek->leaving = page;
            }
            readWindow(seek, path, endSeconds, false);
          });
}

void MainWindow::readWindow(const std::shared_ptr<Seek> &seek, const QString &path,
                            double endSeconds, bool goingBack) {
  // A newer click abandons the read still running.
  if (seek->loader) seek->loader->abandon();
  const QString reading = tr("Reading the window ending at %1 s…").arg(endSeconds, 0, 'f', 1);
  seek->still->setText(reading);
  statusBar()->showMessage(reading);
  auto *loader = new CaptureLoader(path, endSeconds, this, seek->aheads, seek->index);
  if (seek->leaving) loader->makeWidgetsAfter(seek->leaving);
  seek->loader = loader;
  connect(loader, &CaptureLoader::finished, this,
          [this, seek, path, goingBack, loader](tmui::SessionView *next, const QString &error) {
            statusBar()->clearMessage();
            const int at = seek->still ? tabs_->indexOf(seek->still) : -1;
            if (at < 0) {  // the tab was closed
              delete next;
              return;
            }
            if (!next) {  // unreadable now: the window that was shown, if it still reads
              statusBar()->showMessage(error, 10000);
              if (goingBack)
                seek->still->setText(error);
              else
                readWindow(seek, path, seek->backSeconds, true);
              return;
            }
            SeekStep step("page in tab");
            replaceTab(at, next);
            for (tmon::ViewKind kind : seek->raised) next->showView(kind);
            next->takeAhead(loader->takeComputed());  // before its first paint
            step.done();
            followSeeks(next, path, loader->index());
          });
}

void MainWindow::onSessionAccepted(tmnet::ProbeConnection *connection) {
  // The log says which probes got in, as it says which were refused.
  qInfo("threadmon-display: accepted %s: pid %u (%s)", qPrintable(connection->peer()),
        connection->pid(), qPrintable(connection->exe()));
  closeOldestEndedSession();
  auto *live = new LiveSession(connection, flight_);
  addSession(live->page());
  statusBar()->showMessage(tr("Probe connected from %1 (pid %2)")
                               .arg(connection->peer())
                               .arg(connection->pid()),
                           5000);
}

void MainWindow::closeOldestEndedSession() {
  int ended = 0;
  int oldest = -1;
  for (int i = 0; i < tabs_->count(); ++i) {
    LiveSession *live = liveOf(tabs_->widget(i));
    const auto state = live ? live->connection()->state() : tmnet::ProbeConnection::State::Streaming;
    if (state != tmnet::ProbeConnection::State::Ended &&
        state != tmnet::ProbeConnection::State::Failed)
      continue;
    ++ended;
    if (oldest < 0 && i != tabs_->currentIndex()) oldest = i;
  }
  if (ended < kMaxEndedSessions || oldest < 0) return;
  qInfo("threadmon-display: closed the oldest ended session (%s) to keep at most %d",
        qPrintable(tabs_->tabText(oldest)), kMaxEndedSessions);
  closeTab(oldest);
}

void MainWindow::watchMux(tmnet::MuxReader *reader) {
  connect(reader, &tmnet::MuxReader::sessionAccepted, this, &MainWindow::onSessionAccepted);
  connect(reader, &tmnet::MuxReader::ended, this,
          [this](const QString &how) { statusBar()->showMessage(how, 30000); });
}

void MainWindow::readStdin() {
  auto *reader = new tmnet::MuxReader(tr("standard input"), this);
  watchMux(reader);
  welcomeText_->setText(
      tr("<h2>threadmon</h2><p>Showing the sessions threadmon relays over ssh: each process "
         "opens its own tab.</p>"));
  ::fcntl(0, F_SETFL, ::fcntl(0, F_GETFL) | O_NONBLOCK);
  auto *notifier = new QSocketNotifier(0, QSocketNotifier::Read, this);
  connect(notifier, &QSocketNotifier::activated, this, [reader, notifier] {
    char buf[65536];
    for (int i = 0; i < 16; ++i) {  // then back to the event loop
      const ssize_t n = ::read(0, buf, sizeof buf);
      if (n > 0) {
        reader->consume(QByteArray(buf, int(n)));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      notifier->setEnabled(false);
      reader->finish();
      return;
    }
  });
}

void MainWindow::watchOverSsh(const QString &host, const QStringList &target) {
  auto *relay = new QProcess(this);
  relay->setObjectName(host);
  auto *reader = new tmnet::MuxReader(tr("ssh %1").arg(host), relay);
  // Tagged before watchMux's slot makes the tab: closing the last tab of
  // this relay stops what it runs on the host (closeTab).
  connect(reader, &tmnet::MuxReader::sessionAccepted, relay,
          [relay](tmnet::ProbeConnection *connection) {
            connection->setProperty(kRelayProperty, QVariant::fromValue(QPointer<QObject>(relay)));
          });
  watchMux(reader);
  connect(relay, &QProcess::readyReadStandardOutput, reader,
          [relay, reader] { reader->consume(relay->readAllStandardOutput()); });
  connect(relay, &QProcess::finished, this, [this, relay, reader, host] {
    reader->consume(relay->readAllStandardOutput());
    if (!reader->finished()) reader->finish();
    const QString said = QString::fromUtf8(relay->readAllStandardError()).trimmed();
    const QString last = said.section('\n', -1);
    const bool stoppedHere = relay->property(kStoppingProperty).toBool();
    if (!stoppedHere && relay->exitCode() != 0 && last.startsWith(QLatin1String("threadmon: ")))
      QMessageBox::warning(this, tr("Watch over SSH: %1").arg(host), last);
    relay->deleteLater();
  });
  statusBar()->showMessage(tr("Connecting to %1 through ssh…").arg(host), 10000);
  relay->start(threadmonLauncher(),
               QStringList{QStringLiteral("relay-ssh"), QStringLiteral("--ssh"), host} + target);
}

void MainWindow::chooseSsh() {
  SshDialog dialog(threadmonLauncher(), this);
  if (dialog.exec() != QDialog::Accepted) return;
  watchOverSsh(dialog.host(), dialog.target());
}

void MainWindow::onSessionRefused(const QString &peer, const QString &reason) {
  statusBar()->showMessage(tr("Refused probe from %1: %2").arg(peer, reason), 15000);
}

void MainWindow::chooseCapture() {
  const QStringList files = QFileDialog::getOpenFileNames(
      this, tr("Open capture"), QString(), tr("threadmon captures (*.tmcap);;All files (*)"));
  for (const QString &f : files) openCaptureFile(f);
}

LiveSession *MainWindow::currentLive() const {
  return liveOf(tabs_->currentWidget());
}

void MainWindow::recordCurrent() {
  LiveSession *live = currentLive();
  if (!live) return;
  if (live->recording()) {
    live->stopRecording();
    updateActions();
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Record session"),
                                                    QStringLiteral("session.tmcap"),
                                                    tr("threadmon captures (*.tmcap)"));
  if (path.isEmpty()) return;
  const QString err = live->startRecording(path);
  if (!err.isEmpty()) QMessageBox::warning(this, tr("Cannot record"), err);
  updateActions();
}

void MainWindow::saveLastCurrent() {
  LiveSession *live = currentLive();
  if (!live || !live->flightWindowNs()) return;
  const QString path = QFileDialog::getSaveFileName(
      this, saveLastAction_->text().remove(QLatin1Char('&')).remove(QStringLiteral("…")),
      QStringLiteral("last.tmcap"), tr("threadmon captures (*.tmcap)"));
  if (path.isEmpty()) return;
  const QString err = live->saveLast(path);
  if (!err.isEmpty())
    QMessageBox::warning(this, tr("Cannot save"), err);
  else
    statusBar()->showMessage(
        tr("Saved the last %1 s to %2").arg(double(live->flightWindowNs()) / 1e9).arg(path), 10000);
}

void MainWindow::closeTab(int index) {
  QWidget *w = tabs_->widget(index);
  if (!w || w == welcome_) return;
  QProcess *relay = relayOf(w);
  tabs_->removeTab(index);
  w->deleteLater();
  if (!relay || relay->state() == QProcess::NotRunning) return;
  for (int i = 0; i < tabs_->count(); ++i)
    if (relayOf(tabs_->widget(i)) == relay) return;  // another process of it is still shown
  // Nobody watches it any more: the relay's SIGTERM becomes the remote
  // side's stop line, a Ctrl-C there (the program ends, or attach detaches),
  // as closing `threadmon run --display --ssh`'s window does.
  relay->setProperty(kStoppingProperty, true);
  relay->terminate();
  statusBar()->showMessage(
      tr("Closed the last tab of ssh %1: stopping it there").arg(relay->objectName()), 10000);
}

void MainWindow::updateActions() {
  LiveSession *live = currentLive();
  recordAction_->setEnabled(live != nullptr && !live->flightWindowNs());
  saveLastAction_->setEnabled(live != nullptr && live->flightWindowNs() != 0);
  saveLastAction_->setText(live && live->flightWindowNs()
                               ? tr("Save &last %1 s…").arg(double(live->flightWindowNs()) / 1e9)
                               : tr("Save &last…"));
  recordAction_->setText(live && live->recording() ? tr("Stop &recording")
                                                   : tr("&Record session…"));
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *event) {
  for (const QUrl &url : event->mimeData()->urls())
    if (url.isLocalFile()) openCaptureFile(url.toLocalFile());
  event->acceptProposedAction();
}
