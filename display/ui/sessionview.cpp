#include "sessionview.h"

#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QToolBar>
#include <QVBoxLayout>

#include "chartsview.h"
#include "cpusview.h"
#include "lwpsview.h"
#include "replaycontrols.h"
#include "sessionmodel.h"
#include "syncview.h"
#include "threadsview.h"
#include "timelinecanvas.h"
#include "timelineview.h"
#include "viewwindow.h"

namespace tmui {

namespace {
struct ViewName {
  ViewKind kind;
  const char *name;
};
constexpr ViewName kViewNames[] = {{ViewKind::Threads, "threads"}, {ViewKind::Lwps, "lwps"},
                                   {ViewKind::Cpus, "cpus"},       {ViewKind::Timeline, "timeline"},
                                   {ViewKind::Sync, "sync"},       {ViewKind::Charts, "charts"}};
}  // namespace

bool parseViewKind(const QString &name, ViewKind *out) {
  for (const ViewName &v : kViewNames)
    if (name == QLatin1String(v.name)) {
      *out = v.kind;
      return true;
    }
  return false;
}

QString viewKindName(ViewKind kind) {
  for (const ViewName &v : kViewNames)
    if (v.kind == kind) return QString::fromLatin1(v.name);
  return QString();
}

SessionView::SessionView(tmon::SessionModel *model, Source source, QWidget *parent)
    : QMainWindow(parent),
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

  // The views.
  threads_ = new ThreadsView(model_, window_);
  lwps_ = new LwpsView(model_, window_);
  cpus_ = new CpusView(model_, window_);
  timeline_ = new TimelineView(model_, window_);
  sync_ = new SyncView(model_, window_);
  charts_ = new ChartsView(model_, window_);
  auto *central = new QWidget(this);
  auto *layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  banner_->setWordWrap(true);
  banner_->setStyleSheet(QStringLiteral(
      "QLabel { background: #fff3cd; color: #5c3c00; border: 1px solid #e0b000; padding: 4px; }"));
  banner_->hide();
  layout->addWidget(banner_);
  layout->addWidget(timeline_, 1);
  setCentralWidget(central);
  QDockWidget *threadsDock = addViewDock(threads_, tr("Threads"), Qt::RightDockWidgetArea);
  tabifyDockWidget(threadsDock, addViewDock(lwps_, tr("LWPs"), Qt::RightDockWidgetArea));
  tabifyDockWidget(threadsDock, addViewDock(cpus_, tr("CPUs"), Qt::RightDockWidgetArea));
  tabifyDockWidget(threadsDock, addViewDock(charts_, tr("Charts"), Qt::RightDockWidgetArea));
  threadsDock->raise();
  addViewDock(sync_, tr("Sync objects"), Qt::BottomDockWidgetArea);

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
  updateTitleAndBanner();
}

QDockWidget *SessionView::addViewDock(ModelView *view, const QString &title,
                                      Qt::DockWidgetArea area) {
  auto *dock = new QDockWidget(title, this);
  dock->setObjectName(title);
  dock->setWidget(view);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(area, dock);
  docks_ << dock;
  return dock;
}

ModelView *SessionView::view(ViewKind kind) const {
  switch (kind) {
    case ViewKind::Threads: return threads_;
    case ViewKind::Lwps: return lwps_;
    case ViewKind::Cpus: return cpus_;
    case ViewKind::Timeline: return timeline_;
    case ViewKind::Sync: return sync_;
    case ViewKind::Charts: return charts_;
  }
  return nullptr;
}

void SessionView::showView(ViewKind kind) {
  QWidget *w = view(kind);
  for (QDockWidget *d : docks_)
    if (d->widget() == w) {
      d->show();
      d->raise();
    }
}

void SessionView::setNotice(const QString &text) {
  banner_->setText(text);
  banner_->setVisible(!text.isEmpty());
}

QString SessionView::notice() const { return banner_->text(); }

void SessionView::setStatus(const QString &text) {
  if (status_) status_->setText(text);
}

QString SessionView::title() const {
  const tmon::SessionInfo &info = model_->info();
  QString exe = info.exe.section('/', -1);
  if (exe.isEmpty()) exe = tr("session");
  QString t = QStringLiteral("%1 [%2]").arg(exe).arg(info.pid);
  if (info.parentPid) t += tr(" child of %1").arg(info.parentPid);
  if (model_->hasError()) t += tr(" (error)");
  else if (source_ == Source::Live && info.ended) t += tr(" (ended)");
  return t;
}

void SessionView::updateTitleAndBanner() {
  if (model_->hasError() && banner_->text().isEmpty())
    setNotice(tr("Session stopped: %1").arg(model_->errorText()));
  emit titleChanged();
}

}  // namespace tmui
