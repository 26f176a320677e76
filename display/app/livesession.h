// Joins one accepted probe connection to a session model and its page:
// frames go to the model, connection state and rates go to the status line,
// a failure becomes the page's notice.
#ifndef THREADMON_APP_LIVESESSION_H
#define THREADMON_APP_LIVESESSION_H

#include <QObject>
#include <QTimer>

namespace tmnet {
class ProbeConnection;
}
namespace tmui {
class SessionView;
}

class LiveSession : public QObject {
  Q_OBJECT
 public:
  // Takes ownership of the connection; the page owns this object.
  explicit LiveSession(tmnet::ProbeConnection *connection);
  tmui::SessionView *page() const { return page_; }
  tmnet::ProbeConnection *connection() const { return connection_; }
  // Saves the session so far to path and keeps appending. "" or an error.
  QString startRecording(const QString &path);
  void stopRecording();
  bool recording() const;

 private:
  void updateStatus();
  void onClosed();

  tmnet::ProbeConnection *connection_;
  tmui::SessionView *page_;
  QTimer statusTimer_;
};

#endif
