#include "exportaction.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QLabel>
#include <QMessageBox>
#include <QRadioButton>
#include <QVBoxLayout>

#include "exportformats.h"
#include "exportoutput.h"
#include "exportwalk.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "viewwindow.h"

QString exportPage(const tmui::SessionView &page, const ExportChoice &choice) {
  if (!choice.format) return QStringLiteral("no format chosen");
  tmon::ExportOutput out;
  if (!out.open(choice.path, choice.format->gzip, true)) return out.error();
  std::unique_ptr<tmon::ExportSink> sink = tmon::makeExportSink(*choice.format, &out, choice.holds);
  const tmon::TimeRange range =
      choice.selectedWindow ? page.viewWindow()->range() : tmon::TimeRange{};
  QString error;
  page.model()->settleNow();
  if (!tmon::exportModel(*page.model(), range, sink.get(), &error)) return error;
  return QString();
}

QDialog *makeExportDialog(QWidget *parent, const tmui::SessionView &page, ExportChoice *choice) {
  auto *dialog = new QDialog(parent);
  dialog->setWindowTitle(QObject::tr("Export"));
  auto *format = new QComboBox(dialog);
  format->addItem(QObject::tr("Perfetto trace (.pftrace)"), QStringLiteral("perfetto"));
  format->addItem(QObject::tr("Chrome JSON trace (.json)"), QStringLiteral("chrome"));
  format->addItem(QObject::tr("pprof profile of waits (.pb.gz)"), QStringLiteral("pprof"));
  format->addItem(QObject::tr("pprof profile of hold times (.pb.gz)"), QStringLiteral("holds"));
  auto *whole = new QRadioButton(QObject::tr("The whole session"), dialog);
  auto *window = new QRadioButton(
      QObject::tr("The views' window: %1").arg(page.viewWindow()->describe()), dialog);
  whole->setChecked(true);
  auto *drops = new QLabel(dialog);
  drops->setWordWrap(true);
  auto showDrops = [format, drops] {
    const QString name = format->currentData().toString();
    const tmon::ExportFormat *f =
        tmon::exportFormat(name == QLatin1String("holds") ? QStringLiteral("pprof") : name);
    drops->setText(f ? QString::fromUtf8(f->drops) + '.' : QString());
  };
  QObject::connect(format, &QComboBox::currentIndexChanged, dialog, showDrops);
  showDrops();
  auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, dialog);
  QObject::connect(buttons, &QDialogButtonBox::accepted, dialog, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  QObject::connect(dialog, &QDialog::accepted, dialog, [=] {
    const QString name = format->currentData().toString();
    choice->holds = name == QLatin1String("holds");
    choice->format = tmon::exportFormat(choice->holds ? QStringLiteral("pprof") : name);
    choice->selectedWindow = window->isChecked();
  });
  auto *form = new QFormLayout;
  form->addRow(QObject::tr("Format:"), format);
  auto *layout = new QVBoxLayout(dialog);
  layout->addLayout(form);
  layout->addWidget(whole);
  layout->addWidget(window);
  layout->addWidget(drops);
  layout->addWidget(buttons);
  return dialog;
}

void exportPageInteractively(QWidget *parent, tmui::SessionView *page) {
  if (!page) return;
  ExportChoice choice;
  QDialog *dialog = makeExportDialog(parent, *page, &choice);
  const bool ok = dialog->exec() == QDialog::Accepted;
  dialog->deleteLater();
  if (!ok || !choice.format) return;
  choice.path = QFileDialog::getSaveFileName(
      parent, QObject::tr("Export to"),
      QStringLiteral("session") + QLatin1String(choice.format->extension),
      QStringLiteral("*") + QLatin1String(choice.format->extension));
  if (choice.path.isEmpty()) return;
  const QString err = exportPage(*page, choice);
  if (!err.isEmpty())
    QMessageBox::warning(parent, QObject::tr("Cannot export"), err);
  else
    QMessageBox::information(
        parent, QObject::tr("Exported"),
        QObject::tr("Wrote %1; %2.").arg(choice.path, exportOpenHint(*choice.format, choice.path)));
}
