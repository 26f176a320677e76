#include "comparepages.h"

#include <QDialog>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QVBoxLayout>

#include "capturediff.h"
#include "reportrows.h"
#include "sessionmodel.h"
#include "sessionview.h"

QString comparePages(const tmui::SessionView &before, const tmui::SessionView &after) {
  before.model()->settleNow();
  after.model()->settleNow();
  const tmon::CaptureDiff d =
      tmon::diffRows(collectRows(*before.model()), collectRows(*after.model()), tmon::DiffOptions{});
  return tmon::diffText(d, 0);
}

QDialog *makeCompareDialog(QWidget *parent, const QString &beforeTitle, const QString &afterTitle,
                           const QString &text) {
  auto *dialog = new QDialog(parent);
  dialog->setWindowTitle(QObject::tr("Compare: %1 → %2").arg(beforeTitle, afterTitle));
  auto *label = new QLabel(QObject::tr("Before: %1\nAfter: %2").arg(beforeTitle, afterTitle), dialog);
  auto *view = new QPlainTextEdit(text, dialog);
  view->setReadOnly(true);
  view->setLineWrapMode(QPlainTextEdit::NoWrap);
  view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
  QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  auto *layout = new QVBoxLayout(dialog);
  layout->addWidget(label);
  layout->addWidget(view, 1);
  layout->addWidget(buttons);
  dialog->resize(900, 500);
  return dialog;
}

void compareInteractively(QWidget *parent, QTabWidget *tabs) {
  auto *after = qobject_cast<tmui::SessionView *>(tabs->currentWidget());
  QStringList titles;
  QList<tmui::SessionView *> pages;
  for (int i = 0; i < tabs->count(); i++) {
    auto *p = qobject_cast<tmui::SessionView *>(tabs->widget(i));
    if (p && p != after) {
      titles << tabs->tabText(i);
      pages << p;
    }
  }
  if (!after || pages.isEmpty()) {
    QMessageBox::information(parent, QObject::tr("Compare"),
                             QObject::tr("Open two captures first: the shown one is compared "
                                         "with one on another tab."));
    return;
  }
  bool ok = true;
  const QString chosen = pages.size() == 1
                             ? titles.first()
                             : QInputDialog::getItem(parent, QObject::tr("Compare with"),
                                                     QObject::tr("Before (the shown tab is after):"),
                                                     titles, 0, false, &ok);
  if (!ok) return;
  tmui::SessionView *before = pages[int(titles.indexOf(chosen))];
  QDialog *d = makeCompareDialog(parent, chosen, tabs->tabText(tabs->currentIndex()),
                                 comparePages(*before, *after));
  d->setAttribute(Qt::WA_DeleteOnClose);
  d->show();
}
