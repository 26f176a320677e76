// FrameCheck: the one gate between the wire and the model. Every value a
// decoded frame carries (times, CPU numbers, counters, ids, enum values,
// string and list lengths) is checked here, in place, before SessionStore
// folds the frame in; the store also asks it before a per-session collection
// grows past its bound. What it drops or clamps is counted per kind and
// said in one line each (SessionInfo::inputWarnings).
//
// Why: the store's arithmetic and memory assume sane values. A time of 2^63
// made the findings allocate without end, a CPU number of 2^28 sized every
// per-CPU vector to gigabytes. Past this gate no time lies outside the
// session's window, so differences of times and sums of a few thousand of
// them fit an int64, and nothing from the wire sizes an allocation.
#ifndef THREADMON_FRAMECHECK_H
#define THREADMON_FRAMECHECK_H

#include <QStringList>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "threadmon.pb-c.h"

namespace tmon {

// An enum field as the wire gave it. protobuf-c stores any number there,
// and loading one the enum cannot hold through the enum's type is undefined
// behaviour: it is read as the int it is stored as.
template <typename E>
int wireEnum(const E *v) {
  static_assert(sizeof(E) == sizeof(int), "protobuf-c stores enums as int");
  int x;
  std::memcpy(&x, v, sizeof x);
  return x;
}

namespace limits {
// CLOCK_MONOTONIC counts from boot: 2^58 ns is nine years of uptime. A
// counter of nanoseconds cannot exceed the clock either.
constexpr uint64_t kMaxTimeNs = uint64_t(1) << 58;
constexpr uint64_t kMaxCounter = kMaxTimeNs;
// The session's window: the model packs interval times as 48-bit offsets
// (ThreadTimeline), from 2^40 ns (18 min) before the first time seen.
constexpr int64_t kBeforeFirstNs = int64_t(1) << 40;
constexpr int64_t kWindowNs = (int64_t(1) << 48) - 1;  // 78 hours
// CPU numbers 0..kMaxCpus-1 (the timeline keeps 12 bits, one of them "none").
constexpr int kMaxCpus = 4095;
constexpr uint64_t kMaxTickIntervalNs = 60'000'000'000;
// Per-session collections a few bytes of input could otherwise fill.
constexpr size_t kMaxThreads = 65536;
constexpr size_t kMaxSyncObjects = 65536;
// User threads (M:N): ids 1..kMaxUserThreadId (the probe makes at most
// 65536); the model keeps at most kMaxUserThreads of them, and at most
// kMaxUserSpans on-LWP spans in all.
constexpr uint32_t kMaxUserThreadId = 1u << 20;
constexpr size_t kMaxUserThreads = 65536;
constexpr size_t kMaxUserSpans = 4u << 20;
constexpr size_t kMaxStacks = 65536;
constexpr size_t kMaxSites = 65536;
constexpr size_t kMaxSitesPerObject = 1024;
constexpr int kMaxNotices = 64;
// Spans of lost detail kept (DetailLoss); later ones join the last.
constexpr size_t kMaxDetailLosses = 4096;
// Strings (names, paths, frames, notices) and lists of them.
constexpr size_t kMaxStringBytes = 4096;
constexpr size_t kMaxListItems = 256;
constexpr size_t kMaxBuildIdBytes = 64;
}  // namespace limits

class FrameCheck {
 public:
  enum Issue {
    TimeOutside,     // a record whose time lies outside the session's window
    CpuOutOfRange,   // a CPU number taken as unknown (or a CPU's sample dropped)
    CounterClamped,  // a counter above limits::kMaxCounter
    BadEnum,         // an enum value this reader does not know (or no enum can hold)
    BadId,           // a tid or object id 0, which names nothing
    RaggedBatch,     // batch entries whose columns are missing
    HelloClamped,    // Hello's CPU count or tick interval out of range
    StringCut,       // a string or a list over its length limit, cut
    ThreadsFull,     // records of threads past limits::kMaxThreads
    ObjectsFull,     // sync objects past limits::kMaxSyncObjects
    StacksFull,      // call stacks or sites past their limits
    NoticesFull,     // probe notices past limits::kMaxNotices
    SameInstant,     // a thread's records at one instant past kMaxSameInstant
    kIssues
  };
  // Entries of one thread at the very same nanosecond: a thread cannot
  // change state this often at once; more is a repeated or forged batch.
  static constexpr int kMaxSameInstant = 16;

  // Checks f in place; false when nothing of it is usable. A list of
  // sub-messages or strings it drops items from keeps them at its end, out
  // of its count: restore() puts the counts back once the frame is folded
  // in, so its owner frees every item (protobuf-c frees by the counts).
  bool check(Threadmon__Frame *f);
  void restore();
  // The lowest time in the session's window; INT64_MIN before the first
  // time (which sets the window).
  int64_t base() const { return lo_; }
  void note(Issue issue, uint64_t n = 1);
  // True once after each change of the counts.
  bool takeChanged();
  // One line per kind seen, with its count.
  QStringList lines() const;

 private:
  template <typename T, typename Ok>
  void keepIf(T **items, size_t *n, Ok &&ok);
  void shorten(size_t *n, size_t to);
  bool time(uint64_t wire, int64_t *out);
  // A 0 time means "not known" in these fields: kept 0, else checked.
  void optionalTime(uint64_t *wire);
  uint64_t counter(uint64_t v);
  void cut(char *s);
  void cutList(char **items, size_t *n);
  void cutLocations(Threadmon__CodeLocation **items, size_t *n);
  bool checkHello(Threadmon__Hello *h);
  bool checkTick(Threadmon__Tick *t);
  bool checkLwp(Threadmon__LwpSample *s);
  bool checkTransitions(Threadmon__Transitions *t);
  bool keepsAll(const Threadmon__Transitions *t, size_t n) const;
  bool checkSwitches(Threadmon__CpuSwitches *s);
  bool checkUserSwitches(Threadmon__UserSwitches *s);
  bool checkSyncObject(Threadmon__SyncObject *o);

  int64_t lo_ = INT64_MIN;
  std::vector<std::pair<size_t *, size_t>> shortened_;  // counts check() cut, as they were
  std::array<uint64_t, kIssues> counts_{};
  bool changed_ = false;
};

}  // namespace tmon

#endif
