#include "waitmatrixtable.h"

#include <QHeaderView>
#include <algorithm>
#include <map>

#include "names.h"
#include "sessionmodel.h"

namespace tmui {

namespace {
// Threads ordered by the wait they account for, most first.
std::vector<uint32_t> byTotal(const std::map<uint32_t, uint64_t> &totals) {
  std::vector<std::pair<uint32_t, uint64_t>> v(totals.begin(), totals.end());
  std::stable_sort(v.begin(), v.end(), [](const auto &a, const auto &b) { return a.second > b.second; });
  std::vector<uint32_t> out;
  for (const auto &p : v) out.push_back(p.first);
  return out;
}
}  // namespace

WaitMatrixTable::WaitMatrixTable(QWidget *parent) : QTableWidget(parent) {
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionMode(QAbstractItemView::NoSelection);
  horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  setCornerButtonEnabled(false);
}

void WaitMatrixTable::setPairs(const tmon::SessionModel &model,
                               const std::vector<tmon::WaitPair> &pairs) {
  std::map<uint32_t, uint64_t> waiters, holders;
  uint64_t top = 1;
  for (const tmon::WaitPair &p : pairs) {
    waiters[p.waiter] += p.waitNs;
    holders[p.holder] += p.waitNs;
    top = std::max(top, p.waitNs);
  }
  const std::vector<uint32_t> rows = byTotal(waiters), cols = byTotal(holders);
  clear();
  setRowCount(int(rows.size()));
  setColumnCount(int(cols.size()));
  QStringList rowNames, colNames;
  for (uint32_t t : rows) rowNames << tr("%1 waited").arg(threadLabel(model, t));
  for (uint32_t t : cols) colNames << tr("for %1").arg(threadLabel(model, t));
  setVerticalHeaderLabels(rowNames);
  setHorizontalHeaderLabels(colNames);
  cells_ = 0;
  for (const tmon::WaitPair &p : pairs) {
    const int r = int(std::find(rows.begin(), rows.end(), p.waiter) - rows.begin());
    const int c = int(std::find(cols.begin(), cols.end(), p.holder) - cols.begin());
    auto *item = new QTableWidgetItem(QStringLiteral("%1 (%2×)").arg(formatNs(p.waitNs)).arg(p.count));
    item->setTextAlignment(Qt::AlignCenter);
    // Heat: white to red by the share of the largest cell.
    const double heat = double(p.waitNs) / double(top);
    item->setBackground(QColor::fromRgbF(1.0, 1.0 - 0.65 * heat, 1.0 - 0.7 * heat));
    item->setToolTip(tr("%1 waited %2 times, %3 in all, for %4")
                         .arg(threadLabel(model, p.waiter))
                         .arg(p.count)
                         .arg(formatNs(p.waitNs))
                         .arg(threadLabel(model, p.holder)));
    setItem(r, c, item);
    ++cells_;
  }
}

}  // namespace tmui
