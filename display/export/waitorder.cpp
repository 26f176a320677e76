#include "waitorder.h"

#include <algorithm>

namespace tmon {

void orderWaits(const PodVector<ExportWait> &waits, std::vector<uint32_t> *order, WaitOrder *pairs,
                std::vector<uint32_t> *shortRuns) {
  constexpr uint32_t kShortRun = 64;
  struct Head {
    uint32_t at, end;
    const uint32_t *places;  // the short runs' order; null: at is the place
    uint32_t place() const { return places ? places[at] : at; }
  };
  std::vector<Head> heads;
  std::vector<int64_t> starts;  // each head's next start, apart: the scan below reads them
  const uint32_t n = uint32_t(waits.size());
  order->resize(n);
  pairs->clear();  // the short runs' waits
  bool tie = false;
  for (uint32_t i = 1, from = 0; i <= n && !tie; i++) {
    if (i < n) {
      const int c = compareWaits(waits[i - 1], waits[i]);
      tie = c == 0;
      if (c < 0) continue;
    }
    if (i - from >= kShortRun) {
      heads.push_back(Head{from, i, nullptr});
      starts.push_back(waits[from].start);
    } else {
      for (uint32_t j = from; j < i; j++) pairs->emplace_back(waits[j].start, j);
    }
    from = i;
  }
  const auto pairBefore = [&waits](const std::pair<int64_t, uint32_t> &a,
                                   const std::pair<int64_t, uint32_t> &b) {
    if (a.first != b.first) return a.first < b.first;
    return compareWaits(waits[a.second], waits[b.second]) < 0;
  };
  shortRuns->clear();
  if (!pairs->empty() && !tie) {
    std::sort(pairs->begin(), pairs->end(), pairBefore);
    for (size_t i = 0; i < pairs->size(); i++) {
      shortRuns->push_back((*pairs)[i].second);
      tie = tie || (i > 0 && !pairBefore((*pairs)[i - 1], (*pairs)[i]));
    }
    heads.push_back(Head{0, uint32_t(shortRuns->size()), shortRuns->data()});
    starts.push_back((*pairs)[0].first);
  }
  size_t k = heads.size();
  const int64_t *const start = starts.data();
  for (uint32_t *out = order->data(), *end = out + n; out != end && !tie; out++) {
    size_t best = 0;
    int64_t least = start[0];
    for (size_t h = 1; h < k; h++) {
      if (start[h] != least) {
        if (start[h] < least) {
          best = h;
          least = start[h];
        }
        continue;
      }
      const int c = compareWaits(waits[heads[h].place()], waits[heads[best].place()]);
      if (c == 0) tie = true;  // (a later head's must not clear it)
      if (c < 0) best = h;
    }
    Head &head = heads[best];
    *out = head.place();
    if (++head.at < head.end) {
      starts[best] = waits[head.place()].start;
    } else {
      --k;
      head = heads[k];
      starts[best] = starts[k];
    }
  }
  if (!tie) return;
  pairs->resize(n);
  for (uint32_t i = 0; i < n; i++) (*pairs)[i] = {waits[i].start, i};
  std::sort(pairs->begin(), pairs->end(), pairBefore);
  for (uint32_t i = 0; i < n; i++) (*order)[i] = (*pairs)[i].second;
}

}  // namespace tmon
