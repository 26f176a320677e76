#include "barchartview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QVBoxLayout>
#include <algorithm>

#include "viewwindow.h"

namespace tmui {

namespace {
// Pools start expanded while every item fits on about a screen.
constexpr size_t kExpandedUpTo = 40;
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
    auto *bar = new QHBoxLayout;
    bar->setContentsMargins(4, 4, 4, 0);
    filter_ = new QLineEdit(this);
    filter_->setPlaceholderText(tr("Filter: name, tid, start routine or state (e.g. mutex)"));
    filter_->setClearButtonEnabled(true);
    sort_ = new QComboBox(this);
    sort_->addItem(tr("Sort: first started"), -1);
    for (size_t c = 0; c < spec_.categories.size(); ++c)
      sort_->addItem(tr("Sort: most %1").arg(spec_.categories[c].label), int(c));
    bar->addWidget(filter_, 1);
    bar->addWidget(sort_);
    layout->addLayout(bar);
    connect(filter_, &QLineEdit::textChanged, this, &BarChartView::layoutRows);
    connect(sort_, &QComboBox::currentIndexChanged, this, &BarChartView::layoutRows);
    connect(chart_, &StackedBarChart::rowClicked, this, &BarChartView::toggleRow);
  }
  layout->addWidget(chart_, 1);
  chart_->setCategories(spec_.categories);
  chart_->setEmptyText(spec_.emptyText);
}

void BarChartView::setFilter(const QString &text) {
  if (filter_) filter_->setText(text);
}

void BarChartView::setSortCategory(int category) {
  if (sort_) sort_->setCurrentIndex(sort_->findData(category));
}

void BarChartView::toggleRow(int row) {
  if (row < 0 || size_t(row) >= rowPool_.size() || rowPool_[size_t(row)].isEmpty()) return;
  const QString &key = rowPool_[size_t(row)];
  if (!toggled_.remove(key)) toggled_.insert(key);
  layoutRows();
}

void BarChartView::rebuild() {
  const tmon::TimeRange r = window()->range();
  const QString described = window()->describe();
  const tmon::SessionModel *m = model();
  auto compute = [items = spec_.items, m, r] { return items(*m, r); };
  auto present = [this, described](std::vector<ItemBar> &&bars) {
    bars_ = std::move(bars);
    described_ = described;
    layoutRows();
  };
  // Thousands of threads: the model's sums run off the GUI thread.
  rebuildWith<std::vector<ItemBar>>(compute, present);
}

QString BarChartView::describe(const tmon::PoolStats &pool) const {
  // The categories that vary most across the typical members, as ranges.
  std::vector<size_t> varying;
  for (size_t c = 0; c < pool.low.size(); ++c)
    if (pool.high[c] - pool.low[c] >= kSpreadShown) varying.push_back(c);
  std::stable_sort(varying.begin(), varying.end(),
                   [&](size_t a, size_t b) { return pool.share(a) > pool.share(b); });
  QStringList parts;
  for (size_t k = 0; k < varying.size() && k < size_t(kSpreadNamed); ++k) {
    const size_t c = varying[k];
    parts << tr("%1 %2–%3 %")
                 .arg(spec_.categories[c].label)
                 .arg(100 * pool.low[c], 0, 'f', 0)
                 .arg(100 * pool.high[c], 0, 'f', 0);
  }
  if (parts.isEmpty()) return tr("all alike (within %1 points)").arg(100 * kSpreadShown, 0, 'f', 0);
  return tr("spread: %1").arg(parts.join(QStringLiteral(", ")));
}

QString BarChartView::title(int pools) const {
  QString t = tr("%1, %2").arg(spec_.heading, described_);
  if (spec_.noun.isEmpty()) return t;
  if (!pools) return tr("%1 (%2 %3)").arg(t).arg(itemsShown_).arg(spec_.noun);
  return tr("%1 (%2 %3, %4 pools)").arg(t).arg(itemsShown_).arg(spec_.noun).arg(pools);
}

void BarChartView::layoutRows() {
  std::vector<BarRow> rows;
  rowPool_.clear();
  if (!spec_.pooled) {
    for (const ItemBar &b : bars_) rows.push_back(b.row);
    itemsShown_ = int(rows.size());
    rowPool_.assign(rows.size(), QString());
    chart_->setTitle(title(0));
    chart_->setRows(std::move(rows));
    return;
  }
  QStringList labels;
  for (const BarCategory &c : spec_.categories) labels << c.label;
  std::vector<tmon::PoolItem> items;
  std::vector<size_t> barOf;  // item position -> bars_ position
  for (size_t i = 0; i < bars_.size(); ++i)
    if (tmon::itemMatches(bars_[i].item, filter_->text(), labels)) {
      items.push_back(bars_[i].item);
      barOf.push_back(i);
    }
  const std::vector<tmon::Pool> pools = tmon::poolItems(items);
  const bool open = items.size() <= kExpandedUpTo;
  QSet<QString> expanded;
  int grouped = 0;
  itemsShown_ = 0;
  for (const tmon::Pool &p : pools) {
    itemsShown_ += p.size();
    if (!p.grouped()) continue;
    ++grouped;
    for (const QString &key : {p.key(), p.outliersKey()})
      if (open != toggled_.contains(key)) expanded.insert(key);
  }
  const std::vector<tmon::PoolRow> order =
      tmon::poolRows(items, pools, expanded, sort_->currentData().toInt());
  rows.reserve(order.size());
  for (const tmon::PoolRow &pr : order) {
    const tmon::Pool &pool = pools[size_t(pr.pool)];
    if (pr.item >= 0) {
      BarRow row = bars_[barOf[size_t(pr.item)]].row;
      if (pr.kind == tmon::PoolRow::Kind::Member) row.indent = 1;
      if (pr.kind == tmon::PoolRow::Kind::Outlier) row.indent = pool.outliers.size() > tmon::kOutliersListed ? 2 : 1;
      if (pr.kind == tmon::PoolRow::Kind::Outlier && !row.marked) {
        row.marked = true;
        row.markText = tr("outlier");
      }
      rows.push_back(std::move(row));
      rowPool_.push_back(QString());
      continue;
    }
    const bool outliers = pr.kind == tmon::PoolRow::Kind::Outliers;
    const QString key = outliers ? pool.outliersKey() : pool.key();
    const bool isOpen = expanded.contains(key);
    const tmon::PoolStats &st = outliers ? pool.outlying : pool.typical;
    BarRow row;
    row.label = (isOpen ? QStringLiteral("▾ ") : QStringLiteral("▸ ")) +
                (outliers ? tr("outliers of %1").arg(pool.label()) : pool.label());
    row.marked = true;
    row.markText = outliers ? tr("%1 outliers").arg(pool.outliers.size())
                            : tr("pool of %1").arg(pool.size());
    QStringList detail;
    if (outliers) {
      row.indent = 1;
    } else {
      if (!pool.routine.isEmpty() && pool.routineName() != pool.label()) detail << pool.routineName();
      if (!pool.outliers.empty())
        detail << tr("%1 alike, %2 unlike the rest below").arg(pool.members.size()).arg(pool.outliers.size());
    }
    detail << (isOpen ? tr("click to fold") : tr("click to list them"));
    row.detail = detail.join(QStringLiteral(" · "));
    row.note = describe(st);
    row.values = st.values;
    row.total = st.total;
    rows.push_back(std::move(row));
    rowPool_.push_back(key);
  }
  chart_->setTitle(title(grouped));
  chart_->setRows(std::move(rows));
}

}  // namespace tmui
