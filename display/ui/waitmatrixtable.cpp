#include "waitmatrixtable.h"

#include <QAbstractTableModel>
#include <QHeaderView>
#include <algorithm>
#include <unordered_map>

#include "names.h"
#include "sessionmodel.h"

namespace tmui {

namespace {
// Threads ordered by the wait someone is known to have caused them (or they
// caused), most first; then by the wait for nobody known; ties by tid, so the
// order is stable from one refresh to the next.
struct Totals {
  uint64_t known = 0, unknown = 0;
};
std::vector<uint32_t> byTotal(const std::unordered_map<uint32_t, Totals> &totals) {
  std::vector<std::pair<uint32_t, Totals>> v(totals.begin(), totals.end());
  std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
    if (a.second.known != b.second.known) return a.second.known > b.second.known;
    if (a.second.unknown != b.second.unknown) return a.second.unknown > b.second.unknown;
    return a.first < b.first;
  });
  std::vector<uint32_t> out;
  out.reserve(v.size());
  for (const auto &p : v) out.push_back(p.first);
  return out;
}
}  // namespace

BoundedMatrix boundMatrix(const std::vector<tmon::WaitPair> &pairs,
                          const std::function<QString(uint32_t)> &name) {
  BoundedMatrix b;
  std::unordered_map<uint32_t, Totals> waiters, holders;
  bool anyUnknown = false;
  for (const tmon::WaitPair &p : pairs) {
    if (p.holder == 0) {
      waiters[p.waiter].unknown += p.waitNs;
      anyUnknown = true;
    } else {
      waiters[p.waiter].known += p.waitNs;
      holders[p.holder].known += p.waitNs;
    }
  }
  const std::vector<uint32_t> rows = byTotal(waiters), cols = byTotal(holders);
  // Columns: the holders that caused most, the others, then nobody known.
  const int colBudget = kMatrixMaxThreads - (anyUnknown ? 1 : 0);
  const int shownRows = std::min<int>(int(rows.size()), kMatrixMaxThreads);
  const int shownCols = std::min<int>(int(cols.size()), colBudget);
  b.otherRows = int(rows.size()) - shownRows;
  b.otherCols = int(cols.size()) - shownCols;
  // Index of each thread's row / column; the others share one after them.
  std::unordered_map<uint32_t, int> rowOf, colOf;
  for (int i = 0; i < int(rows.size()); ++i) rowOf[rows[size_t(i)]] = std::min(i, shownRows);
  for (int i = 0; i < int(cols.size()); ++i) colOf[cols[size_t(i)]] = std::min(i, shownCols);
  b.rows = shownRows + (b.otherRows ? 1 : 0);
  b.cols = shownCols + (b.otherCols ? 1 : 0);
  if (anyUnknown) {
    b.unknownCol = b.cols++;
    colOf[0] = b.unknownCol;
  }
  b.rowTids.assign(rows.begin(), rows.begin() + shownRows);
  b.colTids.assign(cols.begin(), cols.begin() + shownCols);
  b.cells.assign(size_t(b.rows) * size_t(b.cols), BoundedMatrix::Cell());
  for (const tmon::WaitPair &p : pairs) {
    BoundedMatrix::Cell &c = b.cells[size_t(rowOf[p.waiter]) * size_t(b.cols) + size_t(colOf[p.holder])];
    c.waitNs += p.waitNs;
    c.count += p.count;
  }
  b.pairs = int(pairs.size());
  for (uint32_t t : b.rowTids) b.rowNames << WaitMatrixTable::tr("%1 waited").arg(name(t));
  if (b.otherRows) b.rowNames << WaitMatrixTable::tr("%n other(s) waited", nullptr, b.otherRows);
  for (uint32_t t : b.colTids) b.colNames << WaitMatrixTable::tr("for %1").arg(name(t));
  if (b.otherCols) b.colNames << WaitMatrixTable::tr("for %n other(s)", nullptr, b.otherCols);
  if (anyUnknown) b.colNames << WaitMatrixTable::tr("for nobody known");
  return b;
}

// At most kMaxThreads + 1 rows and columns, whatever the pairs.
class WaitMatrixModel : public QAbstractTableModel {
 public:
  using QAbstractTableModel::QAbstractTableModel;

  void setMatrix(BoundedMatrix &&m) {
    beginResetModel();
    m_ = std::move(m);
    top_ = topUnknown_ = 1;
    for (size_t i = 0; i < m_.cells.size(); ++i) {
      uint64_t &top = int(i % size_t(m_.cols)) == m_.unknownCol ? topUnknown_ : top_;
      top = std::max(top, m_.cells[i].waitNs);
    }
    endResetModel();
  }
  const BoundedMatrix &matrix() const { return m_; }

  int rowCount(const QModelIndex &parent = QModelIndex()) const override {
    return parent.isValid() ? 0 : m_.rows;
  }
  int columnCount(const QModelIndex &parent = QModelIndex()) const override {
    return parent.isValid() ? 0 : m_.cols;
  }

  QVariant data(const QModelIndex &index, int role) const override {
    if (!index.isValid()) return {};
    const BoundedMatrix::Cell &c = m_.cells[size_t(index.row()) * size_t(m_.cols) + size_t(index.column())];
    if (c.count == 0 && c.waitNs == 0) return {};
    switch (role) {
      case Qt::DisplayRole: return QStringLiteral("%1 (%2×)").arg(formatNs(c.waitNs)).arg(c.count);
      case Qt::TextAlignmentRole: return int(Qt::AlignCenter);
      case Qt::BackgroundRole: {
        // Heat: white to red by the share of the largest cell someone caused;
        // the waits of nobody known white to grey on a scale of their own.
        if (index.column() == m_.unknownCol) {
          const double heat = double(c.waitNs) / double(topUnknown_);
          return QColor::fromRgbF(1.0 - 0.25 * heat, 1.0 - 0.25 * heat, 1.0 - 0.25 * heat);
        }
        const double heat = double(c.waitNs) / double(top_);
        return QColor::fromRgbF(1.0, 1.0 - 0.65 * heat, 1.0 - 0.7 * heat);
      }
      case Qt::ForegroundRole: return QColor(Qt::black);
      case Qt::ToolTipRole: {
        const QString cell = WaitMatrixTable::tr("%1, %2 waits, %3 in all, %4")
                                 .arg(m_.rowNames.value(index.row()))
                                 .arg(c.count)
                                 .arg(formatNs(c.waitNs))
                                 .arg(m_.colNames.value(index.column()));
        return index.column() == m_.unknownCol ? cell + QStringLiteral("\n") + unknownMeaning()
                                               : cell;
      }
      default: return {};
    }
  }

  QVariant headerData(int section, Qt::Orientation o, int role) const override {
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    if (o == Qt::Horizontal && role == Qt::ToolTipRole && section == m_.unknownCol)
      return unknownMeaning();
    return o == Qt::Horizontal ? m_.colNames.value(section) : m_.rowNames.value(section);
  }

  static QString unknownMeaning() {
    return WaitMatrixTable::tr(
        "Waits no thread is known to have caused: still open at the range's end (a thread "
        "idle on a condition, waiting for work), timed out, or on holders the probe does not "
        "name (a rwlock's readers, which a writer waits for together). Shaded grey on a scale "
        "of their own.");
  }

 private:
  BoundedMatrix m_;
  uint64_t top_ = 1, topUnknown_ = 1;  // the largest cell: of someone known, of nobody
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
  setMatrix(boundMatrix(pairs, [&model](uint32_t tid) { return threadLabel(model, tid); }));
}

void WaitMatrixTable::setMatrix(BoundedMatrix &&matrix) {
  cells_ = matrix.pairs;
  model_->setMatrix(std::move(matrix));
  resizeColumnsToContents();
}

int WaitMatrixTable::waiterCount() const {
  return int(model_->matrix().rowTids.size()) + model_->matrix().otherRows;
}
int WaitMatrixTable::holderCount() const {
  return int(model_->matrix().colTids.size()) + model_->matrix().otherCols;
}
int WaitMatrixTable::otherWaiters() const { return model_->matrix().otherRows; }
int WaitMatrixTable::otherHolders() const { return model_->matrix().otherCols; }

}  // namespace tmui
