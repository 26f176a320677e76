// The walk every export takes over a capture: a model read whole (a small
// capture, or the display's own) or a long capture a window at a time
// through its index (CaptureWindow), each window's model handed to a sink
// and dropped, so that an export's memory is one window's model and what
// the sink keeps, however long the capture.
#ifndef THREADMON_EXPORTWALK_H
#define THREADMON_EXPORTWALK_H

#include <QString>

#include <cstdint>

#include "capturereader.h"
#include "modeltypes.h"

namespace tmon {

class SessionModel;

class ExportSink {
 public:
  virtual ~ExportSink() = default;
  // One window's model; span is the part of the export it stands for
  // (windows follow each other without overlap, first to last). The model
  // holds a warm-up before span: read only inside span.
  virtual void window(const SessionModel &m, const TimeRange &span, bool first, bool last) = 0;
  // All windows given: writes what is left; false with *error set when the
  // output could not be written.
  virtual bool finish(QString *error) = 0;
  // Where the model the next windows are given begins (a segment's first
  // window's start): what a model gives from there on is final, so a sink
  // may keep events back across those windows' edges and no further.
  void segmentFrom(int64_t t) { segmentFrom_ = t; }

 protected:
  int64_t segmentFrom_ = INT64_MIN;
};

struct ExportOptions {
  // Read a window at a time: Auto does it for captures over 8 MiB.
  enum Mode { Auto, Stream, Whole };
  Mode mode = Auto;
  int64_t chunkNs = 10'000'000'000;
  // Windows read into one model (a segment; at least one window): memory
  // follows it, and only its edges can cut what the whole read joins.
  int64_t segmentNs = 10'000'000'000;
  // Only this part of the run (session time); t1 <= t0: the whole run.
  TimeRange range;
};

// Feeds sink with the capture at path; the result says whether the capture
// was whole (Damaged: cut short but exported up to where it was cut).
// Calls sink->finish() unless the capture is unreadable.
CaptureLoadResult exportCapture(const QString &path, ExportSink *sink, const ExportOptions &opt,
                                QString *writeError);

// The same from a model already loaded (the display's), over r.
bool exportModel(const SessionModel &m, const TimeRange &r, ExportSink *sink, QString *writeError);

}  // namespace tmon

#endif
