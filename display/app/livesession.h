// Joins one accepted probe connection to a session model and its page:
// frames go to the model, connection state and rates go to the status line,
// a failure becomes the page's notice. With a flight window (--last) it also
// keeps a flight recorder's ring of the session (tmnet::FlightRecorder):
// "Save last ..." writes it as a capture, and a trigger writes one by itself.
// Without one, the session's frames are spooled as a capture (DetailSpool)
// and its model holds full detail for the last kDetailNs only: older
// windows load from the spool (loadDetail), whole-run totals stay exact.
#ifndef THREADMON_APP_LIVESESSION_H
#define THREADMON_APP_LIVESESSION_H

#include <QObject>
#include <QStringList>
#include <QTimer>
#include <cstdint>
#include <memory>

#include "capturereader.h"

class DetailSpool;
namespace tmon {
class SessionModel;
}
namespace tmnet {
class FlightRecorder;
class ProbeConnection;
}  // namespace tmnet
namespace tmui {
class SessionView;
}

struct FlightOptions {
  uint64_t lastNs = 0;                       // 0: no flight recorder (the whole stream is spooled)
  QStringList triggers;                      // "deadlock", "wait>200ms"
  QString triggerDir = QStringLiteral(".");  // where triggered captures go
  // A trigger's capture is written this long after it fired, so that it
  // holds what followed too (as threadmon-flight's --post-ms).
  uint64_t triggerAfterNs = 1000000000ull;
  int triggerLimit = 10;  // trigger captures written at most; 0: no limit
};

class LiveSession : public QObject {
  Q_OBJECT
 public:
  // How much detail the live model holds (SessionModel::keepDetailFor).
  static constexpr int64_t kDetailNs = 60'000'000'000;

  // Takes ownership of the connection; the page owns this object.
  explicit LiveSession(tmnet::ProbeConnection *connection, const FlightOptions &flight = {});
  ~LiveSession() override;
  tmui::SessionView *page() const { return page_; }
  tmnet::ProbeConnection *connection() const { return connection_; }
  // Saves the session so far to path and keeps appending. "" or an error.
  QString startRecording(const QString &path);
  void stopRecording();
  bool recording() const;
  // The flight recorder's window, 0 without one.
  uint64_t flightWindowNs() const;
  // Writes the flight recorder's capture (the last window of detail, the
  // whole run's totals); "" or one line saying what failed.
  QString saveLast(const QString &path);
  // Loads [t0, t1] of the session's detail from its spool into model (a
  // fresh one): the intervals the live model let go. Unreadable with a
  // message when the session keeps no spool (--last).
  tmon::CaptureLoadResult loadDetail(int64_t t0, int64_t t1, tmon::SessionModel *model);
  // Captures the triggers wrote, in order.
  QStringList triggeredCaptures() const { return triggered_; }

 private:
  void updateStatus();
  void onClosed();
  void onTriggered(const QString &why);
  void writeTriggered(const QString &why);

  tmnet::ProbeConnection *connection_;
  tmui::SessionView *page_;
  QTimer statusTimer_;
  std::shared_ptr<tmnet::FlightRecorder> flight_;
  std::shared_ptr<DetailSpool> detail_;
  QString triggerDir_;
  QStringList triggered_;
  uint64_t lastNs_ = 0;
  uint64_t triggerAfterNs_ = 0;
  int triggerLimit_ = 0;
  int triggersDue_ = 0;  // fired, written or about to be: what the limit counts
  bool limitTold_ = false;
};

#endif
