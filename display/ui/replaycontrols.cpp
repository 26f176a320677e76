#include "replaycontrols.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QStyle>
#include <QToolButton>
#include <algorithm>

#include "sessionmodel.h"
#include "viewwindow.h"

namespace tmui {

namespace {
constexpr int kSliderSteps = 10000;
constexpr double kSpeeds[] = {0.25, 0.5, 1, 2, 4, 8, 16};
}  // namespace

ReplayControls::ReplayControls(tmon::SessionModel *model, ViewWindow *window, QWidget *parent)
    : QWidget(parent),
      model_(model),
      window_(window),
      playButton_(new QToolButton(this)),
      speedBox_(new QComboBox(this)),
      slider_(new QSlider(Qt::Horizontal, this)),
      timeLabel_(new QLabel(this)) {
  auto *layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 0, 4, 0);
  layout->addWidget(playButton_);
  layout->addWidget(speedBox_);
  layout->addWidget(slider_, 1);
  layout->addWidget(timeLabel_);
  playButton_->setToolTip(tr("Play / pause the replay (Space)"));
  playButton_->setShortcut(Qt::Key_Space);
  for (double s : kSpeeds) speedBox_->addItem(QStringLiteral("%1×").arg(s), s);
  speedBox_->setCurrentIndex(2);
  speedBox_->setToolTip(tr("Replay speed"));
  slider_->setRange(0, kSliderSteps);
  slider_->setToolTip(tr("Seek"));
  timer_.setInterval(40);
  connect(&timer_, &QTimer::timeout, this, &ReplayControls::step);
  connect(playButton_, &QToolButton::clicked, this, [this] { playing() ? pause() : play(); });
  connect(speedBox_, &QComboBox::currentIndexChanged, this,
          [this](int i) { speed_ = speedBox_->itemData(i).toDouble(); });
  connect(slider_, &QSlider::valueChanged, this, [this](int v) {
    seek(model_->durationSeconds() * v / kSliderSteps);
  });
  connect(window_, &ViewWindow::changed, this, &ReplayControls::syncWidgets);
}

double ReplayControls::position() const {
  return double(window_->now() - model_->startNs()) / 1e9;
}

void ReplayControls::play() {
  // Playing from the end starts over.
  if (position() >= model_->durationSeconds() - 1e-6) seek(0);
  wall_.start();
  timer_.start();
  syncWidgets();
}

void ReplayControls::pause() {
  timer_.stop();
  syncWidgets();
}

void ReplayControls::setSpeed(double factor) {
  const auto *it = std::find(std::begin(kSpeeds), std::end(kSpeeds), factor);
  if (it != std::end(kSpeeds)) speedBox_->setCurrentIndex(int(it - std::begin(kSpeeds)));
}

void ReplayControls::seek(double seconds) {
  const double clamped = std::clamp(seconds, 0.0, model_->durationSeconds());
  window_->setPlayhead(model_->startNs() + int64_t(clamped * 1e9));
}

// Advances by the wall time really elapsed, so a slow repaint does not slow
// the replay down.
void ReplayControls::step() {
  const double dt = double(wall_.restart()) / 1000.0 * speed_;
  const double next = position() + dt;
  seek(next);
  if (next >= model_->durationSeconds()) pause();
}

void ReplayControls::syncWidgets() {
  playButton_->setIcon(style()->standardIcon(playing() ? QStyle::SP_MediaPause
                                                       : QStyle::SP_MediaPlay));
  const double total = model_->durationSeconds();
  const double pos = position();
  {
    const QSignalBlocker block(slider_);
    slider_->setValue(total > 0 ? int(pos / total * kSliderSteps) : 0);
  }
  timeLabel_->setText(tr("%1 s / %2 s").arg(pos, 0, 'f', 2).arg(total, 0, 'f', 2));
}

}  // namespace tmui
