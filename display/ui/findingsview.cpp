#include "findingsview.h"

#include <QJsonArray>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QGridLayout>
#include <QScrollArea>
#include <QVBoxLayout>

#include "sessionmodel.h"
#include "statepalette.h"
#include "viewwindow.h"

namespace tmui {

namespace {
const char *severityText(tmon::Severity s) {
  switch (s) {
    case tmon::Severity::High: return QT_TRANSLATE_NOOP("tmui", "High");
    case tmon::Severity::Medium: return QT_TRANSLATE_NOOP("tmui", "Medium");
    case tmon::Severity::Low: return QT_TRANSLATE_NOOP("tmui", "Low");
  }
  return "";
}

// A filled disk with "!" (high, medium) or "i" (low) in the severity colour.
QPixmap severityMark(tmon::Severity s, int size) {
  QPixmap pm(size, size);
  pm.fill(Qt::transparent);
  QPainter p(&pm);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(Qt::NoPen);
  p.setBrush(severityColor(int(s)));
  p.drawEllipse(QRectF(1, 1, size - 2, size - 2));
  QFont f = p.font();
  f.setBold(true);
  f.setPixelSize(size * 2 / 3);
  p.setFont(f);
  p.setPen(Qt::white);
  p.drawText(QRect(0, 0, size, size), Qt::AlignCenter,
             s == tmon::Severity::Low ? QStringLiteral("i") : QStringLiteral("!"));
  return pm;
}

// Items of one evidence list or map shown: the rest are counted (a finding
// about 1,000 threads lists each one's wait in the report's JSON; here that
// was a paragraph laid out again at every live refresh).
constexpr qsizetype kMaxListed = 12;

QString jsonValue(const QJsonValue &v) {
  if (v.isDouble()) {
    const double d = v.toDouble();
    return d == double(qint64(d)) ? QString::number(qint64(d)) : QString::number(d, 'g', 3);
  }
  if (v.isString()) return v.toString();
  if (v.isBool()) return v.toBool() ? QStringLiteral("yes") : QStringLiteral("no");
  if (v.isArray()) {
    QStringList parts;
    const QJsonArray a = v.toArray();
    for (qsizetype i = 0; i < std::min(a.size(), kMaxListed); ++i) parts << jsonValue(a[i]);
    if (a.size() > kMaxListed) parts << FindingsView::tr("… %1 more").arg(a.size() - kMaxListed);
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
  }
  if (v.isObject()) return QLatin1Char('{') + FindingsView::evidenceLine(v.toObject()) + QLatin1Char('}');
  return QString();
}
}  // namespace

FindingsView::FindingsView(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : ModelView(model, window, parent),
      title_(new QLabel(this)),
      empty_(new QLabel(tr("No problems found in this window."), this)),
      scroll_(new QScrollArea(this)),
      list_(new QWidget),
      rows_(new QVBoxLayout(list_)) {
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 4, 6, 4);
  QFont bold = title_->font();
  bold.setBold(true);
  title_->setFont(bold);
  layout->addWidget(title_);
  QFont big = empty_->font();
  big.setPointSizeF(big.pointSizeF() * 1.2);
  empty_->setFont(big);
  empty_->setAlignment(Qt::AlignCenter);
  layout->addWidget(empty_, 1);
  rows_->setContentsMargins(0, 0, 0, 0);
  rows_->setSpacing(6);
  scroll_->setWidgetResizable(true);
  scroll_->setFrameShape(QFrame::NoFrame);
  scroll_->setWidget(list_);
  layout->addWidget(scroll_, 1);
}

void FindingsView::activate(int row) {
  if (row >= 0 && row < int(findings_.size())) emit showRequested(findings_[size_t(row)]);
}

QString FindingsView::evidenceLine(const QJsonObject &evidence) {
  QStringList parts;
  for (auto it = evidence.begin(); it != evidence.end() && parts.size() < kMaxListed; ++it)
    parts << QStringLiteral("%1 %2").arg(it.key(), jsonValue(it.value()));
  if (evidence.size() > kMaxListed) parts << tr("… %1 more").arg(evidence.size() - kMaxListed);
  return parts.join(QStringLiteral(", "));
}

QWidget *FindingsView::makeRow(int index, const tmon::Finding &f) {
  auto *row = new QFrame;
  row->setFrameShape(QFrame::StyledPanel);
  row->setStyleSheet(QStringLiteral("QFrame#finding { border-left: 4px solid %1; }")
                         .arg(severityColor(int(f.severity)).name()));
  row->setObjectName(QStringLiteral("finding"));
  auto *grid = new QGridLayout(row);
  grid->setContentsMargins(6, 4, 6, 4);
  auto *mark = new QLabel(row);
  mark->setPixmap(severityMark(f.severity, 20));
  mark->setToolTip(tr("%1 severity").arg(tr(severityText(f.severity))));
  grid->addWidget(mark, 0, 0, Qt::AlignTop);
  auto *message = new QLabel(f.message, row);
  message->setWordWrap(true);
  message->setTextInteractionFlags(Qt::TextSelectableByMouse);
  grid->addWidget(message, 0, 1);
  auto *evidence = new QLabel(evidenceText(f), row);
  evidence->setWordWrap(true);
  evidence->setTextInteractionFlags(Qt::TextSelectableByMouse);
  evidence->setForegroundRole(QPalette::PlaceholderText);
  QFont small = evidence->font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  evidence->setFont(small);
  grid->addWidget(evidence, 1, 1);
  auto *show = new QPushButton(tr("Show"), row);
  show->setToolTip(tr("Switch to the %1 view and select what this is about")
                       .arg(tmon::viewKindName(tmon::findingInfo(f.kind).view)));
  connect(show, &QPushButton::clicked, this, [this, index] { activate(index); });
  grid->addWidget(show, 0, 2, Qt::AlignTop);
  grid->setColumnStretch(1, 1);
  rowLabels_.push_back({message, evidence});
  return row;
}

QString FindingsView::evidenceText(const tmon::Finding &f) const {
  return QStringLiteral("%1 · %2 · %3")
      .arg(tr(severityText(f.severity)), QString::fromLatin1(tmon::findingKindKey(f.kind)),
           evidenceLine(f.evidence));
}

namespace {
// The window a page's findings are for (a model's own, no older spool).
using Window = std::pair<int64_t, int64_t>;
}  // namespace

ModelView::Ahead FindingsView::ahead() const {
  return [](const tmon::SessionModel &m, const tmon::TimeRange &r) {
    return std::any(Prepared<Window, std::vector<tmon::Finding>>{{r.t0, r.t1}, m.findings(r)});
  };
}

void FindingsView::rebuild() {
  const tmon::TimeRange r = window()->range();
  QString described = window()->describe();
  // A flight recorder's findings start where its detail does (computeFindings).
  const tmon::SessionInfo &info = model()->info();
  if (info.flightRecorder && info.flightDetailFromNs > r.t0 && info.flightDetailFromNs < r.t1)
    described += tr(" (a flight recorder's: from %1 s, where its detail begins)")
                     .arg(double(info.flightDetailFromNs - model()->startNs()) / 1e9, 0, 'f', 2);
  auto present = [this, described](std::vector<tmon::Finding> &&found) {
    showFindings(std::move(found), described);
  };
  // Thousands of threads take seconds: off the GUI thread (the old list stays meanwhile).
  const tmon::SessionModel *m = model();
  if (auto older = window()->olderModel()) {
    // A range dragged back past a live model's detail: from its spool.
    rebuildWith<std::vector<tmon::Finding>>(
        [m, r, older] {
          if (const std::unique_ptr<tmon::SessionModel> o = older()) return o->findings(r);
          return m->findings(r);
        },
        present);
    return;
  }
  rebuildWith<Window, std::vector<tmon::Finding>>(
      {r.t0, r.t1}, [m, r] { return m->findings(r); }, present);
}

void FindingsView::showFindings(std::vector<tmon::Finding> found, const QString &described) {
  QStringList keys, kinds;
  for (const tmon::Finding &f : found) {
    keys << QString::fromLatin1(tmon::findingKindKey(f.kind)) + f.message;
    kinds << QString::fromLatin1(tmon::findingKindKey(f.kind)) + QString::number(int(f.severity));
  }
  findings_ = std::move(found);  // spans and evidence may move even when rows do not
  title_->setText(tr("Findings, %1: %n problem(s)", nullptr, int(findings_.size()))
                      .arg(described));
  empty_->setVisible(findings_.empty());
  scroll_->setVisible(!findings_.empty());
  if (keys == shown_) return;
  shown_ = keys;
  if (kinds == shownKinds_ && rowLabels_.size() == findings_.size()) {
    for (size_t i = 0; i < findings_.size(); ++i) {
      rowLabels_[i].message->setText(findings_[i].message);
      rowLabels_[i].evidence->setText(evidenceText(findings_[i]));
    }
    return;
  }
  shownKinds_ = kinds;
  rowLabels_.clear();
  while (QLayoutItem *item = rows_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  for (int i = 0; i < int(findings_.size()); ++i) rows_->addWidget(makeRow(i, findings_[size_t(i)]));
  rows_->addStretch(1);
}

}  // namespace tmui
