// Base of the session views: redraws from the model when the data or the
// window change, but only while visible (hidden tabs catch up when shown).
// A show only schedules the catch-up: when a page first shows, every docked
// view gets a show event before the dock layout hides the tabs behind the
// raised ones, and those must not rebuild (the sync objects and the matrix
// of thousands of threads once froze the window that way). A docked view
// behind another tab stays "visible" to Qt: the page says when its tab is
// raised (setTabRaised), and a view behind a tab waits like a hidden one.
//
// New data (the model's changed(), up to 20 a second live) refreshes a view
// at most once per kCostFactor times what its last rebuild cost in CPU
// (compute and present), so that no view takes more than about a tenth of
// a core however large the session; a change of the window (a user's seek
// or range) refreshes at once.
#ifndef THREADMON_UI_MODELVIEW_H
#define THREADMON_UI_MODELVIEW_H

#include <QElapsedTimer>
#include <QThread>
#include <QTimer>
#include <QWidget>
#include <any>
#include <functional>
#include <memory>

namespace tmon {
class SessionModel;
struct TimeRange;
}

namespace tmui {

class ViewWindow;

class ModelView : public QWidget {
  Q_OBJECT
 public:
  ModelView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);
  ~ModelView() override;
  // Rebuilds now, visible or not (tests, screenshots).
  void refreshNow();
  // Things shown (threads, LWPs, CPUs, objects, series), pooled or not.
  virtual int rowCount() const = 0;
  static constexpr int kCostFactor = 10;
  // How long the last rebuild took (tests, benchmarks); 0 before the first.
  double lastRebuildMs() const { return lastRebuildMs_; }
  // Its CPU time (a worker's and the GUI thread's), read when presented().
  double lastCostMs() const { return double(lastCostNs_) / 1e6; }
  // The model's framesApplied() when the rebuild now on screen began: what
  // the view shows is at most that new (the live lag, benchmarks).
  uint64_t shownFrames() const { return shownFrames_; }
  // Its dock's tab is raised (QDockWidget::visibilityChanged); ignored when
  // the view is not in a dock.
  void setTabRaised(bool raised);
  // On screen: visible, and not behind another tab.
  bool showing() const;
  // Rebuilds now if on screen and behind, instead of at the event loop's
  // next turn (a new page starts its views' workers before its first paint).
  void catchUp();
  // A rebuild is running on a worker thread (its result not shown yet).
  bool busy() const { return worker_ != nullptr; }
  // Not yet showing the model and window it has now: a rebuild is due or running.
  bool behind() const { return dirty_ || worker_ != nullptr; }
  // Waits for that worker, dropping its result (before the model goes).
  void finishBackgroundWork();
  // Sessions this large (threads, objects or bytes) rebuild their slow
  // views off the GUI thread.
  bool large() const;
  // A seek's next page, computed ahead (docs/benchmarks.md, "Seeking with
  // the views computed ahead"): what the first rebuild of a fresh view of
  // this kind computes for a window of a model, as a function any thread
  // may run on the settled model before the page exists (the seek's reader
  // threads, CaptureLoader), so that the page shows with its data at once.
  // Empty when the view has none.
  using Ahead = std::function<std::any(const tmon::SessionModel &, const tmon::TimeRange &)>;
  virtual Ahead ahead() const { return {}; }
  // What an ahead() gave: the first rebuild presents it instead of
  // computing when its inputs are the same (else it computes as ever);
  // at once when the view is on screen and behind.
  void takeAhead(std::any result);

 signals:
  // A rebuild's result is on screen (after present(), or rebuild() itself).
  void presented();

 protected:
  virtual void rebuild() = 0;
  void showEvent(QShowEvent *event) override;
  // For rebuilds that take long at scale: compute() runs on a worker thread
  // while the model holds its feed (SessionModel::beginBackgroundRead; it
  // may only read the model), then present(result) on the GUI thread. A
  // rebuild asked for meanwhile runs once this one is shown.
  template <typename T>
  void rebuildInBackground(std::function<T()> compute, std::function<void(T &&)> present);
  // The same when large(), else both at once on the GUI thread (small
  // sessions, tests: the view is up to date when rebuild() returns).
  template <typename T>
  void rebuildWith(std::function<T()> compute, std::function<void(T &&)> present) {
    if (large()) rebuildInBackground<T>(std::move(compute), std::move(present));
    else present(compute());
  }
  // A result and the inputs it is for, as an ahead() gives it.
  template <typename Key, typename T>
  struct Prepared {
    Key key;
    T value;
  };
  // rebuildWith, unless a result computed ahead for the same inputs is
  // there to present.
  template <typename Key, typename T>
  void rebuildWith(const Key &key, std::function<T()> compute, std::function<void(T &&)> present) {
    auto *done = std::any_cast<Prepared<Key, T>>(&ahead_);
    if (done && done->key == key) {
      T value = std::move(done->value);
      ahead_.reset();
      present(std::move(value));
      return;
    }
    ahead_.reset();
    rebuildWith<T>(std::move(compute), std::move(present));
  }
  tmon::SessionModel *model() const { return model_; }
  ViewWindow *window() const { return window_; }

 private:
  void refreshIfVisible();
  void onModelChanged();
  void scheduleCatchUp();
  tmon::SessionModel *model_;
  ViewWindow *window_;
  bool dirty_ = true;
  bool catchUpPending_ = false;
  bool tabRaised_ = true;
  QThread *worker_ = nullptr;
  bool again_ = false;  // the window changed while the worker ran
  uint64_t workerSerial_ = 0;
  void workerDone(uint64_t serial);
  void holdModel();  // model_->beginBackgroundRead(), out of line (SessionModel is incomplete here)
  uint64_t framesNow() const;   // model_->framesApplied(), out of line too
  static qint64 threadCpuNs();  // CLOCK_THREAD_CPUTIME_ID
  double lastRebuildMs_ = 0;
  uint64_t shownFrames_ = 0;
  QElapsedTimer sinceRefresh_;  // since the last rebuild began
  qint64 lastCostNs_ = 0;       // its CPU time: the worker's and the GUI thread's
  QTimer *throttle_;
  std::any ahead_;  // takeAhead's, until the first rebuild
};

template <typename T>
void ModelView::rebuildInBackground(std::function<T()> compute,
                                    std::function<void(T &&)> present) {
  if (worker_) {
    again_ = true;
    return;
  }
  holdModel();
  auto result = std::make_shared<T>();
  const uint64_t serial = ++workerSerial_;
  const uint64_t frames = framesNow();
  auto workerCpu = std::make_shared<qint64>(0);
  worker_ = QThread::create([compute, result, workerCpu] {
    *result = compute();
    *workerCpu = threadCpuNs();
  });
  connect(worker_, &QThread::finished, this, [this, serial, present, result, frames, workerCpu] {
    if (serial != workerSerial_ || !worker_) return;  // dropped by finishBackgroundWork
    workerDone(serial);
    QElapsedTimer shown;
    shown.start();
    const qint64 cpu0 = threadCpuNs();
    present(std::move(*result));
    lastRebuildMs_ = double(shown.nsecsElapsed()) / 1e6;  // the part on the GUI thread
    lastCostNs_ = *workerCpu + threadCpuNs() - cpu0;
    shownFrames_ = frames;
    emit presented();
    if (again_) {  // the window changed meanwhile: at once
      again_ = false;
      dirty_ = true;
      refreshIfVisible();
    } else if (dirty_) {  // new data meanwhile: as the cost allows
      onModelChanged();
    }
  });
  worker_->start();
}

}  // namespace tmui

#endif
