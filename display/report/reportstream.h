// StreamedReport: the report's rows of a capture too long to hold, read
// through its index (CaptureWindow) a window at a time, each window's model
// summed into the rows; the windows of a segment (kSegmentNs) share one
// model, read on (each record once) and dropped at the segment's end.
// Memory: the segment's model (about 110 MB for 20 s of 100 busy threads)
// and the rows.
//
// Sums add up per window (thread states and CPUs, user threads, waits by
// waiter and by waiter x holder); cumulative counters (LWPs, sync objects,
// call sites) are their newest value less their value at the session start,
// as a whole read takes them. Hidden locks' waits are estimated once, from
// every window's inputs summed; a wait open at a window's end is blamed
// when a later window says who released it. Findings are each window's,
// merged (streamfindings.h). A flight recorder's capture has a window edge
// where its kept detail begins, and its findings are those windows' alone.
#ifndef THREADMON_REPORTSTREAM_H
#define THREADMON_REPORTSTREAM_H

#include <QString>

#include <cstdint>

#include "capturereader.h"
#include "reportrows.h"

class StreamedReport {
 public:
  // 5 s: two windows in flight hold what one 10 s window of the display
  // does (about 130 MB for 100 busy threads; 10 s windows took 225 MB).
  static constexpr int64_t kChunkNs = 5'000'000'000;
  // A capture no longer than the display's window (10 s) is read in one go,
  // holding what that window would.
  static constexpr int64_t kWholeUpToNs = 10'000'000'000;

  // A capture larger than this is never read whole unless asked (--whole):
  // a whole read holds about 11 bytes of memory per byte of capture (770 MB
  // for 70 MB), and a forged index or block header once sent one there.
  static constexpr qint64 kWholeUpToBytes = qint64(64) << 20;
  // The most bytes of records one window of kChunkNs may read (scaled with
  // the window): 3.2 MB/s on disk is about 1,200 busy threads. Records whose
  // times are too few to cut windows by (all unknown: forged) would put a
  // whole capture in one window.
  static constexpr qint64 kMaxWindowBytes = qint64(16) << 20;

  // Whether the capture at path is to be read a window at a time: its
  // records span more than kWholeUpToNs, whatever its size on disk, so
  // memory follows the window and not the file, or it is larger than
  // wholeUpToBytes (format 1's plain frames: up to four times that, at most
  // CaptureWindow::kPlainWholeUpToBytes). False for what is no capture.
  static bool wanted(const QString &path, qint64 wholeUpToBytes = kWholeUpToBytes);

  // Windows are read kSegmentNs at a time into one model (each record
  // decoded and folded once; a window's model starts from the window
  // before's end state, not from a warm-up re-read), the segment's first
  // as a window alone is (descriptions, CaptureWindow::kWarmUpNs before it).
  // The model holds the segment read so far: memory follows kSegmentNs.
  static constexpr int64_t kSegmentNs = 20'000'000'000;

  // Fills rows from the capture at path, chunkNs at a time, segmentNs of
  // windows to a model (at least one window). Unreadable when the capture
  // has no records to seek to (format 1: read it whole); Damaged with the
  // first damage seen.
  static tmon::CaptureLoadResult read(const QString &path, ReportRows *rows,
                                      int64_t chunkNs = kChunkNs, int64_t segmentNs = kSegmentNs);

  // How threadmon-report and threadmon-diff read a capture: Auto streams it
  // when wanted(); a streamed read that cannot be made falls back to a
  // whole one only for a capture of at most wholeUpToBytes (the fuzzers
  // pass 0, so that their small inputs take the long captures' path).
  enum class Mode { Auto, Stream, Whole };
  static tmon::CaptureLoadResult rows(const QString &path, ReportRows *rows, Mode mode = Mode::Auto,
                                      int64_t chunkNs = kChunkNs,
                                      qint64 wholeUpToBytes = kWholeUpToBytes,
                                      int64_t segmentNs = kSegmentNs);
};

#endif
