#include "syncview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

#include "sessionmodel.h"
#include "syncdetails.h"
#include "synctree.h"
#include "viewwindow.h"

namespace tmui {

SyncView::SyncView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent),
      tree_(new SyncTree(this)),
      view_(new QTreeView(this)),
      filter_(new QLineEdit(this)),
      group_(new QComboBox(this)),
      details_(new SyncDetails(this)) {
  // The tree sorts and filters itself (a matching object keeps its module, a
  // matching module keeps its objects): no proxy model.
  view_->setModel(tree_);
  view_->setSortingEnabled(true);
  view_->sortByColumn(SyncTree::Wait, Qt::DescendingOrder);
  view_->setAlternatingRowColors(true);
  view_->setUniformRowHeights(true);
  view_->header()->setStretchLastSection(false);
  // Not ResizeToContents: it measures every row of every column on every
  // refresh (memcached's 4,400 objects froze the window a minute). Widths
  // for typical texts instead (a heap object's name, "table->lock made in
  // make_table (db.c:43)", is the widest); the user can drag them.
  view_->header()->setSectionResizeMode(QHeaderView::Interactive);
  const QFontMetrics fm = view_->fontMetrics();
  const auto chars = [&](int n) { return fm.horizontalAdvance(QLatin1Char('x')) * n + 24; };
  const int widths[SyncTree::ColumnCount] = {chars(40), chars(8),  chars(10), chars(9), chars(11),
                                             chars(9),  chars(10), chars(12), chars(30)};
  for (int c = 0; c < SyncTree::ColumnCount; ++c) view_->header()->resizeSection(c, widths[c]);
  filter_->setPlaceholderText(tr("Filter by module, symbol, kind or call site"));
  filter_->setClearButtonEnabled(true);
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto *top = new QHBoxLayout;
  top->addWidget(filter_, 1);
  group_->addItem(tr("Group by module"), int(SyncTree::Grouping::Module));
  group_->addItem(tr("Group by call site"), int(SyncTree::Grouping::CallSite));
  group_->setToolTip(tr("Call site: the program's own function that contended for the object "
                        "(where it first did, when known, else the busiest over the run)"));
  top->addWidget(group_);
  layout->addLayout(top);
  connect(group_, &QComboBox::currentIndexChanged, this, [this] {
    setGrouping(SyncTree::Grouping(group_->currentData().toInt()));
  });
  split_ = new QSplitter(Qt::Horizontal, this);
  split_->addWidget(view_);
  split_->addWidget(details_);
  for (int c = 0; c <= SyncTree::Acquisitions; ++c) figuresWidth_ += widths[c];
  figuresWidth_ += chars(2);
  detailsWidth_ = chars(56);
  detailsLeast_ = chars(28);
  split_->setSizes({figuresWidth_, detailsWidth_});
  connect(split_, &QSplitter::splitterMoved, this, [this] { splitDragged_ = true; });
  layout->addWidget(split_, 1);
  auto *hint = new QLabel(tr("Select an object to outline, in the timeline, the intervals "
                             "threads spent blocked on it."), this);
  hint->setForegroundRole(QPalette::PlaceholderText);
  layout->addWidget(hint);
  connect(filter_, &QLineEdit::textChanged, this, &SyncView::setFilterText);
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex &current) {
            const QModelIndex first = current.siblingAtColumn(SyncTree::Object);
            selected_ = first.isValid() ? first.data(SyncTree::kObjectIdRole).toUInt() : 0u;
            details_->showObject(*this->model(), selected_, this->window()->range());
            emit objectSelected(selected_);
          });
}

int SyncView::rowCount() const {
  int n = 0;
  for (int m = 0; m < tree_->rowCount(); ++m) n += tree_->rowCount(tree_->index(m, 0));
  return n;
}

void SyncView::setFilterText(const QString &text) {
  if (filter_->text() != text) filter_->setText(text);
  tree_->setFilterText(text);
  view_->expandAll();
}

void SyncView::setGrouping(SyncTree::Grouping grouping) {
  group_->setCurrentIndex(group_->findData(int(grouping)));
  if (tree_->grouping() == grouping) return;
  const uint32_t keep = selected_;
  tree_->setGrouping(grouping);
  refreshNow();
  if (keep) selectObject(keep);
}

void SyncView::selectObject(uint32_t id) {
  auto find = [&] {
    return tree_->match(tree_->index(0, 0), SyncTree::kObjectIdRole, id, 1,
                         Qt::MatchExactly | Qt::MatchRecursive);
  };
  QModelIndexList hits = find();
  if (id && hits.isEmpty() && !filter_->text().isEmpty()) {
    setFilterText(QString());  // the filter hid it
    hits = find();
  }
  if (id == 0 || hits.isEmpty()) {
    view_->selectionModel()->clearCurrentIndex();
    selected_ = 0;
    details_->showObject(*model(), 0, window()->range());
    emit objectSelected(0);
    return;
  }
  view_->selectionModel()->setCurrentIndex(
      hits.first(), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  view_->scrollTo(hits.first());
}

void SyncView::resizeEvent(QResizeEvent *event) {
  ModelView::resizeEvent(event);
  shareWidth();
}

void SyncView::shareWidth() {
  if (splitDragged_) return;
  // The table's figures through its acquisitions in view (at 3:2 a
  // 1,400-pixel window cut its hold times; in proportion, a 1,100-pixel one
  // cut them at Contended), the details at their width beside them, then
  // narrower down to a least width; past that the table gives way too. A
  // wider window widens the details twice as fast as the table.
  const int total = split_->width() - split_->handleWidth();
  if (total <= 0) return;
  int details;
  if (total >= figuresWidth_ + detailsWidth_)
    details = detailsWidth_ + (total - figuresWidth_ - detailsWidth_) * 2 / 3;
  else
    details = std::max(detailsLeast_, total - figuresWidth_);
  details = std::min(details, total / 2);
  split_->setSizes({total - details, details});
}

void SyncView::rebuild() {
  const tmon::TimeRange r = window()->range();
  const tmon::SessionModel *m = model();
  auto compute = [m, r, g = tree_->grouping()] { return SyncTree::collect(*m, r, g); };
  auto present = [this, r](std::vector<SyncTree::ObjectRow> &&objects) {
    const int before = tree_->rowCount(), objectsBefore = tree_->objectRows();
    const uint32_t keep = selected_;
    const bool reset = tree_->apply(std::move(objects));
    if (reset || tree_->rowCount() != before || tree_->objectRows() != objectsBefore)
      view_->expandAll();
    // New objects reset the tree, and with it the selection: keep it.
    if (keep && selected_ != keep) selectObject(keep);
    else details_->showObject(*model(), selected_, r);
  };
  // Thousands of objects: the model's sums run off the GUI thread.
  rebuildWith<std::vector<SyncTree::ObjectRow>>(compute, present);
}

}  // namespace tmui
