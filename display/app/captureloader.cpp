#include "captureloader.h"

#include <QThread>
#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "seeksteps.h"
#include "sessionmodel.h"
#include "sessionview.h"

CaptureLoader::CaptureLoader(const QString &path, double atSeconds, QObject *parent,
                             std::vector<Ahead> aheads, std::shared_ptr<KeptIndex> kept)
    : QObject(parent),
      path_(path),
      overview_(OverviewBuild::of(path)),
      model_(new tmon::SessionModel),
      filling_(model_.get()),
      kept_(std::move(kept)),
      aheads_(std::move(aheads)) {
  // The model stays on this thread; the reader only fills it, timers off,
  // and its signals blocked: the page made meanwhile connects to them, and
  // nothing was connected to them when the page was made after the read.
  model_->setFilledOffThread(true);
  model_->blockSignals(true);
  tmon::SessionModel *model = model_.get();
  if (overview_) known_ = overview_->identity();
  const tmon::CaptureIdentity *known = overview_ ? &known_ : nullptr;
  thread_ = QThread::create([this, path, atSeconds, model, known] {
    read_ = readCapture(path, atSeconds, model, known, &stop_, CaptureBounds{}, kept_);
    if (stop_ || aheads_.empty() || read_.result.status == tmon::CaptureLoadResult::Unreadable ||
        read_.shown.length() == 0)
      return;
    // The page is made on the GUI thread while its views' results are
    // computed here: the model only read meanwhile, by both.
    model->beginBackgroundRead();
    held_ = true;
    QMetaObject::invokeMethod(this, &CaptureLoader::makePage, Qt::QueuedConnection);
    SeekStep step("aheads");
    computeAhead(*model, read_.shown);
  });
  thread_->setObjectName(QStringLiteral("capture reader"));
  connect(thread_, &QThread::finished, this, &CaptureLoader::onThreadFinished);
  thread_->start();
  // After what called this has returned, and after the page it replaces is
  // gone (makeWidgetsAfter).
  QMetaObject::invokeMethod(
      this,
      [this] {
        if (!after_) makeWidgets();
      },
      Qt::QueuedConnection);
}

void CaptureLoader::makeWidgetsAfter(QObject *gone) {
  after_ = gone;
  connect(gone, &QObject::destroyed, this, &CaptureLoader::makeWidgets, Qt::QueuedConnection);
}

CaptureLoader::~CaptureLoader() {
  if (thread_) {
    thread_->wait();
    delete thread_;
  }
  page_.reset();  // made, never given: after the thread that read its model
  widgets_.reset();
}

void CaptureLoader::computeAhead(const tmon::SessionModel &model, const tmon::TimeRange &window) {
  // On two threads, the costliest first, each thread taking the next view
  // when done with its last: a view's cost is known only once it has been
  // rebuilt on its page (lastCostMs 0 when it showed what was computed
  // ahead, or still computes), and a split by unknown costs put the
  // Timeline and Findings on one thread (the first seek after the open:
  // 38 ms of CPU on one thread instead of 21).
  std::stable_sort(aheads_.begin(), aheads_.end(),
                   [](const Ahead &a, const Ahead &b) { return a.costMs > b.costMs; });
  std::vector<std::any> results(aheads_.size());
  std::vector<size_t> todo;
  KeptIndex *kept = read_.index.get();
  for (size_t i = 0; i < aheads_.size(); i++) {
    // A window read before (a seek back): as computed then.
    if (kept && kept->computedFor(window, aheads_[i].kind, &results[i])) continue;
    todo.push_back(i);
  }
  std::atomic<size_t> next{0};
  auto run = [&] {
    // The views on one thread share its threads' states over the window
    // (Findings' program threads, the Threads view's and the Timeline's
    // pools): each derived once (with the CPU times: not for one view, but
    // which thread runs two is known only as they run).
    std::optional<tmon::SessionModel::StatesMemo> memo;
    if (todo.size() > 2) memo.emplace(model, window);
    for (size_t k; !stop_ && (k = next.fetch_add(1)) < todo.size();) {
      const size_t i = todo[k];
      SeekStep step(tmon::viewKindName(aheads_[i].kind));
      results[i] = aheads_[i].compute(model, window);
    }
  };
  std::thread second;
  if (todo.size() > 1) second = std::thread(run);
  run();
  if (second.joinable()) second.join();
  for (size_t i = 0; i < aheads_.size(); i++) {
    if (!results[i].has_value()) continue;
    if (kept) kept->keepComputed(window, aheads_[i].kind, results[i]);
    computed_.emplace_back(aheads_[i].kind, std::move(results[i]));
  }
  aheads_.clear();
}

bool CaptureLoader::running() const { return thread_ && thread_->isRunning(); }

void CaptureLoader::abandon() {
  abandoned_ = true;
  stop_ = true;
  if (!running()) deleteLater();
}

void CaptureLoader::makeWidgets() {
  if (abandoned_ || page_ || widgets_ || !model_) return;
  SeekStep step("page widgets");
  using tmui::SessionView;
  widgets_.reset(
      new SessionView(model_.release(), SessionView::Source::Replay, SessionView::BeforeFilled{}));
}

void CaptureLoader::makePage() {
  // Once: a page not made took its model too.
  if (abandoned_ || page_ || (!model_ && !widgets_)) return;
  filling_->setFilledOffThread(false);
  filling_->blockSignals(false);
  SeekStep step("page made");
  page_.reset(widgets_ ? finishPage(path_, widgets_.release(), read_, &error_)
                       : pageForCapture(path_, model_.release(), read_, &error_));
}

void CaptureLoader::onThreadFinished() {
  delete thread_;
  thread_ = nullptr;
  if (held_) filling_->endBackgroundRead();
  if (!abandoned_) {
    makePage();
    emit finished(page_.release(), error_);
  }
  deleteLater();
}
