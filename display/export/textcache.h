// TextCache: texts a writer makes once per key (a waiter's, a releaser's,
// a CPU and object's) and copies into millions of events, found by a hash
// of the key.
// Open addressing over pointers into a deque: an entry never moves, so a
// writer may hold several while others are added (a table by hash that
// replaced an entry on a collision had to copy each out). At kLimit
// entries the table starts again empty, before the entry it adds (keys of
// two threads each may be millions). An empty slot holds kNoKey, a key
// the writer never asks for: a lookup compares the key alone (its check
// for an empty slot was a tenth of a lookup).
#ifndef THREADMON_TEXTCACHE_H
#define THREADMON_TEXTCACHE_H

#include <cassert>
#include <cstdint>
#include <deque>
#include <vector>

namespace tmon {

template <typename Entry, uint64_t kNoKey>
class TextCache {
 public:
  // The entry of key (never kNoKey), made by make(key, Entry *) the first time (not
  // inlined: once a key; make is passed by value, and best captures no
  // more than a pointer, which it has in a register: more captures were
  // gathered for it on every call).
  template <typename Make>
  const Entry &get(uint64_t key, Make make) {
    const Slot &s = slots_[slot(key)];
    return __builtin_expect(s.key == key, 1) ? *s.entry : made(key, make);
  }

 private:
  // The entry of key, found past its slot or made.
  template <typename Make>
  [[gnu::noinline]] const Entry &made(uint64_t key, Make make) {
    const size_t mask = slots_.size() - 1;
    size_t i = slot(key);
    assert(key != kNoKey);
    for (; slots_[i].key != kNoKey; i = (i + 1) & mask)
      if (slots_[i].key == key) return *slots_[i].entry;
    if (entries_.size() >= kLimit) {
      entries_.clear();
      slots_.assign(slots_.size(), Slot{});
      i = slot(key);
    }
    Entry *e = &entries_.emplace_back();
    make(key, e);
    slots_[i] = Slot{key, e};
    if (2 * entries_.size() > slots_.size()) grow();  // at most half full
    return *e;
  }

  struct Slot {
    uint64_t key = kNoKey;
    Entry *entry = nullptr;
  };
  static constexpr int kFirstBits = 10;
  static constexpr size_t kLimit = 1 << 16;
  std::vector<Slot> slots_ = std::vector<Slot>(size_t(1) << kFirstBits);
  int shift_ = 64 - kFirstBits;  // of a key's hash to its slot
  std::deque<Entry> entries_;

  size_t slot(uint64_t key) const { return size_t((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void grow() {
    std::vector<Slot> old(2 * slots_.size());
    shift_--;
    old.swap(slots_);
    const size_t mask = slots_.size() - 1;
    for (const Slot &s : old) {
      if (s.key == kNoKey) continue;
      size_t i = slot(s.key);
      while (slots_[i].key != kNoKey) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
};

}  // namespace tmon

#endif
