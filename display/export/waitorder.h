// The order a window's waits are written in (TimelineSink), by start,
// waiter, object and end, and how it is found.
#ifndef THREADMON_WAITORDER_H
#define THREADMON_WAITORDER_H

#include <cstdint>
#include <utility>
#include <vector>

#include "exporttimeline.h"
#include "podvector.h"

namespace tmon {

// Below, equal to or above 0 as x comes before y, ties with it, or comes
// after it in the order the waits are written: by start, waiter, object
// and end.
[[gnu::always_inline]] inline int compareWaits(const ExportWait &x, const ExportWait &y) {
  if (x.start != y.start) return x.start < y.start ? -1 : 1;
  if (x.waiter != y.waiter) return x.waiter < y.waiter ? -1 : 1;
  if (x.objectId != y.objectId) return x.objectId < y.objectId ? -1 : 1;
  if (x.end != y.end) return x.end < y.end ? -1 : 1;
  return 0;
}

using WaitOrder = std::vector<std::pair<int64_t, uint32_t>>;

// The waits' places in that order, as std::sort of their (start, place)
// pairs under it gives them. They go into buckets by start (about two
// waits a bucket, a power of two ns each: a count, then each place put
// in its bucket), then sorted by insertion in one pass (a wait moves
// back only within its bucket; bucket by bucket, a std::sort for one of
// many, when one holds many). half.tmcap's windows have four long runs in
// order (one per sync object) and a few short ones; merging the runs'
// heads was 85 instructions a wait, most of it the scan of the heads.
// Two waits tied on all four (none in half.tmcap or the corpus) meet in
// a bucket: then the std::sort of the pairs decides, as before (without
// ties the order is the same).
// pairs and buckets: scratch, kept by the caller window to window.
void orderWaits(const PodVector<ExportWait> &waits, std::vector<uint32_t> *order, WaitOrder *pairs,
                std::vector<uint32_t> *buckets);

}  // namespace tmon

#endif
