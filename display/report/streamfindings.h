// Findings of a capture read a window at a time (StreamedReport). Most
// rules weigh the whole run's detail (every wait, every interval, shares of
// summed lifetimes against thresholds) and a window's share is not the
// run's: those are not given, and a notice says so. Deadlocks and lost data
// are facts of the moment they happen: each window's are kept (a deadlock
// seen by two windows once), the newest window's lost-data finding (its
// counters are the run's so far).
#ifndef THREADMON_STREAMFINDINGS_H
#define THREADMON_STREAMFINDINGS_H

#include <QString>

#include <vector>

#include "findings.h"
#include "reportrows.h"

namespace tmon {
class SessionModel;
}

struct StreamFindingsPart {
  std::vector<tmon::Finding> findings;  // deadlock and data_lost only
};

// What a window's model says over span.
StreamFindingsPart streamFindingsPart(const tmon::SessionModel &m, const tmon::TimeRange &span);

class StreamFindings {
 public:
  void add(const StreamFindingsPart &p);
  // The findings, most severe first; adds the notice of what was left out
  // to rows.info.notices.
  std::vector<tmon::Finding> findings(ReportRows *rows) const;

  static QString leftOutNotice();

 private:
  std::vector<tmon::Finding> deadlocks_;
  std::vector<tmon::Finding> dataLost_;
};

#endif
