#include "timelinerows.h"

#include <QCoreApplication>
#include <QLocale>

namespace tmui {

namespace {

QString tr(const char *text) { return QCoreApplication::translate("TimelineRows", text); }

std::vector<int> modelIndices(const tmon::PoolLayout &l, const std::vector<int> &items) {
  std::vector<int> out;
  out.reserve(items.size());
  for (int m : items) out.push_back(l.items[size_t(m)].index);
  return out;
}

}  // namespace

std::vector<std::pair<QString, std::vector<int>>> timelineAggregates(const tmon::PoolLayout &l) {
  std::vector<std::pair<QString, std::vector<int>>> out;
  for (const tmon::Pool &p : l.pools) {
    if (!p.grouped()) continue;
    out.emplace_back(p.key(), modelIndices(l, p.members));
    if (p.outliers.size() > tmon::kOutliersListed)
      out.emplace_back(p.outliersKey(), modelIndices(l, p.outliers));
  }
  return out;
}

TimelineLayout timelineRows(const tmon::PoolLayout &l, const QSet<QString> &toggled, int sort,
                            int threadCount) {
  TimelineLayout out;
  out.shown = l.shown;
  out.pools = l.grouped;
  out.rowOfThread.assign(size_t(std::max(0, threadCount)), -1);
  const QSet<QString> unfolded = tmon::unfoldedPools(l, toggled);
  const QLocale locale;
  auto ownRow = [&](int t) -> int * {
    return t >= 0 && t < threadCount ? &out.rowOfThread[size_t(t)] : nullptr;
  };
  auto count = [&](const std::vector<tmon::PoolRow> &rows) {
    out.fitThreads = out.fitAggregates = 0;
    for (const tmon::PoolRow &pr : rows) (pr.item >= 0 ? out.fitThreads : out.fitAggregates) += 1;
  };
  const std::vector<tmon::PoolRow> order = tmon::poolRows(l.items, l.pools, unfolded, sort);
  count(toggled.isEmpty()
            ? order
            : tmon::poolRows(l.items, l.pools, tmon::unfoldedPools(l, {}), sort));
  for (const tmon::PoolRow &pr : order) {
    const tmon::Pool &pool = l.pools[size_t(pr.pool)];
    const int at = int(out.rows.size());
    TimelineRow row;
    if (pr.item >= 0) {
      row.thread = l.items[size_t(pr.item)].index;
      row.outlier = pr.kind == tmon::PoolRow::Kind::Outlier;
      row.indent = pr.kind == tmon::PoolRow::Kind::Single ? 0
                   : row.outlier && pool.outliers.size() > tmon::kOutliersListed ? 2 : 1;
      out.rows.push_back(std::move(row));
      continue;
    }
    const bool outliers = pr.kind == tmon::PoolRow::Kind::Outliers;
    row.kind = outliers ? TimelineRow::Kind::Outliers : TimelineRow::Kind::Pool;
    row.key = outliers ? pool.outliersKey() : pool.key();
    row.open = unfolded.contains(row.key);
    row.indent = outliers ? 1 : 0;
    const std::vector<int> &items = outliers ? pool.outliers : pool.members;
    row.threads = modelIndices(l, items);
    if (!outliers) row.outliers = int(pool.outliers.size());
    row.label = outliers ? tr("outliers of %1").arg(pool.label()) : pool.label();
    // As the Threads view's badge: "pool of 1,499 · 15 outliers", else its routine.
    QStringList detail;
    if (outliers) detail << tr("%1 unlike the rest").arg(locale.toString(qlonglong(items.size())));
    else detail << tr("pool of %1").arg(locale.toString(pool.size()));
    if (!outliers && !pool.outliers.empty())
      detail << tr("%1 outliers").arg(locale.toString(qlonglong(pool.outliers.size())));
    else if (!outliers && !pool.routine.isEmpty() && pool.routineName() != pool.label())
      detail << pool.routineName();
    row.detail = detail.join(QStringLiteral(" · "));
    // A folded thread stands in its aggregate's row (the highlighted
    // object's waits are outlined there).
    for (int t : row.threads)
      if (int *r = ownRow(t)) *r = at;
    out.rows.push_back(std::move(row));
  }
  // A thread shown on its own (unfolded, or one of a few outliers) is there.
  for (size_t r = 0; r < out.rows.size(); ++r)
    if (int *own = out.rows[r].aggregate() ? nullptr : ownRow(out.rows[r].thread)) *own = int(r);
  return out;
}

}  // namespace tmui
