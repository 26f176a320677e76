#include "viewwindow.h"

#include <algorithm>

#include "sessionmodel.h"

namespace tmui {

ViewWindow::ViewWindow(const tmon::SessionModel *model, QObject *parent)
    : QObject(parent), model_(model) {}

void ViewWindow::setMode(Mode m) {
  if (m == mode_) return;
  mode_ = m;
  emit changed();
}

void ViewWindow::setRange(const tmon::TimeRange &r) {
  dragged_ = r;
  mode_ = Mode::Range;
  emit changed();
}

void ViewWindow::setPlayhead(int64_t t) {
  if (t == playhead_) return;
  playhead_ = t;
  emit changed();
}

int64_t ViewWindow::now() const {
  const int64_t latest = model_->latestNs();
  return playhead_ >= 0 ? std::min(playhead_, latest) : latest;
}

tmon::TimeRange ViewWindow::range() const {
  const int64_t start = model_->startNs();
  const int64_t end = std::max(now(), start);
  switch (mode_) {
    case Mode::Last1s: return {std::max(start, end - int64_t(1000000000)), end};
    case Mode::Last10s: return {std::max(start, end - int64_t(10000000000)), end};
    case Mode::WholeRun: return {start, end};
    case Mode::Range:
      return {std::clamp(dragged_.t0, start, end), std::clamp(dragged_.t1, start, end)};
  }
  return {start, end};
}

std::function<std::unique_ptr<tmon::SessionModel>()> ViewWindow::olderModel() const {
  const tmon::TimeRange r = range();
  if (!older_ || mode_ != Mode::Range || r.t0 >= model_->detailFromNs()) return {};
  return [load = older_, r]() -> std::unique_ptr<tmon::SessionModel> {
    auto m = std::make_unique<tmon::SessionModel>();
    m->setFilledOffThread(true);  // made and read on the worker: no timers
    if (load(r.t0, r.t1, m.get()).status == tmon::CaptureLoadResult::Unreadable) return nullptr;
    m->settleNow();
    return m;
  };
}

QString ViewWindow::describe() const {
  const tmon::TimeRange r = range();
  const double a = double(r.t0 - model_->startNs()) / 1e9;
  const double b = double(r.t1 - model_->startNs()) / 1e9;
  return tr("%1 s – %2 s").arg(a, 0, 'f', 2).arg(b, 0, 'f', 2);
}

}  // namespace tmui
