// Replay of a loaded capture: play/pause, speed 0.25x to 16x and a seek
// slider. It moves the window's playhead; the views follow it exactly as
// they follow the newest data of a live session.
#ifndef THREADMON_UI_REPLAYCONTROLS_H
#define THREADMON_UI_REPLAYCONTROLS_H

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

class QComboBox;
class QLabel;
class QSlider;
class QToolButton;

namespace tmon {
class SessionModel;
}

namespace tmui {

class ViewWindow;

class ReplayControls : public QWidget {
  Q_OBJECT
 public:
  ReplayControls(tmon::SessionModel *model, ViewWindow *window, QWidget *parent = nullptr);

  void play();
  void pause();
  bool playing() const { return timer_.isActive(); }
  void setSpeed(double factor);
  double speed() const { return speed_; }
  // Seconds since the session start.
  void seek(double seconds);
  double position() const;
  // Shows the window's position: made before its model is filled, the
  // controls read nothing of it until the page first calls this.
  void syncWidgets();

 private:
  void step();

  tmon::SessionModel *model_;
  ViewWindow *window_;
  QToolButton *playButton_;
  QComboBox *speedBox_;
  QSlider *slider_;
  QLabel *timeLabel_;
  QTimer timer_;
  QElapsedTimer wall_;
  double speed_ = 1.0;
};

}  // namespace tmui

#endif
