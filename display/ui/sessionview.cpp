#include "sessionview.h"

#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QPointer>
#include <QTabBar>
#include <QToolBar>
#include <QVBoxLayout>

#include "deadlockbanner.h"
#include "findingsview.h"
#include "names.h"
#include "replaycontrols.h"
#include "runsummary.h"
#include "sessionmodel.h"
#include "syncview.h"
#include "timelinecanvas.h"
#include "timelineview.h"
#include "viewfactory.h"
#include "viewwindow.h"
#include "wholerunstrip.h"

namespace tmui {

SessionView::SessionView(tmon::SessionModel *model, Source source, QWidget *parent)
    : SessionView(model, source, BeforeFilled{}) {
  if (parent) setParent(parent, windowFlags());  // as QMainWindow(parent) makes it
  modelFilled();
}

SessionView::SessionView(tmon::SessionModel *model, Source source, BeforeFilled)
    : QMainWindow(nullptr),
      model_(model),
      window_(new ViewWindow(model, this)),
      source_(source),
      windowBox_(new QComboBox(this)),
      windowLabel_(new QLabel(this)),
      banner_(new QLabel(this)) {
  model_->setParent(this);
  setDockNestingEnabled(true);

  // The one window selector.
  auto *bar = addToolBar(tr("Window"));
  bar->setMovable(false);
  bar->addWidget(new QLabel(tr(" Window: "), this));
  windowBox_->addItem(tr("Last 1 s"), int(ViewWindow::Mode::Last1s));
  windowBox_->addItem(tr("Last 10 s"), int(ViewWindow::Mode::Last10s));
  windowBox_->addItem(tr("Whole run"), int(ViewWindow::Mode::WholeRun));
  windowBox_->addItem(tr("Range dragged in the timeline"), int(ViewWindow::Mode::Range));
  windowBox_->setCurrentIndex(source == Source::Live ? 1 : 2);
  window_->setMode(source == Source::Live ? ViewWindow::Mode::Last10s : ViewWindow::Mode::WholeRun);
  bar->addWidget(windowBox_);
  bar->addWidget(windowLabel_);
  bar->addSeparator();
  if (source == Source::Replay) {
    replay_ = new ReplayControls(model_, window_, this);
    bar->addWidget(replay_);
  } else {
    status_ = new QLabel(this);
    bar->addWidget(status_);
  }

  deadlock_ = new DeadlockBanner(this);
  addViews();
  connect(windowBox_, &QComboBox::currentIndexChanged, this, [this](int i) {
    window_->setMode(ViewWindow::Mode(windowBox_->itemData(i).toInt()));
    timeline_->canvas()->followWindow();
  });
  connect(window_, &ViewWindow::changed, this, [this] {
    const int i = windowBox_->findData(int(window_->mode()));
    if (i != windowBox_->currentIndex()) {
      const QSignalBlocker block(windowBox_);
      windowBox_->setCurrentIndex(i);
    }
    windowLabel_->setText(QStringLiteral("  ") + window_->describe());
  });
  connect(model_, &tmon::SessionModel::changed, this, [this] {
    windowLabel_->setText(QStringLiteral("  ") + window_->describe());
    updateTitleAndBanner();
  });
  connect(sync_, &SyncView::objectSelected, this,
          [this](uint32_t id) { timeline_->canvas()->setHighlightedObject(id); });
  connect(findings_, &FindingsView::showRequested, this, &SessionView::showFinding);
  connect(deadlock_, &DeadlockBanner::showRequested, this, &SessionView::showDeadlock);
  // The alert follows "now": new data, a new cycle (not coalesced) and the playhead.
  auto updateDeadlock = [this] { deadlock_->update(*model_, window_->now()); };
  connect(model_, &tmon::SessionModel::changed, this, updateDeadlock);
  connect(model_, &tmon::SessionModel::deadlockDetected, this, updateDeadlock);
  connect(window_, &ViewWindow::changed, this, updateDeadlock);
}

void SessionView::modelFilled() {
  if (replay_) replay_->syncWidgets();
  deadlock_->update(*model_, window_->now());
  updateTitleAndBanner();
}

SessionView::~SessionView() {
  // A view's worker thread reads the model, which goes first (our child).
  // Views taken out of the page (screenshots, tests) may be gone already.
  for (const QPointer<ModelView> &v : views_)
    if (v) v->finishBackgroundWork();
}

void SessionView::addViews() {
  auto *central = new QWidget(this);
  auto *layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  banner_->setWordWrap(true);
  banner_->setStyleSheet(QStringLiteral(
      "QLabel { background: #fff3cd; color: #5c3c00; border: 1px solid #e0b000; padding: 4px; }"));
  banner_->hide();
  layout->addWidget(deadlock_);
  layout->addWidget(banner_);
  setCentralWidget(central);
  // Each dock area's views tabbed in views.def order, its first raised.
  QDockWidget *first[2] = {nullptr, nullptr};
  for (const tmon::ViewInfo &info : tmon::kViews) {
    ModelView *view = makeView(info.kind, model_, window_);
    views_[size_t(info.kind)] = view;
    if (info.place == tmon::ViewPlace::Center) {
      layout->addWidget(view, 1);
      continue;
    }
    const bool side = info.place == tmon::ViewPlace::Side;
    QDockWidget *dock = addViewDock(view, tr(info.title),
                                    side ? Qt::RightDockWidgetArea : Qt::BottomDockWidgetArea);
    QDockWidget *&lead = first[side ? 0 : 1];
    if (lead) {
      tabifyDockWidget(lead, dock);
      // Behind the lead's tab until its dock says otherwise: no rebuild at the first show.
      view->setTabRaised(false);
    } else {
      lead = dock;
    }
  }
  for (QDockWidget *lead : first)
    if (lead) lead->raise();
  timeline_ = qobject_cast<TimelineView *>(view(ViewKind::Timeline));
  sync_ = qobject_cast<SyncView *>(view(ViewKind::Sync));
  findings_ = qobject_cast<FindingsView *>(view(ViewKind::Findings));
}

QDockWidget *SessionView::addViewDock(ModelView *view, const QString &title,
                                      Qt::DockWidgetArea area) {
  auto *dock = new QDockWidget(title, this);
  dock->setObjectName(title);
  dock->setWidget(view);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(area, dock);
  // Behind another tab the view stays visible to Qt: say when it is raised.
  connect(dock, &QDockWidget::visibilityChanged, view, &ModelView::setTabRaised);
  docks_ << dock;
  return dock;
}

ModelView *SessionView::view(ViewKind kind) const { return views_[size_t(kind)]; }

void SessionView::showView(ViewKind kind) {
  QWidget *w = view(kind);
  for (QDockWidget *d : docks_)
    if (d->widget() == w) {
      d->show();
      d->raise();
    }
}

bool SessionView::isViewRaised(ViewKind kind) const {
  const QWidget *w = view(kind);
  if (w == timeline_) return true;  // the central widget is always there
  for (QDockWidget *d : docks_) {
    if (d->widget() != w) continue;
    if (d->isHidden()) return false;
    if (tabifiedDockWidgets(d).isEmpty()) return true;
    // Tabbed docks: raised when it is the current tab of its group's tab bar.
    for (const QTabBar *bar : findChildren<QTabBar *>())
      for (int i = 0; i < bar->count(); ++i)
        if (bar->tabText(i) == d->windowTitle()) return bar->currentIndex() == i;
  }
  return false;
}

void SessionView::takeAhead(std::vector<std::pair<ViewKind, std::any>> computed) {
  for (auto &[kind, result] : computed)
    if (ModelView *v = view(kind)) v->takeAhead(std::move(result));
}

void SessionView::selectSpan(int64_t t0, int64_t t1) {
  // Only a span inside the window narrows it: a finding about the whole
  // window keeps the selector as it is.
  const tmon::TimeRange r = window_->range();
  if (t1 <= t0 || (t0 <= r.t0 && t1 >= r.t1)) return;
  window_->setRange({t0, t1});
  timeline_->canvas()->followWindow();
}

void SessionView::showFinding(const tmon::Finding &f) {
  if (f.kind == tmon::FindingKind::Deadlock) selectSpan(f.t0, f.t1 > f.t0 ? f.t1 : window_->now());
  else selectSpan(f.t0, f.t1);
  showView(tmon::findingInfo(f.kind).view);
  if (!f.objects.empty()) {
    sync_->refreshNow();
    sync_->selectObject(f.objects.front());  // also outlines its waits in the timeline
  }
}

void SessionView::showDeadlock(const tmon::Deadlock &d) {
  selectSpan(d.formedNs, d.live() ? window_->now() : d.resolvedNs);
  showView(ViewKind::Sync);
  if (!d.objects.empty()) {
    sync_->refreshNow();
    sync_->selectObject(d.objects.front());
  }
}

void SessionView::setNotice(const QString &text) {
  banner_->setText(text);
  banner_->setVisible(!text.isEmpty());
  showingSessionNotes_ = false;
}

QString SessionView::notice() const { return banner_->text(); }

WholeRunStrip *SessionView::setWholeRun(std::shared_ptr<const tmon::RunSummary> summary,
                                        tmon::TimeRange window) {
  auto *layout = static_cast<QVBoxLayout *>(centralWidget()->layout());
  const int64_t start = summary->startNs();
  shownEndS_ = double(window.t1 - start) / 1e9;
  auto *strip = new WholeRunStrip(std::move(summary), window);
  strip->setObjectName(QStringLiteral("wholeRun"));
  strip->onSeek([this, start](int64_t endNs) { emit seekRequested(double(endNs - start) / 1e9); });
  layout->insertWidget(layout->indexOf(banner_) + 1, strip);
  return strip;
}

void SessionView::setStatus(const QString &text) {
  if (status_) status_->setText(text);
}

QString SessionView::title() const {
  const tmon::SessionInfo &info = model_->info();
  QString exe = info.exe.section('/', -1);
  if (exe.isEmpty()) exe = tr("session");
  QString t = QStringLiteral("%1 [%2]").arg(exe).arg(info.pid);
  if (info.parentPid) t += tr(" child of %1").arg(info.parentPid);
  // Sessions from several hosts side by side: each says where it runs.
  if (!info.host.isEmpty()) t += tr(" on %1").arg(info.host);
  if (model_->hasError()) t += tr(" (error)");
  else if (source_ == Source::Live && info.ended) t += tr(" (ended)");
  return t;
}

// Where the probe kept less detail than asked, and the threads that lost
// it, longest first: "" when none did.
static QString detailLostNote(const tmon::SessionModel &m) {
  const tmon::DetailLosses &spans = m.info().detailLost;
  if (spans.empty()) return QString();
  const int64_t end = m.latestNs();
  std::vector<std::pair<int64_t, QString>> lost;
  for (int i = 0; i < m.threadCount(); i++) {
    const tmon::ThreadInfo &t = m.thread(i);
    int64_t ns = tmon::detailLostNs(spans, t.startNs, t.endNs >= 0 ? std::min(t.endNs, end) : end);
    if (ns > 0) lost.emplace_back(ns, QStringLiteral("%1 (%2)").arg(t.name).arg(t.tid));
  }
  if (lost.empty()) return QString();
  std::stable_sort(lost.begin(), lost.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  QStringList named;
  for (size_t k = 0; k < lost.size() && k < 4; k++)
    named << QStringLiteral("%1 %2 s")
                 .arg(lost[k].second)
                 .arg(double(lost[k].first) / 1e9, 0, 'f', 2);
  if (lost.size() > 4) named << QObject::tr("%1 more").arg(lost.size() - 4);
  return QObject::tr("detail lost by %1 threads (switch records paused or ticks slowed): %2")
      .arg(lost.size())
      .arg(named.join(QStringLiteral(", ")));
}

void SessionView::updateTitleAndBanner() {
  // What the app says (damaged capture, closed connection) stays; the
  // probe's own notes (a source unavailable, switch records stopped) show
  // when nothing else does.
  const bool free = banner_->text().isEmpty() || showingSessionNotes_;
  QStringList notes = collapseNotices(model_->info().notices);
  if (QString lost = detailLostNote(*model_); !lost.isEmpty()) notes << lost;
  const QStringList &damage = model_->info().inputWarnings;
  if (model_->hasError() && free) {
    setNotice(tr("Session stopped: %1").arg(model_->errorText()));
  } else if (!damage.isEmpty() && free) {
    // Before the probe's notes: what the display shows is missing this.
    setNotice(tr("Damaged input: %1").arg(damage.join(QStringLiteral(" · "))));
    showingSessionNotes_ = true;
  } else if (!model_->info().acquisitionsKnown() && free) {
    // Read from outside (attach): say why counts show as dashes, first.
    QStringList parts{tr("Read from outside the process: acquisitions, hold times and uncontended "
                         "calls are unknown (–)")};
    setNotice((parts + notes).join(QStringLiteral(" · ")));
    showingSessionNotes_ = true;
  } else if (!notes.isEmpty() && free) {
    setNotice(tr("Probe: %1").arg(notes.join(QStringLiteral(" · "))));
    showingSessionNotes_ = true;
  }
  emit titleChanged();
}

}  // namespace tmui
