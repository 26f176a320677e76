// Thousands at a glance: threads (or LWPs, user threads) grouped into pools
// by start routine, then by name with its digits stripped ("worker-#"), one
// aggregate per pool with the spread across its members, and the members
// whose state mix is unlike the rest pulled out as outliers. Also the rows a
// view shows for them (pools, expanded members, outliers), filtered and
// sorted by any state. Widgets only draw the result.
#ifndef THREADMON_MODEL_POOLS_H
#define THREADMON_MODEL_POOLS_H

#include <QSet>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <vector>

namespace tmon {

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

struct Pool {
  QString routine;
  QString pattern;             // the members' name, digit runs as '#'
  std::vector<int> members;    // positions in the items: the typical ones
  std::vector<int> outliers;   // members unlike the rest, most unlike first
  std::vector<double> values;  // the typical members' values summed
  double total = 0;            // and their totals
  std::vector<double> low, high;  // per category, the least and most share (0..1) of a typical member
  int size() const { return int(members.size() + outliers.size()); }
  // Shown as one aggregate row (else its members are shown as they are).
  bool grouped() const { return size() >= kMinGrouped; }
  double share(size_t category) const { return total > 0 ? values[category] / total : 0.0; }
  // Survives rebuilds: what the view's expanded set holds.
  QString key() const { return routine + QLatin1Char('\n') + pattern; }
  // "worker-#" or the routine when the names say nothing.
  QString label() const;
  static constexpr int kMinGrouped = 3;
};

// "worker-12" -> "worker-#", "pool-3-thread-14" -> "pool-#-thread-#".
QString namePattern(const QString &name);

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

// The filter box: the item's name, start routine or id contains `text`
// (case-insensitive), or `text` names a category (a word of its label, e.g.
// "mutex", "runnable") that takes at least a quarter of the item's time.
bool itemMatches(const PoolItem &item, const QString &text, const QStringList &categoryLabels);

// One row of a pooled view, in order.
struct PoolRow {
  enum class Kind { Pool, Member, Outlier, Single };
  Kind kind = Kind::Single;
  int pool = -1;
  int item = -1;  // position in the items (-1 for a Pool row)
};

// Pools, largest first, or by `sortCategory`'s share, most first (-1: by
// size); a grouped pool is one row, followed by its outliers (always) and,
// when its key is in `expanded`, its typical members; a pool too small to
// group shows its members as Single rows.
std::vector<PoolRow> poolRows(const std::vector<PoolItem> &items, const std::vector<Pool> &pools,
                              const QSet<QString> &expanded, int sortCategory);

}  // namespace tmon

#endif
