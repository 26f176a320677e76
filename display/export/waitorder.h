// The order a window's waits are written in (TimelineSink), by start,
// waiter, object and end, and how it is found.
#ifndef THREADMON_WAITORDER_H
#define THREADMON_WAITORDER_H

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "exportwait.h"
#include "modeltypes.h"
#include "podvector.h"

namespace tmon {

// A wait's object id: a record's object, an ExportWait's objectId.
inline uint32_t objectIdOf(const WaitRecord &w) {
  return w.object;
}
inline uint32_t objectIdOf(const ExportWait &w) {
  return w.objectId;
}

// Below, equal to or above 0 as x comes before y, ties with it, or comes
// after it in the order the waits are written: by start, waiter, object
// and end.
template <typename X, typename Y>
[[gnu::always_inline]] inline int compareWaits(const X &x, const Y &y) {
  if (x.start != y.start) return x.start < y.start ? -1 : 1;
  if (x.waiter != y.waiter) return x.waiter < y.waiter ? -1 : 1;
  if (objectIdOf(x) != objectIdOf(y)) return objectIdOf(x) < objectIdOf(y) ? -1 : 1;
  if (x.end != y.end) return x.end < y.end ? -1 : 1;
  return 0;
}

using WaitOrder = std::vector<std::pair<int64_t, uint32_t>>;

// waits[0, n) in that order into *ordered, as std::sort of their
// (start, place) pairs under it gives them (WindowWaits' when it cannot
// merge). They go into buckets by start (about two waits a bucket, a
// power of two ns each: a count, then each put in its bucket), then
// sorted by insertion in one pass (a wait moves back only within its
// bucket; bucket by bucket, a std::sort for one of many, when one holds
// many). Two waits tied on all four (none in half.tmcap or the corpus)
// meet in a bucket: then the std::sort of the pairs decides, as before
// (without ties the order is the same). pairs and buckets: scratch, kept
// by the caller window to window.
void orderWaits(const WaitRecord *const *waits, size_t n, PodVector<const WaitRecord *> *ordered,
                WaitOrder *pairs, std::vector<uint32_t> *buckets);

// A window's waits as the walk reads them: each sync object's in a run of
// its own (beginRun ... endRun), in the order read (spans of the model's
// records, read in place, and copies of the few it clipped: copies of
// them all, 48 bytes a wait, were a quarter of an export's peak memory),
// and the rest (waits held, kept back or joined across the window's edge:
// few) as copies. inOrder gives them in compareWaits' order: each run is
// in that order nearly always, so the runs are merged, the next run's
// head moved back among the others' (half.tmcap's four objects
// interleave: 1.5 moves a wait; with the spans read in place, cheaper
// than the sort of them all, 50 instructions a wait); otherwise (or with
// two tied on all four) orderWaits sorts them as it did their copies.
class WindowWaits {
 public:
  void clear();
  void beginRun(const ExportObject *object);
  // [from, to): the model's records, of rising starts, read in place (they
  // stay where they are until inOrder returns).
  [[gnu::always_inline]] void addSpan(const WaitRecord *from, const WaitRecord *to) {
    follow(*from);
    prev_ = to - 1;
    taken_ += size_t(to - from);
    if (spans_.size() > runs_.back().from && spans_.back().to == from)  // (of this run)
      spans_.back().to = to;
    else
      spans_.push_back(Span{from, to});
  }
  void addCopy(const WaitRecord &r);  // one of the run's, copied
  void endRun();
  void addOther(const ExportWait &w);
  // give(batch, n) on the waits in order, in batches, up to the first not
  // before *cut (none: nullptr); those from there on into *rest.
  void inOrder(const ExportWait *cut, const std::function<void(const ExportWait *, size_t)> &give,
               PodVector<ExportWait> *rest);

 private:
  struct Span {
    const WaitRecord *from, *to;
  };
  struct Run {
    uint32_t from = 0, to = 0;  // in spans_
    const ExportObject *object = nullptr;
  };
  struct Cursor;  // merge()'s
  // r comes next in the run: still in order?
  [[gnu::always_inline]] void follow(const WaitRecord &r) {
    if (__builtin_expect(prev_ != nullptr && compareWaits(*prev_, r) >= 0, 0)) runsInOrder_ = false;
  }
  // Whether the runs can be merged: each in order, of its own object, and
  // no other wait tied with one of them.
  bool mergeable() const;
  void merge();
  void mergeOthers(size_t from);  // others_ from otherOrder_[from] on, after the runs
  void sortAll();                 // (when they cannot)
  // The batch inOrder makes, and where it goes.
  void put(const WaitRecord &r, const ExportObject *object);
  void flush();

  PodVector<Span> spans_;
  std::vector<Run> runs_;
  PodVector<WaitRecord> copies_;
  std::vector<uint32_t> copyPlaces_;  // copies_[i]'s span
  const WaitRecord *prev_ = nullptr;  // the run's last, while it is read
  size_t taken_ = 0;                  // waits added, of runs and others
  bool runsInOrder_ = true;
  std::vector<ExportWait> others_;
  std::vector<uint32_t> otherPlaces_;  // others_[i]'s place among all, as read
  std::vector<uint32_t> otherOrder_;   // others_ in order
  // sortAll's.
  PodVector<WaitRecord> all_;
  std::vector<const ExportObject *> allObjects_;
  PodVector<const WaitRecord *> allRefs_, ordered_;
  WaitOrder pairs_;
  std::vector<uint32_t> buckets_;
  // inOrder's.
  static constexpr size_t kBatch = 256;
  ExportWait batch_[kBatch];
  size_t batchSize_ = 0;
  WaitRecord cut_;
  bool hasCut_ = false, cutPassed_ = false;
  const std::function<void(const ExportWait *, size_t)> *give_ = nullptr;
  PodVector<ExportWait> *rest_ = nullptr;
};

}  // namespace tmon

#endif
