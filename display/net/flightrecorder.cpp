// recorder/'s headers before any of Qt's (see flightrecorder.h).
extern "C" {
#include "ring.h"
#include "triggers.h"
}

#include <cerrno>
#include <cstring>

#include "flightrecorder.h"

namespace tmnet {

struct FlightRecorder::Ring {
  fr_ring ring;
  fr_triggers triggers{};
};

FlightRecorder::FlightRecorder(uint64_t lastNs, uint64_t afterNs, const QStringList &triggers)
    : windowNs_(lastNs + (triggers.isEmpty() ? 0 : afterNs)), lastNs_(lastNs), d_(new Ring) {
  fr_ring_init(&d_->ring, windowNs_);
  for (const QString &t : triggers) fr_trigger_parse(&d_->triggers, t.toUtf8().constData());
}

FlightRecorder::~FlightRecorder() {
  fr_ring_free(&d_->ring);
  fr_triggers_free(&d_->triggers);
}

QString FlightRecorder::triggerProblem(const QString &spec) {
  fr_triggers t{};
  const bool ok = fr_trigger_parse(&t, spec.toUtf8().constData());
  fr_triggers_free(&t);
  return ok ? QString() : QStringLiteral("unknown trigger '%1' (deadlock, wait>200ms)").arg(spec);
}

QString FlightRecorder::take(const uint8_t *payload, uint32_t len, const Threadmon__Frame &frame) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++frames_;
  fr_ring &ring = d_->ring;
  fr_ring_take(&ring, payload, len, &frame);
  char why[256];
  uint64_t atNs = 0;
  if (!fr_triggers_take(&d_->triggers, &frame, ring.start_ns, why, sizeof why, &atNs))
    return QString();
  if (ring.now_ns < quietUntilNs_) return QString();
  quietUntilNs_ = ring.now_ns + windowNs_;
  fr_ring_hold(&ring, atNs > lastNs_ ? atNs - lastNs_ : 0);
  return QString::fromUtf8(why);
}

void FlightRecorder::releaseTrigger() {
  std::lock_guard<std::mutex> lock(mutex_);
  fr_ring_release(&d_->ring);
}

QString FlightRecorder::save(const QString &path, const QString &why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (frames_ == 0) return QStringLiteral("nothing received yet");
  if (fr_ring_write(&d_->ring, path.toUtf8().constData(), why.toUtf8().constData()) != 0)
    return QStringLiteral("cannot write %1: %2").arg(path, QString::fromUtf8(std::strerror(errno)));
  return QString();
}

}  // namespace tmnet
