#include "sshdialog.h"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProcess>
#include <QPushButton>
#include <QRadioButton>
#include <QStandardPaths>
#include <QVBoxLayout>

QString threadmonLauncher() {
  const QString dir = QCoreApplication::applicationDirPath();
  for (const QString &p : {dir + QStringLiteral("/threadmon"),
                           dir + QStringLiteral("/../scripts/threadmon")})
    if (QFileInfo(p).isExecutable()) return QFileInfo(p).canonicalFilePath();
  return QStandardPaths::findExecutable(QStringLiteral("threadmon"));
}

SshDialog::SshDialog(const QString &launcher, QWidget *parent)
    : QDialog(parent),
      launcher_(launcher),
      host_(new QLineEdit(this)),
      runCommand_(new QRadioButton(tr("Start a command:"), this)),
      attach_(new QRadioButton(tr("Attach to a process:"), this)),
      command_(new QLineEdit(this)),
      processes_(new QListWidget(this)),
      status_(new QLabel(this)) {
  setWindowTitle(tr("Watch over SSH"));
  host_->setPlaceholderText(tr("[user@]host, as for ssh (~/.ssh/config applies)"));
  command_->setPlaceholderText(tr("./server --port 8080"));
  runCommand_->setChecked(true);
  auto *list = new QPushButton(tr("&List processes"), this);
  auto *form = new QFormLayout;
  form->addRow(tr("&Host:"), host_);
  auto *layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(runCommand_);
  layout->addWidget(command_);
  auto *attachRow = new QHBoxLayout;
  attachRow->addWidget(attach_);
  attachRow->addStretch();
  attachRow->addWidget(list);
  layout->addLayout(attachRow);
  layout->addWidget(processes_);
  status_->setWordWrap(true);
  layout->addWidget(status_);
  auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("&Watch"));
  layout->addWidget(buttons);
  status_->setText(launcher_.isEmpty()
                       ? tr("threadmon's launcher is not found: install threadmon")
                       : tr("threadmon must be installed on the host; nothing listens on either "
                            "side, the streams come back through ssh."));
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(list, &QPushButton::clicked, this, &SshDialog::listProcesses);
  connect(processes_, &QListWidget::currentRowChanged, this, [this] {
    attach_->setChecked(true);
    updateOk();
  });
  for (QLineEdit *e : {host_, command_})
    connect(e, &QLineEdit::textChanged, this, &SshDialog::updateOk);
  connect(runCommand_, &QRadioButton::toggled, this, &SshDialog::updateOk);
  okButton_ = buttons->button(QDialogButtonBox::Ok);
  updateOk();
}

QString SshDialog::host() const { return host_->text().trimmed(); }

QStringList SshDialog::target() const {
  if (attach_->isChecked()) {
    const QListWidgetItem *item = processes_->currentItem();
    return item ? QStringList{QStringLiteral("-p"), item->data(Qt::UserRole).toString()}
                : QStringList();
  }
  const QStringList words = QProcess::splitCommand(command_->text());
  return words.isEmpty() ? words : QStringList{QStringLiteral("--")} + words;
}

void SshDialog::updateOk() {
  okButton_->setEnabled(!launcher_.isEmpty() && !host().isEmpty() && !host().startsWith('-') &&
                        !target().isEmpty());
}

void SshDialog::setProcessListing(const QString &text) {
  processes_->clear();
  for (const QString &line : text.split('\n', Qt::SkipEmptyParts)) {
    const QString trimmed = line.trimmed();
    const QString pid = trimmed.section(' ', 0, 0);
    bool ok = false;
    pid.toUInt(&ok);
    if (!ok) continue;
    auto *item = new QListWidgetItem(trimmed, processes_);
    item->setData(Qt::UserRole, pid);
  }
  status_->setText(tr("%1 processes on %2").arg(processes_->count()).arg(host()));
}

void SshDialog::listProcesses() {
  if (host().isEmpty() || launcher_.isEmpty() || lister_) return;
  lister_ = new QProcess(this);
  status_->setText(tr("Listing the processes of %1…").arg(host()));
  connect(lister_, &QProcess::finished, this, [this](int code) {
    const QString out = QString::fromUtf8(lister_->readAllStandardOutput());
    const QString err = QString::fromUtf8(lister_->readAllStandardError()).trimmed();
    lister_->deleteLater();
    lister_ = nullptr;
    if (code != 0) {
      status_->setText(err.isEmpty() ? tr("listing failed (status %1)").arg(code) : err);
      return;
    }
    setProcessListing(out);
  });
  lister_->start(launcher_, {QStringLiteral("ps-ssh"), QStringLiteral("--ssh"), host()});
}
