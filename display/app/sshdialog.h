// File ▸ Watch over SSH…: a host, then a command to start there or a
// process to attach to, listed from the host (`ps` through ssh). The main
// window runs threadmon's launcher (`threadmon relay-ssh`) with what it
// returns: ssh with the user's own keys and config, the streams back on
// the launcher's stdout (tmnet::MuxReader), no port opened.
#ifndef THREADMON_APP_SSHDIALOG_H
#define THREADMON_APP_SSHDIALOG_H

#include <QDialog>
#include <QStringList>

class QLineEdit;
class QListWidget;
class QProcess;
class QRadioButton;
class QLabel;
class QPushButton;

class SshDialog : public QDialog {
  Q_OBJECT
 public:
  // launcher: the threadmon launcher to run (threadmonLauncher()).
  explicit SshDialog(const QString &launcher, QWidget *parent = nullptr);

  QString host() const;
  // The launcher's arguments after --ssh HOST: "-- CMD ARGS" or "-p PID".
  QStringList target() const;
  // Fills the process list from the host (runs `threadmon ps-ssh`).
  void listProcesses();
  // For tests and screenshots: a listing as ps-ssh prints it.
  void setProcessListing(const QString &text);

 private:
  void updateOk();

  QString launcher_;
  QLineEdit *host_;
  QRadioButton *runCommand_;
  QRadioButton *attach_;
  QLineEdit *command_;
  QListWidget *processes_;
  QLabel *status_;
  QPushButton *okButton_ = nullptr;
  QProcess *lister_ = nullptr;
};

// The launcher beside threadmon-display (installed), in the build tree
// (../scripts/threadmon), or threadmon on PATH; "" when none.
QString threadmonLauncher();

#endif
