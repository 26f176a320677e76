// The live display's flight recorder (threadmon-display --last): the same
// ring as `threadmon record --last` (recorder/ring.h) kept beside a live
// session: the session's descriptions whole, its detail for the last window
// only, and what the dropped detail leaves behind (every thread's, object's
// and CPU's latest counters), so that a capture saved from it is a normal
// one with whole-run totals. Fed on the connection's decoder thread; saved
// from any thread (a mutex keeps the two apart).
#ifndef THREADMON_NET_FLIGHTRECORDER_H
#define THREADMON_NET_FLIGHTRECORDER_H

#include <QString>
#include <QStringList>
#include <cstdint>
#include <memory>
#include <mutex>

#include "threadmon.pb-c.h"

namespace tmnet {

class FlightRecorder {
 public:
  // The detail of the last lastNs; with triggers ("deadlock", "wait>200ms":
  // recorder/triggers.h; parse them first with triggerProblem()) also
  // afterNs more, what follows a trigger until its capture is written.
  FlightRecorder(uint64_t lastNs, uint64_t afterNs, const QStringList &triggers);
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder &) = delete;
  FlightRecorder &operator=(const FlightRecorder &) = delete;

  // "" when spec is a trigger, else one line saying what is wrong.
  static QString triggerProblem(const QString &spec);

  uint64_t windowNs() const { return windowNs_; }
  // One checked frame (the decoder thread). Returns why a trigger fired,
  // else "": at most one a window, so a condition that lasts writes once.
  // A trigger that fired holds the window before it in the ring until
  // releaseTrigger(), after its capture is saved (or not to be written).
  QString take(const uint8_t *payload, uint32_t len, const Threadmon__Frame &frame);
  void releaseTrigger();
  // Writes a capture of what the ring holds; "" or one line saying what failed.
  QString save(const QString &path, const QString &why);

 private:
  // recorder/'s C structs, kept out of this header: keymap.h names a
  // field "slots", which Qt defines as a macro.
  struct Ring;
  uint64_t windowNs_, lastNs_;
  mutable std::mutex mutex_;
  std::unique_ptr<Ring> d_;
  uint64_t quietUntilNs_ = 0;
  uint64_t frames_ = 0;
};

}  // namespace tmnet

#endif
