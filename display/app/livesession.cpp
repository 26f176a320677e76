#include "livesession.h"

#include "probeconnection.h"
#include "sessionmodel.h"
#include "sessionview.h"

LiveSession::LiveSession(tmnet::ProbeConnection *connection)
    : connection_(connection),
      page_(new tmui::SessionView(new tmon::SessionModel, tmui::SessionView::Source::Live)) {
  setParent(page_);
  connection_->setParent(this);
  tmon::SessionModel *model = page_->model();
  // Unpacked on the connection's decoder thread; only folded in here.
  connection_->setFrameSink([model](tmon::FrameBatch &frames) { model->applyFrames(frames); });
  connect(connection_, &tmnet::ProbeConnection::closed, this, &LiveSession::onClosed);
  connect(&statusTimer_, &QTimer::timeout, this, &LiveSession::updateStatus);
  statusTimer_.start(500);
  updateStatus();
}

QString LiveSession::startRecording(const QString &path) {
  const QString err = connection_->spool()->startRecording(path);
  updateStatus();
  return err;
}

void LiveSession::stopRecording() {
  connection_->spool()->stopRecording();
  updateStatus();
}

bool LiveSession::recording() const { return connection_->spool()->recording(); }

void LiveSession::onClosed() {
  tmon::SessionModel *model = page_->model();
  if (connection_->state() == tmnet::ProbeConnection::State::Failed) {
    model->setError(connection_->error());
    page_->setNotice(tr("Connection closed: %1").arg(connection_->error()));
  }
  model->markEnded();
  updateStatus();
  qInfo("threadmon-display: session of pid %u from %s %s: %llu frames, %llu bytes",
        connection_->pid(), qPrintable(connection_->peer()),
        qPrintable(connection_->stateText()),
        static_cast<unsigned long long>(connection_->framesReceived()),
        static_cast<unsigned long long>(connection_->bytesReceived()));
}

void LiveSession::updateStatus() {
  const tmon::SessionInfo &info = page_->model()->info();
  QString text = tr("%1 from %2 · %3 frames/s · %4 frames · dropped by probe: %5")
                     .arg(connection_->stateText(), connection_->peer())
                     .arg(connection_->framesPerSecond(), 0, 'f', 0)
                     .arg(connection_->framesReceived())
                     .arg(std::max<quint64>(connection_->framesDroppedByProbe(), info.framesDropped));
  if (info.eventsDropped) text += tr(" · events dropped: %1").arg(info.eventsDropped);
  if (recording()) text += tr(" · ● recording to %1").arg(connection_->spool()->recordingPath());
  page_->setStatus(text);
  if (connection_->state() != tmnet::ProbeConnection::State::Streaming) statusTimer_.stop();
}
