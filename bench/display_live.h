// tm-bench-display --live-paced: a live session at the stream's own pace.
//
// A sender thread plays a stream (a capture, or the synthetic one) to the
// display over loopback TCP at the times its ticks carry, as a probe would;
// the display side is the application's own: ProbeConnection and
// LiveSession with a shown session page. Reported: the GUI thread's and the
// process's CPU time over the run (the sender's own CPU taken out), the lag
// from a frame's arrival to every view on screen showing it, the backlog of
// frames received but not yet applied, RSS, and how far behind the last
// frame was shown (docs/benchmarks.md, "Live").
#ifndef THREADMON_BENCH_DISPLAY_LIVE_H
#define THREADMON_BENCH_DISPLAY_LIVE_H

#include <QByteArray>
#include <QStringList>

namespace livebench {

struct Options {
  QStringList views;   // raise these (one at a time, a run each); empty: the page as it opens
  double speed = 1.0;  // 2: the stream's ticks twice as fast
};

// Returns the process exit status.
int runPaced(const QByteArray &stream, const Options &options);

}  // namespace livebench

#endif
