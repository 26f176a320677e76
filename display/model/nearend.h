// upperBoundNear: std::upper_bound over a range in time order, starting from
// where the answer probably is. The fold asks where a new record or sample
// goes in a thread's history, nearly always among its newest entries, and
// the derivation walks a thread's records forward: a binary search over the
// whole history missed the cache at every step (the live fold of 1,000
// threads spent a tenth of its time there), so this gallops from the hint
// (1, 2, 4... elements) and searches only the span found. The same answer as
// std::upper_bound.
#ifndef THREADMON_NEAREND_H
#define THREADMON_NEAREND_H

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace tmon {

// timeOf(element) -> int64_t; the range is ordered by it; hint in [first, last].
template <typename It, typename TimeOf>
It upperBoundNear(It first, It last, It hint, int64_t t, TimeOf timeOf) {
  const auto after = [&](int64_t x, const auto &e) { return x < timeOf(e); };
  typename std::iterator_traits<It>::difference_type step = 1;
  if (hint == last || t < timeOf(*hint)) {
    It hi = hint;  // every element in [hi, last) is after t
    while (hi != first) {
      It probe = hi - first > step ? hi - step : first;
      if (timeOf(*probe) <= t) return std::upper_bound(probe + 1, hi, t, after);
      hi = probe;
      step *= 2;
    }
    return first;
  }
  It lo = hint;  // at or before t
  for (;;) {
    It probe = last - lo > step ? lo + step : last;
    if (probe == last || t < timeOf(*probe)) return std::upper_bound(lo + 1, probe, t, after);
    lo = probe;
    step *= 2;
  }
}

template <typename It, typename TimeOf>
It upperBoundNearEnd(It first, It last, int64_t t, TimeOf timeOf) {
  return upperBoundNear(first, last, last, t, timeOf);
}

}  // namespace tmon

#endif
