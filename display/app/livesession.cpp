#include "livesession.h"

#include <QDir>
#include <chrono>

#include "detailspool.h"
#include "flightrecorder.h"
#include "probeconnection.h"
#include "sessionmodel.h"
#include "sessionview.h"
#include "viewwindow.h"

LiveSession::LiveSession(tmnet::ProbeConnection *connection, const FlightOptions &flight)
    : connection_(connection),
      page_(new tmui::SessionView(new tmon::SessionModel, tmui::SessionView::Source::Live)),
      triggerDir_(flight.triggerDir),
      lastNs_(flight.lastNs),
      triggerAfterNs_(flight.triggerAfterNs),
      triggerLimit_(flight.triggerLimit) {
  setParent(page_);
  connection_->setParent(this);
  tmon::SessionModel *model = page_->model();
  if (flight.lastNs) {
    // The ring is the record: no spool keeps every byte on disk. With
    // triggers it also keeps what follows one until it is written.
    flight_ = std::make_shared<tmnet::FlightRecorder>(flight.lastNs, flight.triggerAfterNs,
                                                      flight.triggers);
    std::weak_ptr<tmnet::FlightRecorder> ring = flight_;
    connection_->setFrameTap([this, ring](const uint8_t *p, uint32_t n, const Threadmon__Frame &f) {
      const std::shared_ptr<tmnet::FlightRecorder> r = ring.lock();
      if (!r) return;
      const QString why = r->take(p, n, f);
      if (!why.isEmpty())
        QMetaObject::invokeMethod(
            this, [this, why] { onTriggered(why); }, Qt::QueuedConnection);
    });
  } else {
    detail_ = std::make_shared<DetailSpool>();
    if (detail_->error().isEmpty()) {
      model->keepDetailFor(kDetailNs);
      std::weak_ptr<DetailSpool> spool = detail_;
      connection_->setFrameTap([spool](const uint8_t *p, uint32_t n, const Threadmon__Frame &) {
        if (const std::shared_ptr<DetailSpool> s = spool.lock()) s->take(p, n);
      });
      // A range dragged back past the model's detail is read from the spool
      // (on the views' workers, which may outlive this page: weakly held).
      page_->viewWindow()->setOlderDetail([spool](int64_t t0, int64_t t1, tmon::SessionModel *m) {
        if (const std::shared_ptr<DetailSpool> s = spool.lock()) return s->load(t0, t1, m);
        return tmon::CaptureLoadResult{};
      });
    } else {
      qWarning("threadmon-display: %s: the session keeps all its detail in memory",
               qPrintable(detail_->error()));
      detail_.reset();
    }
  }
  // Unpacked on the connection's decoder thread; only folded in here.
  connection_->setFrameSink([model](tmon::FrameBatch &frames) { model->applyFrames(frames); });
  connect(connection_, &tmnet::ProbeConnection::closed, this, &LiveSession::onClosed);
  connect(&statusTimer_, &QTimer::timeout, this, &LiveSession::updateStatus);
  statusTimer_.start(500);
  updateStatus();
}

LiveSession::~LiveSession() {
  // The decoder thread (and its tap into the ring) stops before the ring goes.
  delete connection_;
}

uint64_t LiveSession::flightWindowNs() const {
  return flight_ ? lastNs_ : 0;
}

tmon::CaptureLoadResult LiveSession::loadDetail(int64_t t0, int64_t t1, tmon::SessionModel *model) {
  if (detail_) return detail_->load(t0, t1, model);
  tmon::CaptureLoadResult res;
  res.message = tr("this session keeps no spool of its detail (--last)");
  return res;
}

QString LiveSession::saveLast(const QString &path) {
  if (!flight_) return tr("this session keeps no flight recorder (--last)");
  return flight_->save(path, tr("saved from the display"));
}

// Due --trigger-after later, unless --trigger-limit captures were written.
void LiveSession::onTriggered(const QString &why) {
  if (triggerLimit_ > 0 && triggersDue_ >= triggerLimit_) {
    if (!limitTold_) {
      const QString said = tr("%1: not written, the limit of %2 trigger captures is reached "
                              "(--trigger-limit); later triggers write none")
                               .arg(why)
                               .arg(triggerLimit_);
      qWarning("threadmon-display: flight recorder: %s", qPrintable(said));
      page_->setNotice(tr("Flight recorder: %1").arg(said));
      limitTold_ = true;
    }
    flight_->releaseTrigger();
    return;
  }
  ++triggersDue_;
  QTimer::singleShot(std::chrono::milliseconds(triggerAfterNs_ / 1000000), this,
                     [this, why] { writeTriggered(why); });
}

// Written where --trigger-dir says, named by pid and count.
void LiveSession::writeTriggered(const QString &why) {
  const QString path = QDir(triggerDir_)
                           .filePath(QStringLiteral("threadmon-%1-trigger%2.tmcap")
                                         .arg(connection_->pid())
                                         .arg(triggered_.size() + 1));
  const QString err = flight_->save(path, why);
  flight_->releaseTrigger();
  if (!err.isEmpty()) {
    qWarning("threadmon-display: flight recorder: %s", qPrintable(err));
    page_->setNotice(tr("Flight recorder: %1").arg(err));
    return;
  }
  triggered_ << path;
  qInfo("threadmon-display: flight recorder: %s: wrote %s", qPrintable(why), qPrintable(path));
  updateStatus();
}

// From the detail spool: the recording starts as a copy of its blocks so
// far and grows with it (DetailSpool::startRecording).
QString LiveSession::startRecording(const QString &path) {
  if (flight_)
    return tr("this session keeps only its last window (--last): save it with File > Save last");
  if (!detail_) return tr("no spool file: cannot record this session");
  const QString err = detail_->startRecording(path);
  updateStatus();
  return err;
}

void LiveSession::stopRecording() {
  if (detail_) detail_->stopRecording();
  updateStatus();
}

bool LiveSession::recording() const {
  return detail_ && detail_->recording();
}

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
  if (recording()) {
    text += tr(" · ● recording to %1").arg(detail_->recordingPath());
    // Every half second into the recording's file too, should the display die.
    detail_->flush();
  }
  if (flight_) text += tr(" · flight recorder: last %1 s").arg(double(flight_->windowNs()) / 1e9);
  if (!triggered_.isEmpty()) text += tr(" · triggered: %1").arg(triggered_.last());
  page_->setStatus(text);
  if (connection_->state() != tmnet::ProbeConnection::State::Streaming) statusTimer_.stop();
}
