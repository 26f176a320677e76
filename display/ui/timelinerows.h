// The timeline's rows, laid out from the model's pools (pools.h) as the
// Threads view lays out its bars: one row per pool (its typical threads'
// state mix), one for its outliers when they are many, and one per thread
// shown on its own (a pool's threads once unfolded, a few outliers, the
// main and probe threads, threads alone in their pool).
#ifndef THREADMON_UI_TIMELINEROWS_H
#define THREADMON_UI_TIMELINEROWS_H

#include <QSet>
#include <QString>
#include <utility>
#include <vector>

#include "pools.h"

namespace tmui {

struct TimelineRow {
  enum class Kind { Pool, Outliers, Thread };
  Kind kind = Kind::Thread;
  int thread = -1;           // model index (Thread rows)
  QString key;               // an aggregate's Pool::key or outliersKey: its mix, its fold
  QString label;             // aggregates: "worker-#", "outliers of worker-#"
  QString detail;            // aggregates: "pool of 1,499 · 15 outliers", "pool of 400 · io_main"
  std::vector<int> threads;  // aggregates: the model indices their mix sums
  bool open = false;         // aggregates: unfolded
  int outliers = 0;          // Pool rows: its outliers (not in `threads`)
  int indent = 0;
  bool outlier = false;      // Thread rows: an outlier of its pool
  bool aggregate() const { return kind != Kind::Thread; }
};

struct TimelineLayout {
  std::vector<TimelineRow> rows;
  std::vector<int> rowOfThread;  // model index -> its row, or its pool's (-1: none)
  int shown = 0;                 // threads in the rows
  int pools = 0;                 // grouped pools
  // Rows to fit on screen: those shown before any click (so that unfolding
  // a pool keeps every row's height and its label stays under the mouse):
  // threads, and aggregates.
  int fitThreads = 0, fitAggregates = 0;
};

// Every aggregate a layout can show (each grouped pool's typical members,
// and its outliers when more than kOutliersListed): key and model indices.
// Their mixes are computed once per window, whatever is folded.
std::vector<std::pair<QString, std::vector<int>>> timelineAggregates(const tmon::PoolLayout &l);

// The rows for the pools folded as `toggled` says (pools.h unfoldedPools),
// sorted by `sort` (-1: creation order); threadCount sizes rowOfThread.
TimelineLayout timelineRows(const tmon::PoolLayout &l, const QSet<QString> &toggled, int sort,
                            int threadCount);

}  // namespace tmui

#endif
