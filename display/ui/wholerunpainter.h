// The whole-run timeline of a long capture, drawn from its summary alone
// (RunSummary: every thread's states per second), never from the detail:
// one row per thread, one pixel column per span of the run, each column
// stacked by the share of every state in that span; a time axis above and
// the run's totals over all threads below.
#ifndef THREADMON_UI_WHOLERUNPAINTER_H
#define THREADMON_UI_WHOLERUNPAINTER_H

#include <QRect>

class QPainter;

namespace tmon {
class RunSummary;
}

namespace tmui {

struct WholeRunLayout {
  QRect plot;  // where the rows are drawn (time runs across it)
};

WholeRunLayout paintWholeRun(QPainter *p, const QRect &area, const tmon::RunSummary &sum);
// Where paintWholeRun puts the rows in area (time runs across it).
QRect wholeRunPlot(const QRect &area);

}  // namespace tmui

#endif
