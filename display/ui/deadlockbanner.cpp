#include "deadlockbanner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

#include "names.h"
#include "sessionmodel.h"

namespace tmui {

DeadlockBanner::DeadlockBanner(QWidget *parent) : QFrame(parent), label_(new QLabel(this)) {
  setObjectName(QStringLiteral("deadlockBanner"));
  setStyleSheet(QStringLiteral(
      "QFrame#deadlockBanner { background: #c62828; border: 1px solid #8e0000; }"
      "QFrame#deadlockBanner QLabel { color: white; }"));
  auto *layout = new QHBoxLayout(this);
  layout->setContentsMargins(8, 4, 8, 4);
  label_->setWordWrap(true);
  label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(label_, 1);
  auto *show = new QPushButton(tr("Show"), this);
  show->setToolTip(tr("Select the objects in the sync view and the deadlock's span in the timeline"));
  connect(show, &QPushButton::clicked, this, &DeadlockBanner::activate);
  layout->addWidget(show, 0, Qt::AlignVCenter);
  hide();
}

QString DeadlockBanner::text() const { return isHidden() ? QString() : label_->text(); }

void DeadlockBanner::activate() {
  if (!isHidden()) emit showRequested(shown_);
}

QString DeadlockBanner::describe(const tmon::SessionModel &model, const tmon::Deadlock &d) {
  const tmon::TimeRange all{model.startNs(), model.latestNs()};
  QStringList steps;
  const size_t n = d.threads.size();
  for (size_t i = 0; i < n && i < d.objects.size(); ++i) {
    const uint32_t obj = d.objects[i];
    QString where;
    const std::vector<tmon::CallSite> sites = model.callSites(obj, all);
    if (const tmon::CallSite *site = tmon::busiestUnwound(sites)) {
      where = model.programFrame(site->frames);
    } else {
      const int oi = model.indexOfSyncObject(obj);
      if (oi >= 0) where = model.syncObject(oi).callSite();
    }
    steps << tr("%1 waits for %2%3, held by %4")
                 .arg(threadLabel(model, d.threads[i]), objectLabel(model, obj),
                      where.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(where),
                      threadLabel(model, d.threads[(i + 1) % n]));
  }
  return steps.join(QStringLiteral("; "));
}

void DeadlockBanner::update(const tmon::SessionModel &model, int64_t now) {
  // Every cycle seen, so a replay shows the banner exactly while the cycle held.
  for (const tmon::Deadlock &d : model.deadlocks()) {
    if (d.detectedNs > now || (!d.live() && d.resolvedNs <= now)) continue;
    shown_ = d;
    label_->setText(tr("<b>Deadlock</b> since %1: %2. None of these threads can continue.")
                        .arg(sessionTime(model, d.formedNs), describe(model, d).toHtmlEscaped()));
    show();
    return;
  }
  shown_ = tmon::Deadlock();
  hide();
}

}  // namespace tmui
