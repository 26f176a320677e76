// The one window selector every view of a session follows: last 1 s, last
// 10 s, the whole run, or a range dragged in the timeline. "Now" is the
// newest data when live and the playhead when replaying.
#ifndef THREADMON_UI_VIEWWINDOW_H
#define THREADMON_UI_VIEWWINDOW_H

#include <QObject>

#include "modeltypes.h"

namespace tmon {
class SessionModel;
}

namespace tmui {

class ViewWindow : public QObject {
  Q_OBJECT
 public:
  enum class Mode { Last1s, Last10s, WholeRun, Range };

  explicit ViewWindow(const tmon::SessionModel *model, QObject *parent = nullptr);

  Mode mode() const { return mode_; }
  void setMode(Mode m);
  // A dragged range; switches the mode to Range.
  void setRange(const tmon::TimeRange &r);

  // Replay: the time the views treat as "now"; unset (-1) follows the data.
  void setPlayhead(int64_t t);
  int64_t playhead() const { return playhead_; }
  int64_t now() const;

  // The span the views show, clipped to what has happened by now().
  tmon::TimeRange range() const;
  QString describe() const;

 signals:
  void changed();

 private:
  const tmon::SessionModel *model_;
  Mode mode_ = Mode::WholeRun;
  tmon::TimeRange dragged_;
  int64_t playhead_ = -1;
};

}  // namespace tmui

#endif
