// The main window: one tab per session (live probes and opened captures),
// the listener's address in the status bar, record/open/close actions, and
// drag-and-drop of captures.
#ifndef THREADMON_APP_MAINWINDOW_H
#define THREADMON_APP_MAINWINDOW_H

#include <QMainWindow>
#include <functional>
#include <memory>

#include "listenaddress.h"
#include "livesession.h"

class QLabel;
class QTabWidget;
struct KeptIndex;

namespace tmnet {
class MuxReader;
class ProbeConnection;
class ProbeListener;
}  // namespace tmnet
namespace tmui {
class SessionView;
}

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  // Ended live sessions kept open (tabs); older ones are closed and freed.
  static constexpr int kMaxEndedSessions = 32;
  explicit MainWindow(QWidget *parent = nullptr);

  // Starts listening; "" or one error line.
  QString listen(const tmnet::ListenAddress &addr, const QByteArray &token);
  // Live sessions from now on keep a flight recorder (--last).
  void setFlightOptions(const FlightOptions &flight) { flight_ = flight; }
  // Opens a capture in a new tab, read on a thread of its own: the tab says
  // "Reading…" until its page replaces it, then opened(page) is called; if
  // nothing can be read the tab goes and the user is told why.
  // atSeconds: where a long capture's window ends (captureopen.h).
  void openCaptureFile(const QString &path, double atSeconds = -1,
                       std::function<void(tmui::SessionView *)> opened = {});
  void addSession(tmui::SessionView *page);
  // Shows the sessions relayed on standard input (--stdin: `threadmon run
  // --display --ssh`).
  void readStdin();
  // Shows the sessions of reader, a tab each; the status bar says how it
  // ended.
  void watchMux(tmnet::MuxReader *reader);
  // Runs `threadmon relay-ssh --ssh HOST TARGET...` (target: "-- CMD ARGS"
  // or "-p PID") and shows what it relays; its failure is one message.
  void watchOverSsh(const QString &host, const QStringList &target);
  QTabWidget *tabs() const { return tabs_; }
  tmnet::ProbeListener *listener() const { return listener_; }

 protected:
  void dragEnterEvent(QDragEnterEvent *event) override;
  void dropEvent(QDropEvent *event) override;

 private:
  void onSessionAccepted(tmnet::ProbeConnection *connection);
  void onSessionRefused(const QString &peer, const QString &reason);
  // Past kMaxEndedSessions ended live sessions, closes the oldest (not the
  // one shown): what a display has seen must not cost it memory for ever.
  void closeOldestEndedSession();
  void chooseCapture();
  void chooseSsh();
  void recordCurrent();
  void saveLastCurrent();
  void closeTab(int index);
  struct Seek;
  // index: the capture's, kept from the read that gave page.
  void followSeeks(tmui::SessionView *page, const QString &path, std::shared_ptr<KeptIndex> index);
  void readWindow(const std::shared_ptr<Seek> &seek, const QString &path, double endSeconds,
                  bool goingBack);
  // Puts page in the tab at index, in place of what was there (deleted).
  void replaceTab(int index, tmui::SessionView *page);
  void putInTab(int index, QWidget *widget, const QString &title);
  // The tab's text and tooltip follow the page's title and file.
  void followTitle(tmui::SessionView *page);
  LiveSession *currentLive() const;
  void updateActions();

  QTabWidget *tabs_;
  QWidget *welcome_;
  QLabel *welcomeText_;
  QLabel *listenLabel_;
  tmnet::ProbeListener *listener_ = nullptr;
  QAction *recordAction_;
  QAction *saveLastAction_;
  FlightOptions flight_;
};

#endif
