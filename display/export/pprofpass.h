// The pprof export of a whole capture in one pass over its decoded frames,
// without a SessionModel of the run: the waits' time per lock and waiter,
// the call sites' and the locks' counters at their last tick, the names
// from the descriptions alone (a model of Hello, ThreadStart, SyncObject,
// Stack... frames: a few KiB). What PprofSink makes of a model read whole,
// byte for byte (test_export.py, test_pprof_one_pass), at a fraction of
// the CPU: the fold of every transition into timelines and the settling
// of their intervals are what a model costs, and pprof needs neither.
//
// Only a capture whose frames the model would take as they come: anything
// it would reorder, clamp, refuse or estimate (a record out of its
// thread's order, a tick late or repeated, a frame FrameCheck corrects, a
// collection at its limit, a hidden lock or a futex word, whose waits are
// estimates from the timelines, a damaged stream) makes run() return false
// having written nothing, and the caller reads the capture into a model.
// THREADMON_EXPORT_SAY_PASS set: threadmon-export says which way it took
// and why (tests).
#ifndef THREADMON_PPROFPASS_H
#define THREADMON_PPROFPASS_H

#include <QString>

namespace tmon {

class PprofSink;

class PprofPass {
 public:
  // Feeds sink with the capture at path, the whole run, and calls its
  // finish() (*written: what it returned, *writeError its error). False,
  // the sink untouched, when the capture needs the model: why says what.
  static bool run(const QString &path, PprofSink *sink, QString *why, bool *written,
                  QString *writeError);
};

}  // namespace tmon

#endif
