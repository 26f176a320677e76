// TidIndex: tid -> index into a vector of threads, looked up once per record
// of every frame. A hash map's lookup (a division and a node in another
// cache line) was 5-8% of folding a capture window; a direct-mapped table by
// the tid's low bits answers nearly all of them first, since a program's
// tids are mostly consecutive.
#ifndef THREADMON_TIDINDEX_H
#define THREADMON_TIDINDEX_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace tmon {

class TidIndex {
 public:
  // -1 when tid has no index. Only the folding (one thread) fills the table:
  // the const lookup writes nothing, so readers may share it.
  int find(uint32_t tid) const {
    const Slot &s = slots_[tid & kMask];
    if (s.index >= 0 && s.tid == tid) return s.index;
    auto it = all_.find(tid);
    return it == all_.end() ? -1 : it->second;
  }
  int findAndRemember(uint32_t tid) {
    const Slot &s = slots_[tid & kMask];
    if (s.index >= 0 && s.tid == tid) return s.index;
    auto it = all_.find(tid);
    if (it == all_.end()) return -1;
    slots_[tid & kMask] = Slot{tid, it->second};
    return it->second;
  }
  void insert(uint32_t tid, int index) {
    all_[tid] = index;
    slots_[tid & kMask] = Slot{tid, index};
  }
  void erase(uint32_t tid) {
    all_.erase(tid);
    Slot &s = slots_[tid & kMask];
    if (s.tid == tid) s.index = -1;
  }
  size_t size() const { return all_.size(); }
  size_t bytes() const { return sizeof(*this) + all_.size() * 32; }

 private:
  static constexpr size_t kSlots = 1024;
  static constexpr uint32_t kMask = kSlots - 1;
  struct Slot {
    uint32_t tid = 0;
    int index = -1;
  };
  std::array<Slot, kSlots> slots_{};
  std::unordered_map<uint32_t, int> all_;
};

}  // namespace tmon

#endif
