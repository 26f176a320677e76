// What changed between two captures of the same program (threadmon diff):
// threads matched by name and start routine (never by tid; a pool's
// numbered names, worker-0 ... worker-99, as one group "worker-#"), sync
// objects by symbol or else by kind and call site, findings by kind and
// subject. Each change in seconds, sorted by its size (the wall time
// first); a change within the noise threshold (a share of the larger
// figure, a floor, and for a group of threads the spread between its
// threads inside each capture) is called noise.
#ifndef THREADMON_CAPTUREDIFF_H
#define THREADMON_CAPTUREDIFF_H

#include <QJsonObject>
#include <QString>

#include <vector>

#include "reportrows.h"

namespace tmon {

struct DiffOptions {
  double noiseShare = 0.10;  // of the larger of the two figures
  double noiseFloorS = 0.005;
};

struct DiffChange {
  enum What { Wall, Object, Thread };
  What what = Wall;
  QString subject;  // "the wait on `mutex_hold!big_lock`", "`waiter-#` (2 threads): Blocked: mutex"
  double before = 0, after = 0;  // seconds
  double noiseS = 0;             // the threshold it was judged by
  bool noise() const;
  QString text() const;  // "the wait on `x` fell from 2.1 s to 0.3 s (-86%)"
};

struct DiffFinding {
  QString kind, subject, message;  // message: the capture's own words
};

struct CaptureDiff {
  DiffOptions options;
  QString beforeExe, afterExe;
  QString beforeVersion, afterVersion;  // the probe's, from each capture's Hello
  std::vector<DiffChange> changes;  // sorted: wall time, then by size of change
  std::vector<DiffFinding> gone, appeared, kept;
};

CaptureDiff diffRows(const ReportRows &before, const ReportRows &after, const DiffOptions &opt);
QString diffText(const CaptureDiff &d, int top);
QJsonObject diffJson(const CaptureDiff &d);

}  // namespace tmon

#endif
