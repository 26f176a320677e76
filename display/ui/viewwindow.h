// The one window selector every view of a session follows: last 1 s, last
// 10 s, the whole run, or a range dragged in the timeline. "Now" is the
// newest data when live and the playhead when replaying.
#ifndef THREADMON_UI_VIEWWINDOW_H
#define THREADMON_UI_VIEWWINDOW_H

#include <QObject>
#include <functional>
#include <memory>

#include "capturereader.h"
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

  // A live session's detail older than its model holds: fills a fresh
  // model with [t0, t1] from the session's spool (LiveSession::loadDetail).
  using DetailLoader =
      std::function<tmon::CaptureLoadResult(int64_t, int64_t, tmon::SessionModel *)>;
  void setOlderDetail(DetailLoader loader) { older_ = std::move(loader); }
  // When a dragged range starts before what the live model holds (its
  // intervals and waits left it): what makes a fresh model of range() from
  // the spool, for a view's worker thread to call (null when it cannot be
  // read). Empty otherwise: the views read the model itself.
  std::function<std::unique_ptr<tmon::SessionModel>()> olderModel() const;

 signals:
  void changed();

 private:
  const tmon::SessionModel *model_;
  Mode mode_ = Mode::WholeRun;
  tmon::TimeRange dragged_;
  int64_t playhead_ = -1;
  DetailLoader older_;
};

}  // namespace tmui

#endif
