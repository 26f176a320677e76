#include "barchartview.h"

#include <QVBoxLayout>
#include <algorithm>

#include "poolcontrols.h"
#include "viewwindow.h"

namespace tmui {

namespace {
// Categories named in a pool's spread: the largest that vary by this much.
constexpr double kSpreadShown = 0.05;
constexpr int kSpreadNamed = 2;
}  // namespace

tmon::PoolItem poolItem(const tmon::ThreadInfo &t, int index, const BarRow &row) {
  tmon::PoolItem it;
  it.index = index;
  it.id = t.tid;
  it.name = t.name;
  it.routine = t.startRoutine;
  it.alone = t.main || t.probe;
  it.values = row.values;
  it.total = row.total;
  return it;
}

BarChartView::BarChartView(tmon::SessionModel *model, ViewWindow *window, Spec spec,
                           QWidget *parent)
    : ModelView(model, window, parent), chart_(new StackedBarChart(this)), spec_(std::move(spec)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  if (spec_.pooled) {
    QStringList labels;
    for (const BarCategory &c : spec_.categories) labels << c.label;
    controls_ = new PoolControls(labels, this);
    layout->addWidget(controls_);
    connect(controls_, &PoolControls::filterChanged, this, &BarChartView::relayout);
    connect(controls_, &PoolControls::sortChanged, this, &BarChartView::relayout);
    connect(chart_, &StackedBarChart::rowClicked, this, &BarChartView::toggleRow);
  }
  layout->addWidget(chart_, 1);
  chart_->setCategories(spec_.categories);
  chart_->setEmptyText(spec_.emptyText);
}

void BarChartView::setFilter(const QString &text) {
  if (controls_) controls_->setFilter(text);
}

void BarChartView::setSortCategory(int category) {
  if (controls_) controls_->setSortCategory(category);
}

void BarChartView::toggleRow(int row) {
  if (row < 0 || size_t(row) >= rowPool_.size() || rowPool_[size_t(row)].isEmpty()) return;
  const QString &key = rowPool_[size_t(row)];
  if (!toggled_.remove(key)) toggled_.insert(key);
  relayout();
}

BarChartView::Query BarChartView::query() const {
  return {controls_ ? controls_->filter() : QString(), controls_ ? controls_->sortCategory() : -1,
          toggled_};
}

BarChartView::Result BarChartView::compute(const tmon::SessionModel &m, const tmon::TimeRange &r,
                                           const Query &q, const Spec &spec) {
  auto bars = std::make_shared<const std::vector<ItemBar>>(spec.items(m, r));
  Laid laid = layOut(*bars, q, spec);
  return std::make_pair(std::move(bars), std::move(laid));
}

ModelView::Ahead BarChartView::ahead() const {
  // A fresh view: unfiltered, in creation order, no pool clicked.
  return [spec = spec_](const tmon::SessionModel &m, const tmon::TimeRange &r) {
    const Query q{QString(), -1, {}};
    return std::any(Prepared<Inputs, Result>{{{r.t0, r.t1}, q}, compute(m, r, q, spec)});
  };
}

void BarChartView::rebuild() {
  const tmon::TimeRange r = window()->range();
  const QString described = window()->describe();
  const tmon::SessionModel *m = model();
  auto present = [this, described](Result &&result) {
    bars_ = std::move(result.first);
    described_ = described;
    showLaid(std::move(result.second));
  };
  // The pools too are laid out on the worker thread: 10,000 threads are
  // tens of milliseconds of it.
  const Query q = query();
  rebuildWith<Inputs, Result>({{r.t0, r.t1}, q},
                              [spec = spec_, q, m, r] { return compute(*m, r, q, spec); }, present);
}

void BarChartView::relayout() {
  if (bars_) showLaid(layOut(*bars_, query(), spec_));
}

void BarChartView::showLaid(Laid &&laid) {
  itemsShown_ = laid.shown;
  rowPool_ = std::move(laid.rowPool);
  QString t = tr("%1, %2").arg(spec_.heading, described_);
  if (spec_.noun.isEmpty()) chart_->setTitle(t);
  else if (!laid.pools) chart_->setTitle(tr("%1 (%2 %3)").arg(t).arg(laid.shown).arg(spec_.noun));
  else
    chart_->setTitle(tr("%1 (%2 %3, %4 %5)")
                         .arg(t)
                         .arg(laid.shown)
                         .arg(spec_.noun)
                         .arg(laid.pools)
                         .arg(laid.pools == 1 ? tr("pool") : tr("pools")));
  chart_->setRows(std::move(laid.rows));
}

namespace {

// The spread of a pool's typical members or outliers: the categories that
// vary most, as ranges.
QString spread(const tmon::PoolStats &pool, const std::vector<BarCategory> &cats) {
  std::vector<size_t> varying;
  for (size_t c = 0; c < pool.low.size(); ++c)
    if (pool.high[c] - pool.low[c] >= kSpreadShown) varying.push_back(c);
  std::stable_sort(varying.begin(), varying.end(),
                   [&](size_t a, size_t b) { return pool.share(a) > pool.share(b); });
  QStringList parts;
  for (size_t k = 0; k < varying.size() && k < size_t(kSpreadNamed); ++k) {
    const size_t c = varying[k];
    parts << BarChartView::tr("%1 %2–%3 %")
                 .arg(cats[c].label)
                 .arg(100 * pool.low[c], 0, 'f', 0)
                 .arg(100 * pool.high[c], 0, 'f', 0);
  }
  if (parts.isEmpty())
    return BarChartView::tr("all alike (within %1 points)").arg(100 * kSpreadShown, 0, 'f', 0);
  return BarChartView::tr("spread: %1").arg(parts.join(QStringLiteral(", ")));
}

// A pool's aggregate row, or its outliers' (`outliers`).
BarRow aggregateRow(const tmon::Pool &pool, bool outliers, bool open,
                    const std::vector<BarCategory> &cats) {
  const tmon::PoolStats &st = outliers ? pool.outlying : pool.typical;
  BarRow row;
  row.label = (open ? QStringLiteral("▾ ") : QStringLiteral("▸ ")) +
              (outliers ? BarChartView::tr("outliers of %1").arg(pool.label()) : pool.label());
  row.marked = true;
  row.markText = outliers ? BarChartView::tr("%1 outliers").arg(pool.outliers.size())
                          : BarChartView::tr("pool of %1").arg(pool.size());
  QStringList detail;
  if (outliers) {
    row.indent = 1;
  } else {
    if (!pool.routine.isEmpty() && pool.routineName() != pool.label()) detail << pool.routineName();
    if (!pool.outliers.empty())
      detail << BarChartView::tr("%1 alike, %2 unlike the rest below")
                    .arg(pool.members.size())
                    .arg(pool.outliers.size());
  }
  detail << (open ? BarChartView::tr("click to fold") : BarChartView::tr("click to list them"));
  row.detail = detail.join(QStringLiteral(" · "));
  row.note = spread(st, cats);
  row.values = st.values;
  row.total = st.total;
  return row;
}

}  // namespace

BarChartView::Laid BarChartView::layOut(const std::vector<ItemBar> &bars, const Query &q,
                                        const Spec &spec) {
  Laid laid;
  if (!spec.pooled) {
    for (const ItemBar &b : bars) laid.rows.push_back(b.row);
    laid.shown = int(laid.rows.size());
    laid.rowPool.assign(laid.rows.size(), QString());
    return laid;
  }
  QStringList labels;
  for (const BarCategory &c : spec.categories) labels << c.label;
  std::vector<tmon::PoolItem> all;
  all.reserve(bars.size());
  for (const ItemBar &b : bars) all.push_back(b.item);
  const tmon::PoolLayout pooled = tmon::poolLayout(all, q.filter, labels);
  const std::vector<tmon::PoolItem> &items = pooled.items;
  const std::vector<tmon::Pool> &pools = pooled.pools;
  laid.shown = pooled.shown;
  laid.pools = pooled.grouped;
  const QSet<QString> expanded = tmon::unfoldedPools(pooled, q.toggled);
  const std::vector<tmon::PoolRow> order = tmon::poolRows(items, pools, expanded, q.sort);
  laid.rows.reserve(order.size());
  for (const tmon::PoolRow &pr : order) {
    const tmon::Pool &pool = pools[size_t(pr.pool)];
    if (pr.item >= 0) {
      BarRow row = bars[pooled.source[size_t(pr.item)]].row;
      if (pr.kind == tmon::PoolRow::Kind::Member) row.indent = 1;
      if (pr.kind == tmon::PoolRow::Kind::Outlier) {
        row.indent = pool.outliers.size() > tmon::kOutliersListed ? 2 : 1;
        if (!row.marked) {
          row.marked = true;
          row.markText = tr("outlier");
        }
      }
      laid.rows.push_back(std::move(row));
      laid.rowPool.push_back(QString());
      continue;
    }
    const bool outliers = pr.kind == tmon::PoolRow::Kind::Outliers;
    const QString key = outliers ? pool.outliersKey() : pool.key();
    laid.rows.push_back(aggregateRow(pool, outliers, expanded.contains(key), spec.categories));
    laid.rowPool.push_back(key);
  }
  return laid;
}

}  // namespace tmui
