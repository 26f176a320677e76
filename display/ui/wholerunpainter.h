// The whole-run timeline of a long capture, drawn from its summary alone
// (RunSummary: every thread's states per second), never from the detail:
// one row per thread (or, for more threads than rows, per few threads in
// tid order), one pixel column per span of the run, each column
// stacked by the share of every state in that span; a time axis above and
// the run's totals over all threads below. While the summary is still being
// built (SummaryBuild), the run's span is given and the columns of each
// chunk are painted as it comes.
#ifndef THREADMON_UI_WHOLERUNPAINTER_H
#define THREADMON_UI_WHOLERUNPAINTER_H

#include <QRect>

#include "modeltypes.h"

class QPainter;

namespace tmon {
class RunSummary;
}

namespace tmui {

struct WholeRunLayout {
  QRect plot;  // where the rows are drawn (time runs across it)
};

// run: the span drawn across (empty: the summary's own).
WholeRunLayout paintWholeRun(QPainter *p, const QRect &area, const tmon::RunSummary &sum,
                             tmon::TimeRange run = {});
// Repaints the columns of part (and the totals) over what paintWholeRun
// drew of the same summary with the same threads: a chunk just summed.
void paintWholeRunPart(QPainter *p, const QRect &area, const tmon::RunSummary &sum,
                       tmon::TimeRange run, tmon::TimeRange part);
// Where paintWholeRun puts the rows in area (time runs across it).
QRect wholeRunPlot(const QRect &area);
// The columns of plot [first, last] that show any of part of run.
std::pair<int, int> wholeRunColumns(const QRect &plot, tmon::TimeRange run, tmon::TimeRange part);

}  // namespace tmui

#endif
