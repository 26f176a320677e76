#include "timelineview.h"

#include <QLabel>
#include <QVBoxLayout>

#include "poolcontrols.h"
#include "sessionmodel.h"
#include "statelegend.h"
#include "statepalette.h"
#include "viewwindow.h"

namespace tmui {

namespace {
QStringList stateLabels() {
  QStringList labels;
  for (int s = 0; s < tmon::kFinalStateCount; ++s) labels << stateLabel(tmon::FinalState(s));
  return labels;
}
}  // namespace

TimelineView::TimelineView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent),
      canvas_(new TimelineCanvas(model, window, this)),
      controls_(new PoolControls(stateLabels(), this)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(controls_);
  layout->addWidget(new StateLegend(this));
  layout->addWidget(canvas_, 1);
  auto *hint = new QLabel(tr("Click a pool's name: list its threads · drag: select a window · "
                             "Ctrl+wheel or +/−: zoom · Shift+drag or ←/→: pan · "
                             "0: follow the window"),
                          this);
  hint->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(hint);
  connect(canvas_, &TimelineCanvas::aggregateClicked, this, &TimelineView::toggle);
  connect(canvas_, &TimelineCanvas::spanChanged, this, &TimelineView::remix);
  connect(controls_, &PoolControls::sortChanged, this, &TimelineView::relayout);
  connect(controls_, &PoolControls::filterChanged, this, &TimelineView::refreshNow);
}

void TimelineView::setFilter(const QString &text) { controls_->setFilter(text); }

void TimelineView::setSortCategory(int category) { controls_->setSortCategory(category); }

void TimelineView::toggle(const QString &key) {
  if (!toggled_.remove(key)) toggled_.insert(key);
  relayout();
}

TimelineView::Span TimelineView::span() const {
  return {canvas_->visibleRange(), canvas_->stripWidth()};
}

std::shared_ptr<const TimelineCanvas::Mixes> TimelineView::mix(const tmon::SessionModel &m,
                                                               const tmon::PoolLayout &pools,
                                                               const Span &s) {
  auto mixes = std::make_shared<TimelineCanvas::Mixes>();
  for (const auto &[key, threads] : timelineAggregates(pools))
    mixes->insert(key, tmon::stateMix(m, threads, s.range, s.width));
  return mixes;
}

TimelineView::Computed TimelineView::compute(const tmon::SessionModel &m, const Inputs &in) {
  auto pools = std::make_shared<const tmon::PoolLayout>(
      tmon::poolLayout(tmon::threadPoolItems(m, in.window), in.filter, stateLabels()));
  return Computed{pools, mix(m, *pools, in.span)};
}

ModelView::Ahead TimelineView::ahead() const {
  // A fresh page's timeline follows its window, unfiltered, as wide as this one.
  return [width = canvas_->stripWidth()](const tmon::SessionModel &m, const tmon::TimeRange &r) {
    const Inputs in{r, Span{TimelineCanvas::followed(r), width}, QString()};
    return std::any(Prepared<Inputs, Computed>{in, compute(m, in)});
  };
}

void TimelineView::rebuild() {
  const tmon::SessionModel *m = model();
  const Inputs in{window()->range(), span(), controls_->filter()};
  mixedFor_ = in.span;
  // Pooling 10,000 threads and mixing their intervals are tens of
  // milliseconds: on the worker thread in large sessions.
  rebuildWith<Inputs, Computed>(in, [m, in] { return compute(*m, in); }, [this](Computed &&c) {
    pools_ = std::move(c.pools);
    canvas_->setMixes(std::move(c.mixes));
    relayout();
  });
}

void TimelineView::remix() {
  const Span s = span();
  if (!pools_ || !showing() || s == mixedFor_) return;
  mixedFor_ = s;
  const tmon::SessionModel *m = model();
  rebuildWith<std::shared_ptr<const TimelineCanvas::Mixes>>(
      [m, s, pools = pools_] { return mix(*m, *pools, s); },
      [this](std::shared_ptr<const TimelineCanvas::Mixes> &&mixes) {
        canvas_->setMixes(std::move(mixes));
      });
}

void TimelineView::relayout() {
  if (!pools_) return;
  TimelineLayout laid =
      timelineRows(*pools_, toggled_, controls_->sortCategory(), model()->threadCount());
  shown_ = laid.shown;
  canvas_->setLayout(std::move(laid));
}

}  // namespace tmui
