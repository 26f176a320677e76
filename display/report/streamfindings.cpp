#include "streamfindings.h"

#include <algorithm>

#include "findings_util.h"
#include "sessionmodel.h"

using namespace tmon;

StreamFindingsPart streamFindingsPart(const SessionModel &m, const TimeRange &span) {
  StreamFindingsPart p;
  if (span.length() <= 0) return p;
  findings_detail::dataLostFindings(m, span, &p.findings);
  findings_detail::deadlockFindings(m, span, &p.findings);
  return p;
}

void StreamFindings::add(const StreamFindingsPart &p) {
  std::vector<Finding> lost;
  for (const Finding &f : p.findings) {
    if (f.kind == FindingKind::DataLost) {
      lost.push_back(f);
      continue;
    }
    // A cycle that lasts across a window's edge is seen by both windows.
    const bool seen = std::any_of(deadlocks_.begin(), deadlocks_.end(), [&f](const Finding &d) {
      return d.threads == f.threads && d.objects == f.objects && d.t0 == f.t0;
    });
    if (!seen) deadlocks_.push_back(f);
  }
  if (!lost.empty()) dataLost_ = lost;
}

QString StreamFindings::leftOutNotice() {
  return QStringLiteral(
      "Read a window at a time (a long capture): findings other than deadlocks and lost data "
      "need the whole run's detail and are not given; open a span of it in threadmon-display "
      "for them.");
}

std::vector<Finding> StreamFindings::findings(ReportRows *rows) const {
  std::vector<Finding> out = dataLost_;
  out.insert(out.end(), deadlocks_.begin(), deadlocks_.end());
  std::stable_sort(out.begin(), out.end(), [](const Finding &a, const Finding &b) {
    return a.severity != b.severity ? a.severity < b.severity : a.kind < b.kind;
  });
  rows->info.notices << leftOutNotice();
  return out;
}
