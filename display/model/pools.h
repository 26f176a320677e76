// Thousands at a glance: threads (or LWPs, user threads) grouped into pools
// by start routine, then by name with its digits stripped ("worker-#"), one
// aggregate per pool with the spread across its members, and the members
// whose state mix is unlike the rest pulled out as outliers. Also the rows a
// view shows for them (pools, expanded members, outliers), filtered and
// sorted by any state. Widgets only draw the result.
#ifndef THREADMON_MODEL_POOLS_H
#define THREADMON_MODEL_POOLS_H

#include <QHash>
#include <QSet>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <vector>

namespace tmon {

class SessionModel;
struct WaitPair;
struct TimeRange;

// One thing to pool: its time per category (final states, LWP microstates).
struct PoolItem {
  int index = -1;       // the caller's (thread index)
  uint32_t id = 0;      // tid, or user thread id
  QString name;         // thread name
  QString routine;      // start routine; "" when unknown
  bool alone = false;   // never pooled (the main thread, the probe's)
  std::vector<double> values;
  double total = 0;     // 100 %; when 0 the sum of values
  double share(size_t category) const;
};

// Some items summed: their values, totals, and each category's least and
// most share (0..1) among them (the spread).
struct PoolStats {
  std::vector<double> values;
  double total = 0;
  std::vector<double> low, high;
  double share(size_t category) const { return total > 0 ? values[category] / total : 0.0; }
};

struct Pool {
  QString routine;
  QString pattern;             // the members' name, digit runs as '#'
  std::vector<int> members;    // positions in the items: the typical ones
  std::vector<int> outliers;   // members unlike the rest, most unlike first
  PoolStats typical;           // of the members
  PoolStats outlying;          // of the outliers
  int size() const { return int(members.size() + outliers.size()); }
  // Shown as one aggregate row (else its members are shown as they are).
  bool grouped() const { return size() >= kMinGrouped; }
  double share(size_t category) const { return typical.share(category); }
  // Survive rebuilds: what the view's expanded set holds, for the typical
  // members and for the outliers when they are many.
  QString key() const { return routine + QLatin1Char('\n') + pattern; }  // as poolKey()
  QString outliersKey() const { return key() + QStringLiteral("\noutliers"); }
  // "worker-#" or the routine when the names say nothing.
  QString label() const;
  // The start routine's function: "worker_main" of "server!worker_main+0x24".
  QString routineName() const;
  static constexpr int kMinGrouped = 3;
};

// "worker-12" -> "worker-#", "pool-3-thread-14" -> "pool-#-thread-#".
QString namePattern(const QString &name);
// The pool a thread of this start routine and name falls in (Pool::key).
QString poolKey(const QString &routine, const QString &name);

// A member is an outlier when one category's share is this far (0..1) from
// the pool's median, in pools of at least kMinForOutliers, and as long as
// fewer than a third of the pool are (else the pool is just mixed: its
// spread says so).
constexpr double kOutlierDistance = 0.25;
constexpr int kMinForOutliers = 6;

// Pools of items, largest first (ties by label). Items with no time
// (total and values 0) are left out.
std::vector<Pool> poolItems(const std::vector<PoolItem> &items);

// The pool of each item position (-1 for left-out items).
std::vector<int> poolOfItems(const std::vector<Pool> &pools, size_t itemCount);

// The session's threads alive in r as items: their time in each final
// state (FinalState order, the runtime-attributed states), the main thread
// and the probe's alone. What the Threads view and the timeline pool, so
// both show the same pools and outliers.
std::vector<PoolItem> threadPoolItems(const SessionModel &m, const TimeRange &r);

// The filter box: the item's name, start routine or id contains `text`
// (case-insensitive), or `text` names a category (a word of its label, e.g.
// "mutex", "runnable") that takes at least a quarter of the item's time.
class ItemFilter {
 public:
  ItemFilter(const QString &text, const QStringList &categoryLabels);
  bool matches(const PoolItem &item) const;

 private:
  QString text_;
  std::vector<size_t> categories_;  // the ones `text` names
};

// One row of a pooled view, in order.
struct PoolRow {
  enum class Kind { Pool, Member, Outliers, Outlier, Single };
  Kind kind = Kind::Single;
  int pool = -1;
  int item = -1;  // position in the items (-1 for a Pool or Outliers row)
};

// Outliers of a pool listed one by one up to this many; more are one
// Outliers row (their own aggregate) until expanded.
constexpr size_t kOutliersListed = 3;

// Pools, largest first, or by `sortCategory`'s share, most first (-1: by
// size); a grouped pool is one row, followed by its outliers (one by one
// when few, else one Outliers row, followed by them one by one when its
// outliersKey is in `expanded`) and, when its key is in `expanded`, its typical members; a pool too
// small to group shows its members as Single rows.
std::vector<PoolRow> poolRows(const std::vector<PoolItem> &items, const std::vector<Pool> &pools,
                              const QSet<QString> &expanded, int sortCategory);

// Items filtered and pooled: the costly part of a pooled view's layout
// (tens of milliseconds for 10,000 items), done on a worker thread at scale.
struct PoolLayout {
  std::vector<PoolItem> items;  // those the filter kept
  std::vector<size_t> source;   // item position -> position in the input
  std::vector<Pool> pools;
  int shown = 0;    // items in the pools
  int grouped = 0;  // pools shown as one row
};
PoolLayout poolLayout(const std::vector<PoolItem> &all, const QString &filter,
                      const QStringList &categoryLabels);

// Pools start unfolded while every item fits on about a screen.
constexpr size_t kUnfoldedUpTo = 40;
// The keys (Pool::key, outliersKey) unfolded: every pool while the layout
// has kUnfoldedUpTo items or fewer, else none; those in `toggled` (clicked)
// the other way.
QSet<QString> unfoldedPools(const PoolLayout &layout, const QSet<QString> &toggled);

// How many threads of the session (the main and the probe's aside) each
// poolKey has.
QHash<QString, int> poolSizes(const SessionModel &m);

// The who-blocks-whom matrix by pool: each thread stands for its pool when
// the session has at least Pool::kMinGrouped threads of that pool, else for
// itself; the waits summed by those parties.
struct PoolPairs {
  // waiter and holder: party ids, 1-based; holder 0 stays unknown (no pool).
  std::vector<WaitPair> pairs;
  QStringList parties;          // party id - 1 -> "worker-# (500 threads)", "stall (2417)"
  int pooled = 0;               // parties that are pools
};
PoolPairs poolPairs(const SessionModel &m, const std::vector<WaitPair> &pairs);

}  // namespace tmon

#endif
