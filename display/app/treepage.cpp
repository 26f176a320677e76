#include "treepage.h"

#include <QHeaderView>
#include <QLabel>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <map>

#include "capturetree.h"

namespace {

enum Column { Pid, Program, Ended, Lifetime, User, System, Capture, Columns };

QString duration(uint64_t ns) {
  if (ns >= 1000000000ull) return QString::number(double(ns) / 1e9, 'f', 2) + " s";
  if (ns >= 1000000ull) return QString::number(double(ns) / 1e6, 'f', 1) + " ms";
  return QString::number(double(ns) / 1e3, 'f', 0) + " µs";
}

}  // namespace

QWidget *makeTreePage(const tmon::CaptureTree &tree, const QString &path,
                      std::function<void(const QString &)> open) {
  auto *page = new QWidget;
  page->setObjectName("processTree");
  auto *layout = new QVBoxLayout(page);
  int captured = 0;
  for (const tmon::TreeProcess &p : tree.processes()) captured += !tree.captureFor(p.pid).isEmpty();
  layout->addWidget(new QLabel(
      QObject::tr("%1: %2 processes, %3 with a session of their own (double-click one to open "
                  "it); the others ran no thread, and the tree keeps their life only.")
          .arg(path)
          .arg(tree.processes().size())
          .arg(captured)));
  auto *view = new QTreeWidget;
  view->setColumnCount(Columns);
  view->setHeaderLabels({QObject::tr("PID"), QObject::tr("Program"), QObject::tr("Ended"),
                         QObject::tr("Lifetime"), QObject::tr("CPU user"), QObject::tr("CPU sys"),
                         QObject::tr("Capture")});
  view->setUniformRowHeights(true);
  std::map<uint32_t, QTreeWidgetItem *> items;
  for (const tmon::TreeProcess &p : tree.processes()) {
    auto parent = items.find(p.ppid);
    auto *item = p.depth && parent != items.end() ? new QTreeWidgetItem(parent->second)
                                                  : new QTreeWidgetItem(view);
    items[p.pid] = item;
    const QString capture = tree.captureFor(p.pid);
    item->setText(Pid, QString::number(p.pid));
    item->setText(Program, p.name);
    item->setText(Ended, !p.ended            ? QObject::tr("not seen")
                         : p.how == "signal" ? QObject::tr("signal %1").arg(p.status)
                                             : QStringLiteral("%1 %2").arg(p.how).arg(p.status));
    item->setText(Lifetime,
                  p.ended && p.startNs ? duration(p.endNs - p.startNs) : QStringLiteral("-"));
    item->setText(User, p.ended ? duration(p.utimeNs) : QStringLiteral("-"));
    item->setText(System, p.ended ? duration(p.stimeNs) : QStringLiteral("-"));
    item->setText(Capture, capture.isEmpty() ? QObject::tr("life only") : QObject::tr("open"));
    item->setData(Pid, Qt::UserRole, capture);
    for (int c : {Pid, Lifetime, User, System}) item->setTextAlignment(c, Qt::AlignRight);
  }
  view->expandAll();
  view->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  QObject::connect(view, &QTreeWidget::itemActivated, view, [open](QTreeWidgetItem *item, int) {
    const QString capture = item->data(Pid, Qt::UserRole).toString();
    if (!capture.isEmpty()) open(capture);
  });
  layout->addWidget(view);
  return page;
}
