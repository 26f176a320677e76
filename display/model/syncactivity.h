// SyncActivity: who waited for whom. Folds the interposer's waits (with
// holder and releaser tids), interned call stacks, per-call-site counters,
// hidden-lock futex samples, and finds cycles in the wait-for graph on every
// tick. Part of SessionStore; plain C++.
#ifndef THREADMON_SYNCACTIVITY_H
#define THREADMON_SYNCACTIVITY_H

#include <QStringList>
#include <algorithm>
#include <array>
#include <map>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "checkpoints.h"
#include "counterseries.h"
#include "modeltypes.h"
#include "podvector.h"
#include "threadtimeline.h"
#include "tidindex.h"
#include "wirestate.h"

namespace tmon {

class SyncActivity {
  struct ThreadWaits;  // what a thread's transitions left open (below)

 public:
  SyncActivity() = default;
  // Not copied: objectSlots_ point into objects_.
  SyncActivity(const SyncActivity &) = delete;
  SyncActivity &operator=(const SyncActivity &) = delete;

  // One transition of a thread, in the thread's own time order.
  void transition(uint32_t tid, int64_t t, int state, uint32_t object, uint32_t holder,
                  uint32_t releaser) {
    transitionAt(slotOf(tid), t, state, object, holder, releaser);
  }
  // The same for the thread at slotOf(tid): a caller that keeps each
  // thread's slot needs no lookup per transition. A slot, once made, stays.
  size_t slotOf(uint32_t tid);
  // Inline, with the closing of a wait out of line: the fold calls it for
  // every transition, and the call's prologue and epilogue were a sixth of
  // its instructions (the model is built -fPIC: nothing inlines across files).
  void transitionAt(size_t slot, int64_t t, int state, uint32_t object, uint32_t holder,
                    uint32_t releaser) {
    ThreadWaits &th = threads_[slot];
    if (t < th.lastT) return;  // out of order: the timeline has it
    th.lastT = t;
    // (Both flags tested at once: most transitions close neither.)
    if (th.waiting | th.sleeping) {
      if (th.waiting) closeWait(&th, t, releaser);
      if (th.sleeping) {
        th.sleeps.push_back(TimeRange{th.sleepingSince, t});
        th.sleepingSince = kNotSleeping;
        th.sleeping = false;
      }
    }
    if (state == THREADMON__THREAD_STATE__STATE_SLEEPING) {
      th.sleepingSince = t;
      th.sleeping = true;
    }
    // Blocking states that wait on an object (not sleeping).
    const int code = waitCodeOf(state, object);
    if (code >= 0) {
      th.open = Open{t, object, holder, FinalState(code)};
      th.waiting = true;
      openWaits_++;
    }
  }
  // The fold's common transition in two steps, so that the fold makes no
  // call while it holds a transition's values (a call on any path of its
  // loop had them spilled and reloaded for every transition). The wait
  // state code of a transition (waitCodeOf: -1 when it opens no wait);
  // plainAt: the thread at slot when its transition, of a state other than
  // SLEEPING (the caller's test), is plain (in order, no wrapped sleep
  // open, not both closing a wait and opening one), else nullptr, changing
  // nothing; foldPlain: folds a plain transition as transitionAt does, its
  // wait closed last.
  static int waitCodeOf(int state, uint32_t object) {
    return object != 0 ? waitCodeOfWire(state) : -1;
  }
  ThreadWaits *plainAt(size_t slot, int64_t t, int waitCode) {
    ThreadWaits *th = &threads_[slot];
    const bool plain = t >= th->lastT && !th->sleeping && !(th->waiting && waitCode >= 0);
    return plain ? th : nullptr;
  }
  void foldPlain(ThreadWaits *th, int64_t t, int waitCode, uint32_t object, uint32_t holder,
                 uint32_t releaser) {
    th->lastT = t;
    if (th->waiting) return closeWait(th, t, releaser);
    if (waitCode >= 0) {
      th->open = Open{t, object, holder, FinalState(waitCode)};
      th->waiting = true;
      openWaits_++;
    }
  }
  void threadEnded(uint32_t tid, int64_t t);
  // Both false (and ignored) past their limits (limits::kMaxStacks, kMaxSites).
  bool stack(uint32_t id, QStringList frames);
  bool site(int64_t t, uint32_t object, uint32_t stackId, uint64_t contentions, uint64_t waitNs);
  // LwpSample.futex_addr (0 = not in futex), asleep_syscall (0 = not seen
  // asleep outside wrapped calls) and asleep_kind (what that syscall waits
  // for) of one thread at tick t: they hold until that thread's next sample.
  void futex(uint32_t tid, int64_t t, uint64_t addr, uint32_t asleep, int kind = 0);
  // Re-checks the wait-for graph at tick t. True when a new cycle formed.
  bool checkDeadlocks(int64_t t);

  // Queries (horizon: the newest settled time, where open waits end).
  void waits(uint32_t object, const TimeRange &r, int64_t horizon,
             std::vector<WaitRecord> *out) const;
  // f(const WaitRecord &) for each record of waits(object, r, horizon), in
  // its order, read in place (an export copied a million of them into a
  // vector to read them once); scratch holds the few open ones and runs of
  // one start. False, with no call, when r holds waits that left RAM (as
  // waits() orders those otherwise): call waits(). f(const WaitRecord &,
  // bool stored) is told whether the record is the model's own (stays
  // where it is while the model is unchanged) or a copy that goes when f
  // returns (clipped, open, or sorted in scratch). f is taken by value:
  // its copied captures stay in registers (through a reference, each was
  // loaded again after every call's stores).
  template <typename F>
  bool forEachWaitInOrder(uint32_t object, const TimeRange &r, int64_t horizon,
                          std::vector<WaitRecord> *scratch, F f) const {
    return forEachWaitInOrder(object, r, horizon, scratch, f, TimeRange{INT64_MAX, INT64_MIN},
                              [](const WaitRecord *, const WaitRecord *) {});
  }
  // The same, but the stored records that are plain (plain.t0 < start,
  // end < plain.t1) and that f would be given one after another are given
  // as spans(from, to) instead, with no call of f: records of strictly
  // rising starts, each its object's (WaitRecord::object) and of count 1.
  // (An export's per-wait call was half of its waits' read.)
  template <typename F, typename S>
  bool forEachWaitInOrder(uint32_t object, const TimeRange &r, int64_t horizon,
                          std::vector<WaitRecord> *scratch, F f, const TimeRange &plain,
                          S spans) const;
  std::vector<WaitPair> matrix(const TimeRange &r, int64_t horizon, uint32_t object) const;
  // waits() and matrix(r, horizon, object) summed in one pass (WaitSums).
  void waitSums(uint32_t object, const TimeRange &r, int64_t horizon, WaitSums *out) const;
  // WaitSums::waiters alone: each waiter's time in r, by tid.
  std::vector<std::pair<uint32_t, int64_t>> waiterNs(uint32_t object, const TimeRange &r,
                                                     int64_t horizon) const;
  // The waits open now, one a waiting thread, unclipped (ending at horizon).
  void openWaits(int64_t horizon, std::vector<WaitRecord> *out) const;
  QStringList stackFrames(uint32_t id) const;
  std::vector<CallSite> callSites(uint32_t object, const TimeRange &r) const;
  // Ticks in r (from ticks) at which tid was blocked on the futex word addr
  // (addr 0: on any of addrs).
  uint64_t futexTicks(uint32_t tid, uint64_t addr, const TimeRange &r, const TickTimes &ticks,
                      int64_t threadEnd) const;
  // Ticks in r at which tid was seen asleep in any syscall outside wrapped
  // calls (0 for captures from probes that did not say).
  uint64_t asleepTicks(uint32_t tid, const TimeRange &r, const TickTimes &ticks,
                       int64_t threadEnd) const;
  // The same, asleep in a syscall of one AsleepKind (threadmon.proto).
  uint64_t asleepKindTicks(uint32_t tid, int kind, const TimeRange &r, const TickTimes &ticks,
                           int64_t threadEnd) const;
  std::vector<uint32_t> futexThreads(uint64_t addr) const;
  // ns of r that tid spent in a wrapped sleep call (nanosleep, usleep...).
  int64_t sleepNs(uint32_t tid, const TimeRange &r, int64_t horizon) const;
  const std::vector<Deadlock> &deadlocks() const { return deadlocks_; }
  size_t bytes() const;
  // Bounded live memory (SessionStore::keepDetailFor): wrapped sleeps
  // closed before t leave, each thread's sum of them kept at t, so
  // sleepNs over the whole run stays exact. Waits for an owned object
  // (mutex, rwlock, spin lock: 2.3 million a minute for 100 busy threads)
  // closed before t leave too, summed per object by (waiter, holder,
  // releaser, state): a range that holds all of them (the whole run) gets
  // those sums as records (WaitRecord::count), so its waits' sums, matrix
  // and findings stay exact; a range that cuts through them gets none of
  // them (a live session reads those from its spool). Barrier, condition,
  // semaphore and join waits stay: the barrier finding reads them in rounds.
  void evictBefore(int64_t t);

 private:
  struct Open {
    int64_t start = 0;
    uint32_t object = 0;
    uint32_t holder = 0;
    FinalState state = FinalState::BlockedMutex;
  };
  struct SiteEntry {
    uint32_t stack = 0;
    CounterSeries<2> series;  // contentions, wait ns
  };
  struct FutexSpan {
    int64_t t;
    uint64_t addr;
    uint32_t asleep;
    int kind;
  };
  template <typename Pred>
  uint64_t spanTicks(uint32_t tid, const TimeRange &r, const TickTimes &ticks, int64_t threadEnd,
                     Pred &&counts) const;
  // About how many closed waits forEachWait looks at for r.
  size_t closedWaitsNear(uint32_t object, const TimeRange &r) const;
  template <typename F>
  void forEachWait(uint32_t object, const TimeRange &r, int64_t horizon, F &&f) const;

  // What a thread's transitions left open, found with one lookup per
  // transition (a lookup in each of five maps, one of them a std::map
  // allocating a node per wait, were a sixth of a capture window's load).
  static constexpr int64_t kNotSleeping = INT64_MIN;
  struct ThreadWaits {
    uint32_t tid = 0;
    bool waiting = false;   // open holds its wait
    bool sleeping = false;  // sleepingSince holds an open wrapped sleep
    Open open;
    int64_t lastT = INT64_MIN;             // newest transition
    int64_t sleepingSince = kNotSleeping;  // an open wrapped sleep
    std::vector<TimeRange> sleeps;         // closed, in order
  };
  // th's open wait as a record ending at horizon.
  static WaitRecord openRecord(const ThreadWaits &th, int64_t horizon);
  struct FoldKey {
    uint32_t waiter, holder, releaser;
    FinalState state;
    bool operator==(const FoldKey &o) const {
      return waiter == o.waiter && holder == o.holder && releaser == o.releaser && state == o.state;
    }
  };
  struct FoldKeyHash {
    size_t operator()(const FoldKey &k) const {
      return std::hash<uint64_t>()((uint64_t(k.waiter) << 32 | k.holder) * 31 +
                                   (uint64_t(k.releaser) << 8 | uint8_t(k.state)));
    }
  };
  struct ObjectWaits {
    PodVector<WaitRecord> closed;  // start order
    int64_t longest = 0;           // longest closed wait
    // The waits evictBefore let go: one record per key (count, summed
    // time from its first start), and the span they lay in.
    std::vector<WaitRecord> folded;
    std::unordered_map<FoldKey, uint32_t, FoldKeyHash> foldIndex;  // into folded
    int64_t foldedFrom = INT64_MAX, foldedTo = INT64_MIN;
    void fold(const WaitRecord &w);
  };
  const ThreadWaits *findThread(uint32_t tid) const;
  // The wait th holds ends at t: its record joins its object's closed waits.
  void closeWait(ThreadWaits *th, int64_t t, uint32_t releaser);
  // closeWait when its object is not in objectSlots_ or its waits are full.
  void closeWaitSlow(ThreadWaits *th, int64_t t, uint32_t releaser);
  // th's wait among ow's closed ones, which have room for it.
  void placeClosed(ObjectWaits &ow, ThreadWaits *th, int64_t t, uint32_t releaser);
  // A wait-for edge of the deadlock check: what a waiter waits for, who holds it.
  struct Edge {
    uint32_t object, holder;
    bool exclusive;  // a mutex or spin lock: one owner at a time
  };
  // The edge of threads_[i] at t; false when it has none.
  bool edgeAt(size_t i, int64_t t, Edge *e) const;

  std::vector<ThreadWaits> threads_;  // in order of first sight
  TidIndex threadIndex_;
  size_t openWaits_ = 0;  // threads_ with waiting set
  std::unordered_map<uint32_t, ObjectWaits> objects_;
  // objects_[id], through a direct-mapped table of where entries are (each
  // closed wait looked its object up in the map, a tenth of the fold's
  // instructions): objects_ never loses an entry, and an unordered_map's
  // elements stay where they are.
  ObjectWaits &objectWaits(uint32_t id);
  struct ObjectSlot {
    uint32_t id = 0;
    ObjectWaits *waits = nullptr;
  };
  std::array<ObjectSlot, 256> objectSlots_{};
  std::unordered_map<uint32_t, Checkpoints<1>> sleptBefore_;  // by tid: what left sleeps
  std::unordered_map<uint32_t, int64_t> firstSleep_;          // by tid: where its sums start
  std::unordered_map<uint32_t, QStringList> stacks_;
  std::unordered_map<uint32_t, std::vector<SiteEntry>> sites_;  // by object
  size_t siteCount_ = 0;
  std::unordered_map<uint32_t, std::vector<FutexSpan>> futex_;  // by tid, time order
  std::vector<Deadlock> deadlocks_;
  // checkDeadlocks' scratch, kept between ticks: threads_ visited (== stamp_).
  std::vector<uint32_t> visited_;
  uint32_t stamp_ = 0;
  std::vector<size_t> path_;
  std::vector<Edge> pathEdges_;
};

template <typename F, typename S>
bool SyncActivity::forEachWaitInOrder(uint32_t object, const TimeRange &r, int64_t horizon,
                                      std::vector<WaitRecord> *scratch, F f, const TimeRange &plain,
                                      S spans) const {
  const WaitRecord *at = nullptr, *end = nullptr;
  auto cl = objects_.find(object);
  if (cl != objects_.end()) {
    const ObjectWaits &ow = cl->second;
    if (!ow.folded.empty() && r.t0 <= ow.foldedFrom && r.t1 >= ow.foldedTo) return false;
    at = std::lower_bound(ow.closed.begin(), ow.closed.end(), r.t0 - ow.longest,
                          [](const WaitRecord &w, int64_t x) { return w.start < x; });
    end = ow.closed.end();
  }
  // As waits() clips and orders them.
  const auto clip = [&r](WaitRecord w) __attribute__((always_inline)) {
    w.start = std::max(w.start, r.t0);
    w.end = std::max(w.start, std::min(w.end, r.t1));
    return w;
  };
  const auto before = [](const WaitRecord &a, const WaitRecord &b) {
    return a.start != b.start ? a.start < b.start : a.waiter < b.waiter;
  };
  // f on a record, told whether it is stored (a constant where it inlines).
  const auto give = [&f](const WaitRecord &w, auto stored) __attribute__((always_inline)) {
    if constexpr (std::is_invocable_v<F &, const WaitRecord &, bool>)
      f(w, bool(stored));
    else
      f(w);
  };
  const std::true_type stored;
  const std::false_type copied;
  // The open waits, sorted, first in scratch; runs of one start after them.
  scratch->clear();
  if (openWaits_)
    for (const ThreadWaits &th : threads_) {
      if (!th.waiting || th.open.object != object || th.open.start >= r.t1) continue;
      const WaitRecord w = openRecord(th, horizon);
      if (w.end > r.t0 || w.start >= r.t0) scratch->push_back(clip(w));
    }
  std::sort(scratch->begin(), scratch->end(), before);
  const size_t opens = scratch->size();
  size_t nextOpen = 0;
  // (A span ends before the next open wait's start.)
  int64_t openStart = opens ? (*scratch)[0].start : INT64_MAX;
  // A closed wait, after the open ones before it (std::inplace_merge's order).
  const auto put = [&](const WaitRecord &w, auto where) __attribute__((always_inline)) {
    while (nextOpen < opens && before((*scratch)[nextOpen], w)) {
      give((*scratch)[nextOpen++], copied);
      openStart = nextOpen < opens ? (*scratch)[nextOpen].start : INT64_MAX;
    }
    give(w, where);
  };
  const auto in = [&r, end](const WaitRecord *p) {
    for (; p != end && p->start < r.t1; ++p)
      if (p->end > r.t0 || (p->start >= r.t0 && p->end == p->start)) return p;
    return end;
  };
  // (r's ends in locals: f's stores may alias r, which was loaded again.)
  const int64_t t0 = r.t0, t1 = r.t1;
  // A plain record inside r: lo < start < min(next open's start, t1),
  // start <= end < hi (in r: start >= t0, end <= t1).
  const int64_t lo = plain.t0 >= t0 ? plain.t0 : t0 - 1;
  const int64_t hi = plain.t1 <= t1 ? plain.t1 : t1 + 1;
  for (const WaitRecord *p = in(at); p != end;) {  // (in: p->start < r.t1)
    // Nearly every one: inside r as it is (then in), the only one of its
    // start, given without a copy (in, the clip and a run's look-ahead
    // were half of a wait's read), in a span when plain (a span's
    // records tested once each, a third of what the others are).
    for (;;) {
      const int64_t stop = std::min(openStart, t1);
      const WaitRecord *from = p;
      while (p->start > lo && p->start < stop && p->end >= p->start && p->end < hi) {
        const WaitRecord *next = p + 1;
        if (next == end) {
          p = next;
          break;
        }
        if (next->start == p->start) break;  // a run of one start
        p = next;
      }
      if (p != from) spans(from, p);
      if (p == end || p->start >= t1) break;
      if (!(p->start >= t0 && p->end >= p->start && p->end <= t1)) break;
      const WaitRecord *next = p + 1;
      if (next != end && next->start == p->start) break;  // a run of one start
      put(*p, stored);
      p = next;
      if (p == end || p->start >= t1) break;
    }
    p = in(p);
    if (p == end) break;
    const int64_t start = std::max(p->start, r.t0);
    const WaitRecord *q = in(p + 1);
    if (q == end || std::max(q->start, r.t0) != start) {
      // Inside r (nearly all) as it is, without a copy.
      if (p->start >= r.t0 && p->end <= r.t1 && p->end >= p->start)
        put(*p, stored);
      else
        put(clip(*p), copied);
      p = q;
      continue;
    }
    // A run of one start (those cut by r's start, nearly always): sorted
    // by waiter as waits() sorts it, the same std::sort of the same order.
    scratch->push_back(clip(*p));
    for (; q != end && std::max(q->start, r.t0) == start; q = in(q + 1))
      scratch->push_back(clip(*q));
    std::sort(scratch->begin() + std::ptrdiff_t(opens), scratch->end(), before);
    for (size_t i = opens; i < scratch->size(); i++) put((*scratch)[i], copied);
    scratch->resize(opens);
    p = q;
  }
  while (nextOpen < opens) give((*scratch)[nextOpen++], copied);
  return true;
}

}  // namespace tmon

#endif
