// UserThreads: the user threads (M:N contexts) of a session and the spans
// each spent on an LWP, folded from UserThread and UserSwitches frames
// (docs/format.md, "User threads"). Plain C++; the states of a user thread
// come from its LWPs' own states over those spans (SessionModel).
#ifndef THREADMON_USERTHREADS_H
#define THREADMON_USERTHREADS_H

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "framecheck.h"
#include "modeltypes.h"
#include "threadmon.pb-c.h"

namespace tmon {

class UserThreads {
 public:
  struct Entry {
    UserThreadInfo info;
    std::vector<UserSpan> spans;  // closed spans, in the order they closed
  };

  void applyUserThread(const Threadmon__UserThread &u, FrameCheck *check);
  void applySwitches(const Threadmon__UserSwitches &s, FrameCheck *check);

  int count() const { return int(entries_.size()); }
  const Entry &entry(int index) const { return entries_[size_t(index)]; }
  int indexOf(uint32_t id) const;  // -1 when unknown
  // Spans of user thread index overlapping r, clipped to it, in time order;
  // a span still open ends at openEnd.
  std::vector<UserSpan> spans(int index, const TimeRange &r, int64_t openEnd) const;
  size_t bytes() const;

 private:
  Entry *entryFor(uint32_t id, int64_t t, FrameCheck *check);
  struct Open {
    uint32_t id = 0;
    int64_t since = 0;
  };
  std::vector<Entry> entries_;
  std::unordered_map<uint32_t, int> index_;
  std::unordered_map<uint32_t, Open> open_;  // per LWP tid
  size_t spanCount_ = 0;
};

}  // namespace tmon

#endif
