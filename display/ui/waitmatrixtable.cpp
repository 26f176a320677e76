#include "waitmatrixtable.h"

#include <QAbstractTableModel>
#include <QHeaderView>
#include <algorithm>
#include <unordered_map>

#include "names.h"
#include "sessionmodel.h"

namespace tmui {

namespace {
struct Cell {
  uint64_t waitNs = 0, count = 0;
};

// Threads ordered by the wait they account for, most first (ties by tid, so
// the order is stable from one refresh to the next).
std::vector<uint32_t> byTotal(const std::unordered_map<uint32_t, uint64_t> &totals) {
  std::vector<std::pair<uint32_t, uint64_t>> v(totals.begin(), totals.end());
  std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<uint32_t> out;
  out.reserve(v.size());
  for (const auto &p : v) out.push_back(p.first);
  return out;
}
}  // namespace

// At most kMaxThreads + 1 rows and columns, whatever the pairs.
class WaitMatrixModel : public QAbstractTableModel {
 public:
  using QAbstractTableModel::QAbstractTableModel;

  void setPairs(const tmon::SessionModel &model, const std::vector<tmon::WaitPair> &pairs) {
    beginResetModel();
    std::unordered_map<uint32_t, uint64_t> waiters, holders;
    for (const tmon::WaitPair &p : pairs) {
      waiters[p.waiter] += p.waitNs;
      holders[p.holder] += p.waitNs;
    }
    const std::vector<uint32_t> rows = byTotal(waiters), cols = byTotal(holders);
    waiterCount_ = int(rows.size());
    holderCount_ = int(cols.size());
    const int shownRows = std::min<int>(waiterCount_, WaitMatrixTable::kMaxThreads);
    const int shownCols = std::min<int>(holderCount_, WaitMatrixTable::kMaxThreads);
    otherRows_ = waiterCount_ - shownRows;
    otherCols_ = holderCount_ - shownCols;
    // Index of each thread's row / column; the others share the last one.
    std::unordered_map<uint32_t, int> rowOf, colOf;
    for (int i = 0; i < waiterCount_; ++i) rowOf[rows[size_t(i)]] = std::min(i, shownRows);
    for (int i = 0; i < holderCount_; ++i) colOf[cols[size_t(i)]] = std::min(i, shownCols);
    nRows_ = shownRows + (otherRows_ ? 1 : 0);
    nCols_ = shownCols + (otherCols_ ? 1 : 0);
    rowTids_.assign(rows.begin(), rows.begin() + shownRows);
    colTids_.assign(cols.begin(), cols.begin() + shownCols);
    cells_.assign(size_t(nRows_) * size_t(nCols_), Cell());
    for (const tmon::WaitPair &p : pairs) {
      Cell &c = cells_[size_t(rowOf[p.waiter]) * size_t(nCols_) + size_t(colOf[p.holder])];
      c.waitNs += p.waitNs;
      c.count += p.count;
    }
    top_ = 1;
    for (const Cell &c : cells_) top_ = std::max(top_, c.waitNs);
    rowNames_.clear();
    colNames_.clear();
    for (uint32_t t : rowTids_) rowNames_ << WaitMatrixTable::tr("%1 waited").arg(threadLabel(model, t));
    if (otherRows_) rowNames_ << WaitMatrixTable::tr("%n other thread(s) waited", nullptr, otherRows_);
    for (uint32_t t : colTids_) colNames_ << WaitMatrixTable::tr("for %1").arg(threadLabel(model, t));
    if (otherCols_) colNames_ << WaitMatrixTable::tr("for %n other(s)", nullptr, otherCols_);
    endResetModel();
  }

  int rowCount(const QModelIndex &parent = QModelIndex()) const override {
    return parent.isValid() ? 0 : nRows_;
  }
  int columnCount(const QModelIndex &parent = QModelIndex()) const override {
    return parent.isValid() ? 0 : nCols_;
  }

  QVariant data(const QModelIndex &index, int role) const override {
    if (!index.isValid()) return {};
    const Cell &c = cells_[size_t(index.row()) * size_t(nCols_) + size_t(index.column())];
    if (c.count == 0 && c.waitNs == 0) return {};
    switch (role) {
      case Qt::DisplayRole: return QStringLiteral("%1 (%2×)").arg(formatNs(c.waitNs)).arg(c.count);
      case Qt::TextAlignmentRole: return int(Qt::AlignCenter);
      case Qt::BackgroundRole: {
        // Heat: white to red by the share of the largest cell.
        const double heat = double(c.waitNs) / double(top_);
        return QColor::fromRgbF(1.0, 1.0 - 0.65 * heat, 1.0 - 0.7 * heat);
      }
      case Qt::ForegroundRole: return QColor(Qt::black);
      case Qt::ToolTipRole:
        return WaitMatrixTable::tr("%1, %2 waits, %3 in all, %4")
            .arg(rowNames_.value(index.row()))
            .arg(c.count)
            .arg(formatNs(c.waitNs))
            .arg(colNames_.value(index.column()));
      default: return {};
    }
  }

  QVariant headerData(int section, Qt::Orientation o, int role) const override {
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    return o == Qt::Horizontal ? colNames_.value(section) : rowNames_.value(section);
  }

  int waiterCount_ = 0, holderCount_ = 0, otherRows_ = 0, otherCols_ = 0;

 private:
  int nRows_ = 0, nCols_ = 0;
  std::vector<uint32_t> rowTids_, colTids_;
  std::vector<Cell> cells_;
  QStringList rowNames_, colNames_;
  uint64_t top_ = 1;
};

WaitMatrixTable::WaitMatrixTable(QWidget *parent)
    : QTableView(parent), model_(new WaitMatrixModel(this)) {
  setModel(model_);
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionMode(QAbstractItemView::NoSelection);
  setCornerButtonEnabled(false);
  setWordWrap(false);
  // No ResizeToContents: it re-measures every cell on every change. Columns
  // are fitted once per refresh instead (at most kMaxThreads + 1 of them).
  horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
}

void WaitMatrixTable::setPairs(const tmon::SessionModel &model,
                               const std::vector<tmon::WaitPair> &pairs) {
  model_->setPairs(model, pairs);
  cells_ = int(pairs.size());
  resizeColumnsToContents();
}

int WaitMatrixTable::waiterCount() const { return model_->waiterCount_; }
int WaitMatrixTable::holderCount() const { return model_->holderCount_; }
int WaitMatrixTable::otherWaiters() const { return model_->otherRows_; }
int WaitMatrixTable::otherHolders() const { return model_->otherCols_; }

}  // namespace tmui
