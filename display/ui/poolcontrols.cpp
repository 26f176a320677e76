#include "poolcontrols.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLineEdit>

namespace tmui {

PoolControls::PoolControls(const QStringList &categoryLabels, QWidget *parent)
    : QWidget(parent), filter_(new QLineEdit(this)), sort_(new QComboBox(this)) {
  auto *bar = new QHBoxLayout(this);
  bar->setContentsMargins(4, 4, 4, 0);
  filter_->setPlaceholderText(tr("Filter: name, tid, start routine or state (e.g. mutex)"));
  filter_->setClearButtonEnabled(true);
  sort_->addItem(tr("Sort: first started"), -1);
  for (int c = 0; c < categoryLabels.size(); ++c)
    sort_->addItem(tr("Sort: most %1").arg(categoryLabels[c]), c);
  bar->addWidget(filter_, 1);
  bar->addWidget(sort_);
  connect(filter_, &QLineEdit::textChanged, this, &PoolControls::filterChanged);
  connect(sort_, &QComboBox::currentIndexChanged, this, &PoolControls::sortChanged);
}

QString PoolControls::filter() const { return filter_->text(); }

int PoolControls::sortCategory() const { return sort_->currentData().toInt(); }

void PoolControls::setFilter(const QString &text) { filter_->setText(text); }

void PoolControls::setSortCategory(int category) {
  sort_->setCurrentIndex(sort_->findData(category));
}

}  // namespace tmui
