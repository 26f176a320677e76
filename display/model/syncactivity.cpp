#include "syncactivity.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <set>

#include "celltable.h"
#include "framecheck.h"
#include "nearend.h"
#include "threadmon.pb-c.h"
#include "wirestate.h"

namespace tmon {

namespace {

// Objects with an owner: a wait on them ends with the waiter owning them.
bool owned(FinalState s) {
  return s == FinalState::BlockedMutex || s == FinalState::BlockedRwlock ||
         s == FinalState::BlockedSpin;
}

}  // namespace

size_t SyncActivity::slotOf(uint32_t tid) {
  const int index = threadIndex_.findAndRemember(tid);
  if (index >= 0) return size_t(index);
  threadIndex_.insert(tid, int(threads_.size()));
  threads_.emplace_back();
  threads_.back().tid = tid;
  return threads_.size() - 1;
}

inline SyncActivity::ObjectWaits &SyncActivity::objectWaits(uint32_t id) {
  ObjectSlot &slot = objectSlots_[id % objectSlots_.size()];
  if (!slot.waits || slot.id != id) slot = ObjectSlot{id, &objects_[id]};
  return *slot.waits;
}

const SyncActivity::ThreadWaits *SyncActivity::findThread(uint32_t tid) const {
  const int index = threadIndex_.find(tid);
  return index < 0 ? nullptr : &threads_[size_t(index)];
}

// Waits end nearly in the order they began: the few that began after this
// one move up one place each, as an insertion from the end (stable: after
// the waits of the same start), and the record is written once, in its
// place (std::vector::insert's copy of the record and its memmove call for
// these one or two places were a third of closing a wait). ow.closed has
// room for one more.
inline void SyncActivity::placeClosed(ObjectWaits &ow, ThreadWaits *th, int64_t t,
                                      uint32_t releaser) {
  const Open &o = th->open;
  PodVector<WaitRecord> &v = ow.closed;
  WaitRecord *const end = v.end();
  WaitRecord *at = end;
  for (; at != v.begin() && (at - 1)->start > o.start; --at) *at = at[-1];
  // Written in wide pieces (field by field, or as one brace-initialized
  // record, the compiler gathered the tids in a vector register first).
  static_assert(offsetof(WaitRecord, holder) == offsetof(WaitRecord, object) + 4 &&
                    offsetof(Open, holder) == offsetof(Open, object) + 4 &&
                    offsetof(WaitRecord, open) == offsetof(WaitRecord, state) + 1 &&
                    offsetof(WaitRecord, count) == offsetof(WaitRecord, state) + 4 &&
                    sizeof(FinalState) == 1,
                "the stores below");
  at->start = o.start;
  at->end = t;
  at->waiter = th->tid;
  char *const bytes = reinterpret_cast<char *>(at);
  std::memcpy(bytes + offsetof(WaitRecord, object), &o.object, 8);  // object and holder
  at->releaser = releaser;
  const uint64_t tail = uint64_t(uint8_t(o.state)) | uint64_t(1) << 32;  // state, not open, count 1
  std::memcpy(bytes + offsetof(WaitRecord, state), &tail, 8);
  v.setEnd(end + 1);
  ow.longest = std::max(ow.longest, t - o.start);
  th->waiting = false;
  openWaits_--;
}

// Nearly every close finds its object in objectSlots_ and room in its
// waits: that path calls nothing, so it saves no registers (the saves and
// restores for the two calls below were a third of it).
void SyncActivity::closeWait(ThreadWaits *th, int64_t t, uint32_t releaser) {
  const ObjectSlot &slot = objectSlots_[th->open.object % objectSlots_.size()];
  if (slot.waits && slot.id == th->open.object && !slot.waits->closed.full())
    placeClosed(*slot.waits, th, t, releaser);
  else
    closeWaitSlow(th, t, releaser);
}

void SyncActivity::closeWaitSlow(ThreadWaits *th, int64_t t, uint32_t releaser) {
  ObjectWaits &ow = objectWaits(th->open.object);
  ow.closed.reserveMore(1);
  placeClosed(ow, th, t, releaser);
}

void SyncActivity::threadEnded(uint32_t tid, int64_t t) {
  const ThreadWaits *th = findThread(tid);
  if (th && t < th->lastT) return;
  transition(tid, t, THREADMON__THREAD_STATE__STATE_EXITED, 0, 0, 0);
}

bool SyncActivity::stack(uint32_t id, QStringList frames) {
  if (stacks_.size() >= limits::kMaxStacks && !stacks_.count(id)) return false;
  stacks_[id] = std::move(frames);
  return true;
}

bool SyncActivity::site(int64_t t, uint32_t object, uint32_t stackId, uint64_t contentions,
                        uint64_t waitNs) {
  auto obj = sites_.find(object);
  if (obj == sites_.end()) {
    if (siteCount_ >= limits::kMaxSites) return false;
    obj = sites_.emplace(object, std::vector<SiteEntry>()).first;
  }
  std::vector<SiteEntry> &v = obj->second;
  auto it = std::find_if(v.begin(), v.end(), [&](const SiteEntry &e) { return e.stack == stackId; });
  if (it == v.end()) {
    // The search above is linear: an object's sites stay few.
    if (siteCount_ >= limits::kMaxSites || v.size() >= limits::kMaxSitesPerObject) return false;
    v.push_back(SiteEntry{stackId, {}});
    siteCount_++;
    it = v.end() - 1;
  }
  it->series.add(t, 0, {contentions, waitNs});
  return true;
}

void SyncActivity::futex(uint32_t tid, int64_t t, uint64_t addr, uint32_t asleep, int kind) {
  std::vector<FutexSpan> &v = futex_[tid];
  auto at = upperBoundNearEnd(v.begin(), v.end(), t, [](const FutexSpan &s) { return s.t; });
  if (at != v.begin() && (at - 1)->t == t) return;  // a duplicate sample
  if (at == v.end() && !v.empty() && v.back().addr == addr && v.back().asleep == asleep &&
      v.back().kind == kind)
    return;  // unchanged
  if (v.empty() && addr == 0 && asleep == 0) return;
  v.insert(at, FutexSpan{t, addr, asleep, kind});
}

namespace {
constexpr int64_t kDeadlockConfirmNs = 100'000'000;
}  // namespace

bool SyncActivity::edgeAt(size_t i, int64_t t, Edge *e) const {
  const ThreadWaits &w = threads_[i];
  if (!w.waiting || !owned(w.open.state) || w.open.start > t) return false;
  const uint32_t h = w.open.holder;
  if (!h || h == w.tid) return false;
  *e = Edge{w.open.object, h, w.open.state != FinalState::BlockedRwlock};
  return true;
}

bool SyncActivity::checkDeadlocks(int64_t t) {
  // Wait-for edges: a waiter on an owned object -> the holder it reported
  // when its wait began, known to hold the lock while that wait is open. A
  // remembered owner would go stale: an uncontended unlock sends nothing.
  // Each waiter has one outgoing edge (edgeAt): follow it until a node
  // repeats. Nodes are indices into threads_, marked done with this call's
  // stamp: run every tick over 1,000 threads, a map of the edges and a set
  // of the visited allocated a node each and were a tenth of the live fold.
  std::set<std::vector<uint32_t>> cycles;  // tid, object, tid, object, ...
  if (openWaits_) {
    if (visited_.size() < threads_.size()) visited_.resize(threads_.size(), 0);
    if (++stamp_ == 0) {  // wrapped: no stale marks may match
      std::fill(visited_.begin(), visited_.end(), 0);
      stamp_ = 1;
    }
    std::vector<size_t> &path = path_;
    std::vector<Edge> &edges = pathEdges_;
    for (size_t i = 0; i < threads_.size(); i++) {
      Edge e;
      if (visited_[i] == stamp_ || !edgeAt(i, t, &e)) continue;
      path.clear();
      edges.clear();
      size_t n = i;
      bool cycle = false;
      while (visited_[n] != stamp_ && edgeAt(n, t, &e)) {
        if (std::find(path.begin(), path.end(), n) != path.end()) {
          cycle = true;
          break;
        }
        path.push_back(n);
        edges.push_back(e);
        const int next = threadIndex_.find(e.holder);
        if (next < 0) break;  // a holder that never waited has no edge
        n = size_t(next);
      }
      if (cycle) {
        const size_t from = size_t(std::find(path.begin(), path.end(), n) - path.begin());
        // Two waits for one mutex can't each be held up by the other's
        // waiter: such a cycle is a stale holder (a lost event), never a
        // deadlock. Two readers that both want to write one rwlock are a real one.
        std::set<uint32_t> exclusiveObjects;
        bool possible = true;
        for (size_t k = from; k < path.size() && possible; k++)
          possible = !edges[k].exclusive || exclusiveObjects.insert(edges[k].object).second;
        if (possible) {
          std::vector<std::pair<uint32_t, uint32_t>> cyc;  // tid, object
          for (size_t k = from; k < path.size(); k++)
            cyc.emplace_back(threads_[path[k]].tid, edges[k].object);
          std::rotate(cyc.begin(), std::min_element(cyc.begin(), cyc.end()), cyc.end());
          std::vector<uint32_t> key;
          for (const auto &c : cyc) key.insert(key.end(), {c.first, c.second});
          cycles.insert(key);
        }
      }
      for (size_t k : path) visited_[k] = stamp_;
    }
  }
  // Cycles that no longer hold end when the first of their waits ended.
  for (Deadlock &d : deadlocks_) {
    if (!d.live()) continue;
    std::vector<uint32_t> key;
    for (size_t i = 0; i < d.threads.size(); i++) key.insert(key.end(), {d.threads[i], d.objects[i]});
    if (cycles.erase(key)) continue;
    int64_t end = t;
    for (size_t i = 0; i < d.threads.size(); i++) {
      const ThreadWaits *op = findThread(d.threads[i]);
      if (op && op->waiting && op->open.object == d.objects[i] && op->open.start <= d.formedNs)
        continue;
      auto cl = objects_.find(d.objects[i]);
      if (cl == objects_.end()) continue;
      const PodVector<WaitRecord> &closed = cl->second.closed;
      for (size_t k = closed.size(); k-- > 0;)
        if (closed[k].waiter == d.threads[i] && closed[k].start <= d.formedNs &&
            closed[k].end >= d.formedNs) {
          end = std::min(end, closed[k].end);
          break;
        }
    }
    d.resolvedNs = std::max(end, d.formedNs);
  }
  // A cycle must last kDeadlockConfirmNs before it is one: a holder reported
  // at a wait's start may have released the lock while the waiter is still
  // waking up, which makes a cycle of a few milliseconds between threads that
  // never hold two locks at once. A real deadlock lasts.
  bool announced = false;
  for (const auto &key : cycles) {
    Deadlock d;
    d.detectedNs = t;
    for (size_t i = 0; i + 1 < key.size(); i += 2) {
      d.threads.push_back(key[i]);
      d.objects.push_back(key[i + 1]);
      d.formedNs = std::max(d.formedNs, findThread(key[i])->open.start);  // an edge's waiter
    }
    if (t - d.formedNs < kDeadlockConfirmNs) continue;
    deadlocks_.push_back(std::move(d));
    announced = true;
  }
  return announced;
}

template <typename F>
void SyncActivity::forEachWait(uint32_t object, const TimeRange &r, int64_t horizon, F &&f) const {
  auto cl = objects_.find(object);
  if (cl != objects_.end()) {
    const ObjectWaits &ow = cl->second;
    if (!ow.folded.empty() && r.t0 <= ow.foldedFrom && r.t1 >= ow.foldedTo)
      for (const WaitRecord &w : ow.folded) f(w);
    const PodVector<WaitRecord> &v = ow.closed;
    int64_t from = r.t0 - cl->second.longest;
    auto it = std::lower_bound(v.begin(), v.end(), from,
                               [](const WaitRecord &w, int64_t x) { return w.start < x; });
    for (; it != v.end() && it->start < r.t0; ++it)
      if (it->end > r.t0) f(*it);
    // Those starting in r are all in it (a zero-length one at r.t0 too).
    for (; it != v.end() && it->start < r.t1; ++it) f(*it);
  }
  if (!openWaits_) return;
  for (const ThreadWaits &th : threads_) {
    if (!th.waiting || th.open.object != object || th.open.start >= r.t1) continue;
    const WaitRecord w = openRecord(th, horizon);
    if (w.end > r.t0 || w.start >= r.t0) f(w);
  }
}

void SyncActivity::openWaits(int64_t horizon, std::vector<WaitRecord> *out) const {
  out->clear();
  if (!openWaits_) return;
  for (const ThreadWaits &th : threads_)
    if (th.waiting) out->push_back(openRecord(th, horizon));
}

WaitRecord SyncActivity::openRecord(const ThreadWaits &th, int64_t horizon) {
  WaitRecord w;
  w.start = th.open.start;
  w.end = std::max(horizon, th.open.start);
  w.waiter = th.tid;
  w.object = th.open.object;
  w.holder = th.open.holder;
  w.state = th.open.state;
  w.open = true;
  return w;
}

void SyncActivity::waits(uint32_t object, const TimeRange &r, int64_t horizon,
                         std::vector<WaitRecord> *out) const {
  const size_t first = out->size();
  size_t closedEnd = first;
  forEachWait(object, r, horizon, [&](const WaitRecord &w) {
    WaitRecord c = w;
    c.start = std::max(c.start, r.t0);
    c.end = std::max(c.start, std::min(c.end, r.t1));
    out->push_back(c);
    if (!w.open) closedEnd = out->size();
  });
  // The closed waits come in start order (clipped to r.t0 at its head):
  // only runs of one start need ordering by waiter, and the few open waits
  // merging in, not a sort of every wait.
  const auto before = [](const WaitRecord &a, const WaitRecord &b) {
    return a.start != b.start ? a.start < b.start : a.waiter < b.waiter;
  };
  const auto begin = out->begin() + std::ptrdiff_t(first);
  const auto mid = out->begin() + std::ptrdiff_t(closedEnd);
  // The sums of waits that left (evictBefore) came first, in no order.
  const bool folded = !std::is_sorted(
      begin, mid, [](const WaitRecord &a, const WaitRecord &b) { return a.start < b.start; });
  if (folded) std::stable_sort(begin, mid, before);
  // Nearly every run is one wait long: its end found by a look at the next
  // (std::find_if's set-up for each was a fifth of the waits' instructions).
  for (auto run = begin; run != mid && !folded;) {
    auto next = run + 1;
    while (next != mid && next->start == run->start) ++next;
    if (next - run > 1) std::sort(run, next, before);
    run = next;
  }
  std::sort(mid, out->end(), before);
  std::inplace_merge(begin, mid, out->end(), before);
}

namespace {

// One wait into the matrix over r: the time of it in r, to whom it is
// blamed; counted when it began in r.
void addCell(CellTable *cells, const WaitRecord &w, const TimeRange &r, int64_t clipped) {
  // A barrier's last arrival released the round, itself included: its
  // moment in the call is nobody's blocking.
  if (!w.holder && w.releaser == w.waiter) return;
  WaitPair &c = cells->at(w.waiter, w.blamed());
  if (w.start >= r.t0) c.count += w.count;
  c.waitNs += uint64_t(clipped);
}

int64_t clippedNs(const WaitRecord &w, const TimeRange &r) {
  return std::max<int64_t>(0, std::min(w.end, r.t1) - std::max(w.start, r.t0));
}

// A wait's time into its waiter's sum, kept in the cell (waiter, 0).
void addWaiter(CellTable *waiters, uint32_t tid, int64_t ns) {
  WaitPair &c = waiters->at(tid, 0);
  c.count++;
  c.waitNs += uint64_t(ns);
}

// Each waiter's time (addWaiter), by tid.
std::vector<std::pair<uint32_t, int64_t>> byTid(CellTable *waiters) {
  std::vector<std::pair<uint32_t, int64_t>> out;
  for (const WaitPair &c : waiters->take()) out.emplace_back(c.waiter, int64_t(c.waitNs));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

namespace {

// Each waiter's time in a range (WaitSums::waiters), kept by the waiter's
// place in threads_ (every wait's waiter has one): an array read per wait,
// where a hash table's probe per wait was a third of the sums' instructions.
// Made only when the waits to sum are not far fewer than the threads (an
// object with a few waits among thousands of threads keeps the hash table:
// byPlace false, the caller's places all -1).
class WaiterTotals {
 public:
  WaiterTotals(size_t places, size_t waits)
      : byPlace(places <= kFewPlaces || places <= 4 * waits), ns_(byPlace ? places : 0, kUnseen) {}
  const bool byPlace;
  // place: threadIndex_.find(tid) when byPlace, -1 for none.
  void add(int place, uint32_t tid, int64_t ns) {
    if (place < 0) return addElsewhere(tid, ns);
    int64_t &sum = ns_[size_t(place)];
    if (sum == kUnseen) {
      sum = 0;
      seen_.push_back(tid);
      places_.push_back(place);
    }
    sum += ns;
  }
  // By tid, as byTid.
  std::vector<std::pair<uint32_t, int64_t>> take() {
    std::vector<std::pair<uint32_t, int64_t>> out = byTid(&others_);
    const size_t elsewhere = out.size();
    for (size_t i = 0; i < seen_.size(); i++) out.emplace_back(seen_[i], ns_[size_t(places_[i])]);
    std::sort(out.begin() + std::ptrdiff_t(elsewhere), out.end());
    std::inplace_merge(out.begin(), out.begin() + std::ptrdiff_t(elsewhere), out.end());
    return out;
  }

 private:
  static constexpr int64_t kUnseen = -1;  // a sum is never negative
  static constexpr size_t kFewPlaces = 256;
  __attribute__((noinline)) void addElsewhere(uint32_t tid, int64_t ns) {
    addWaiter(&others_, tid, ns);
  }
  std::vector<int64_t> ns_;  // by place in threads_
  std::vector<uint32_t> seen_;
  std::vector<int> places_;  // of seen_
  CellTable others_;         // a waiter without a place (none so far)
};

// The waiter x blamed cells of one object's waits (WaitSums::cells), found
// through a square table of cell numbers + 1 by the two threads' places in
// threads_ (the blamed 0 in a column of its own), when there are more waits
// to sum than the table has cells: a CellTable's probe per wait and its
// growing were a third of the sums. A pair without a place (or all, when
// the waits are few) goes to a CellTable. The cells come in no order.
class PlaceCells {
 public:
  PlaceCells(const TidIndex &index, size_t places, size_t waits)
      : index_(index), columns_(places + 1) {
    if (places <= kMaxPlaces && places * columns_ <= waits) numbers_.assign(places * columns_, 0);
  }
  // waiterPlace: as WaiterTotals::add. Inlined: asked for every wait.
  __attribute__((always_inline)) WaitPair &at(int waiterPlace, uint32_t waiter, uint32_t blamed) {
    if (numbers_.empty() || waiterPlace < 0) return elsewhere(waiter, blamed);
    const int column = blamed ? index_.find(blamed) : int(columns_) - 1;
    if (column < 0) return elsewhere(waiter, blamed);
    uint32_t &number = numbers_[size_t(waiterPlace) * columns_ + size_t(column)];
    return number ? cells_[number - 1] : add(&number, waiter, blamed);
  }
  // The cells that waited at all, as CellTable::take.
  std::vector<WaitPair> take() {
    std::vector<WaitPair> out = others_.take();
    for (const WaitPair &c : cells_)
      if (c.count || c.waitNs) out.push_back(c);
    return out;
  }

 private:
  static constexpr size_t kMaxPlaces = 1024;  // a table of 4 MiB at most
  __attribute__((noinline)) WaitPair &elsewhere(uint32_t waiter, uint32_t blamed) {
    return others_.at(waiter, blamed);
  }
  __attribute__((noinline)) WaitPair &add(uint32_t *number, uint32_t waiter, uint32_t blamed) {
    cells_.push_back(WaitPair{waiter, blamed, 0, 0});
    *number = uint32_t(cells_.size());
    return cells_.back();
  }
  const TidIndex &index_;
  size_t columns_;
  std::vector<uint32_t> numbers_;  // empty: all in others_
  std::vector<WaitPair> cells_;
  CellTable others_;
};

// An object's sums when it has many more waits to sum than the threads
// have pairs (a busy lock's window: 48,000 waits among 100 threads), in a
// square table by the waiter's and the blamed thread's places in threads_
// (the blamed 0 in a column of its own), each cell its count and time, and
// each waiter's time read off its row: PlaceCells' numbers into a vector of
// cells beside a WaiterTotals were 100 instructions a wait. A wait whose
// waiter or blamed thread has no place (none so far) goes to the tables of
// those (others_, othersNs_).
class PlaceTable {
 public:
  PlaceTable(const TidIndex &index, size_t places)
      : index_(index),
        columns_(places + 1),
        sums_(places * columns_),
        seen_(places),
        besideNs_(places) {}
  // The fits: places <= kMaxPlaces and places * columns <= waits (as PlaceCells').
  static bool fits(size_t places, size_t waits) {
    return places <= kMaxPlaces && places * (places + 1) <= waits;
  }
  // A wait's time ns in r into its waiter's total; into its cell unless it
  // is nobody's blocking (a barrier's self-release), counted when it began
  // in r. Inlined: asked for every wait.
  __attribute__((always_inline)) void add(const WaitRecord &w, int64_t ns, bool blocking,
                                          bool began) {
    const int row = index_.find(w.waiter);
    const uint32_t blamed = w.blamed();
    const int column = !blocking ? -1 : blamed ? index_.find(blamed) : int(columns_) - 1;
    if (row < 0 || column < 0) return elsewhere(w, row, ns, blocking, began);
    seen_[size_t(row)] = 1;
    Sum &c = sums_[size_t(row) * columns_ + size_t(column)];
    if (began) c.count += w.count;
    c.ns += uint64_t(ns);
  }
  // WaitSums::cells and ::waiters; tids: by place.
  void take(const std::vector<uint32_t> &tids, WaitSums *out) {
    out->cells = others_.take();
    std::vector<std::pair<uint32_t, int64_t>> waiters = byTid(&othersNs_);
    const size_t elsewhere = waiters.size();
    for (size_t row = 0; row < seen_.size(); row++) {
      if (!seen_[row]) continue;
      int64_t ns = besideNs_[row];
      const Sum *sums = &sums_[row * columns_];
      for (size_t column = 0; column < columns_; column++) {
        const Sum &c = sums[column];
        if (!c.count && !c.ns) continue;
        ns += int64_t(c.ns);
        out->cells.push_back(
            WaitPair{tids[row], column + 1 < columns_ ? tids[column] : 0, c.count, c.ns});
      }
      waiters.emplace_back(tids[row], ns);
    }
    std::inplace_merge(waiters.begin(), waiters.begin() + std::ptrdiff_t(elsewhere), waiters.end());
    out->waiters = std::move(waiters);
  }

 private:
  static constexpr size_t kMaxPlaces = 1024;  // a table of 16 MiB at most
  struct Sum {
    uint64_t count = 0, ns = 0;
  };
  __attribute__((noinline)) void elsewhere(const WaitRecord &w, int row, int64_t ns, bool blocking,
                                           bool began) {
    if (row >= 0) {
      seen_[size_t(row)] = 1;
      besideNs_[size_t(row)] += ns;
    } else {
      addWaiter(&othersNs_, w.waiter, ns);
    }
    if (!blocking) return;
    WaitPair &c = others_.at(w.waiter, w.blamed());
    if (began) c.count += w.count;
    c.waitNs += uint64_t(ns);
  }
  const TidIndex &index_;
  size_t columns_;
  std::vector<Sum> sums_;          // row by the waiter's place, column by the blamed's
  std::vector<uint8_t> seen_;      // by the waiter's place: a wait of it summed
  std::vector<int64_t> besideNs_;  // by the waiter's place: its time in no cell here
  CellTable others_;               // cells of a thread without a place
  CellTable othersNs_;             // waiters without a place (addWaiter)
};

}  // namespace

size_t SyncActivity::closedWaitsNear(uint32_t object, const TimeRange &r) const {
  auto cl = objects_.find(object);
  if (cl == objects_.end()) return 0;
  const PodVector<WaitRecord> &v = cl->second.closed;
  const auto startsBefore = [](const WaitRecord &w, int64_t x) { return w.start < x; };
  const WaitRecord *from =
      std::lower_bound(v.begin(), v.end(), r.t0 - cl->second.longest, startsBefore);
  const WaitRecord *to = std::lower_bound(v.begin(), v.end(), r.t1, startsBefore);
  return to > from ? size_t(to - from) : 0;
}

std::vector<std::pair<uint32_t, int64_t>> SyncActivity::waiterNs(uint32_t object,
                                                                 const TimeRange &r,
                                                                 int64_t horizon) const {
  WaiterTotals waiters(threads_.size(), closedWaitsNear(object, r));
  forEachWait(object, r, horizon, [&](const WaitRecord &w) {
    waiters.add(waiters.byPlace ? threadIndex_.find(w.waiter) : -1, w.waiter, clippedNs(w, r));
  });
  return waiters.take();
}

void SyncActivity::waitSums(uint32_t object, const TimeRange &r, int64_t horizon,
                            WaitSums *out) const {
  *out = WaitSums{};
  const size_t near = closedWaitsNear(object, r);
  // The totals in locals (a struct's members stay in registers once inlined).
  struct {
    int64_t recorded = 0, unfinished = 0, blamed = 0;
    uint64_t pieces = 0, count = 0;
  } sum;
  // A wait's part in r (as waits() clips it) into the totals; false when it
  // is nobody's blocking (as addCell: a barrier's self-release). Inlined
  // (called for every wait, a call each was a fifth of the sums).
  const auto total = [&sum](const WaitRecord &w, int64_t ns) __attribute__((always_inline)) {
    sum.pieces++;
    if (!w.open) {
      sum.recorded += ns;
      sum.count += w.count;
    } else {
      sum.unfinished += ns;
    }
    const bool blocking = w.holder || w.releaser != w.waiter;
    if (blocking) sum.blamed += ns;
    return blocking;
  };
  if (PlaceTable::fits(threads_.size(), near)) {
    PlaceTable table(threadIndex_, threads_.size());
    forEachWait(
        object, r, horizon, [&](const WaitRecord &w) __attribute__((always_inline)) {
          const int64_t ns = clippedNs(w, r);
          table.add(w, ns, total(w, ns), w.start >= r.t0);
        });
    std::vector<uint32_t> tids;
    tids.reserve(threads_.size());
    for (const ThreadWaits &th : threads_) tids.push_back(th.tid);
    table.take(tids, out);
  } else {
    WaiterTotals waiters(threads_.size(), near);
    PlaceCells cells(threadIndex_, threads_.size(), near);
    forEachWait(
        object, r, horizon, [&](const WaitRecord &w) __attribute__((always_inline)) {
          const int64_t ns = clippedNs(w, r);
          const int place = waiters.byPlace ? threadIndex_.find(w.waiter) : -1;
          waiters.add(place, w.waiter, ns);
          if (!total(w, ns)) return;
          WaitPair &c = cells.at(place, w.waiter, w.blamed());
          if (w.start >= r.t0) c.count += w.count;
          c.waitNs += uint64_t(ns);
        });
    out->cells = cells.take();
    out->waiters = waiters.take();
  }
  out->pieces = sum.pieces;
  out->recorded = sum.recorded;
  out->unfinished = sum.unfinished;
  out->blamed = sum.blamed;
  out->count = sum.count;
}

std::vector<WaitPair> SyncActivity::matrix(const TimeRange &r, int64_t horizon,
                                           uint32_t object) const {
  CellTable cells;
  auto add = [&](const WaitRecord &w) { addCell(&cells, w, r, clippedNs(w, r)); };
  std::set<uint32_t> objects;
  if (object) {
    objects.insert(object);
  } else {
    for (const auto &c : objects_) objects.insert(c.first);
    for (const ThreadWaits &th : threads_)
      if (th.waiting) objects.insert(th.open.object);
  }
  for (uint32_t id : objects) forEachWait(id, r, horizon, add);
  std::vector<WaitPair> out = cells.take();
  sortWaitPairs(&out);
  return out;
}

QStringList SyncActivity::stackFrames(uint32_t id) const {
  auto it = stacks_.find(id);
  return it == stacks_.end() ? QStringList() : it->second;
}

std::vector<CallSite> SyncActivity::callSites(uint32_t object, const TimeRange &r) const {
  std::vector<CallSite> out;
  auto it = sites_.find(object);
  if (it == sites_.end()) return out;
  for (const SiteEntry &e : it->second) {
    const auto *a = e.series.at(r.t0), *b = e.series.at(r.t1);
    if (!b) continue;
    CallSite c;
    c.stackId = e.stack;
    c.frames = stackFrames(e.stack);
    c.contentions = b->v[0] > (a ? a->v[0] : 0) ? b->v[0] - (a ? a->v[0] : 0) : 0;
    c.waitNs = b->v[1] > (a ? a->v[1] : 0) ? b->v[1] - (a ? a->v[1] : 0) : 0;
    if (c.contentions || c.waitNs) out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const CallSite &x, const CallSite &y) {
    return x.waitNs != y.waitNs ? x.waitNs > y.waitNs : x.contentions > y.contentions;
  });
  return out;
}

template <typename Pred>
uint64_t SyncActivity::spanTicks(uint32_t tid, const TimeRange &r, const TickTimes &ticks,
                                 int64_t threadEnd, Pred &&counts) const {
  auto it = futex_.find(tid);
  if (it == futex_.end()) return 0;
  const std::vector<FutexSpan> &v = it->second;
  uint64_t n = 0;
  for (size_t i = 0; i < v.size(); i++) {
    if (!counts(v[i])) continue;
    int64_t e = i + 1 < v.size() ? v[i + 1].t : (threadEnd >= 0 ? threadEnd : INT64_MAX);
    int64_t lo = std::max(v[i].t, r.t0), hi = std::min(e, r.t1);
    if (hi <= lo) continue;
    // Seen at its own tick, then at every tick until the next sample.
    n += uint64_t(std::lower_bound(ticks.begin(), ticks.end(), hi) -
                  std::lower_bound(ticks.begin(), ticks.end(), lo));
  }
  return n;
}

uint64_t SyncActivity::futexTicks(uint32_t tid, uint64_t addr, const TimeRange &r,
                                  const TickTimes &ticks, int64_t threadEnd) const {
  return spanTicks(tid, r, ticks, threadEnd, [addr](const FutexSpan &s) {
    return s.addr != 0 && (!addr || s.addr == addr);
  });
}

uint64_t SyncActivity::asleepTicks(uint32_t tid, const TimeRange &r, const TickTimes &ticks,
                                   int64_t threadEnd) const {
  return spanTicks(tid, r, ticks, threadEnd, [](const FutexSpan &s) { return s.asleep != 0; });
}

uint64_t SyncActivity::asleepKindTicks(uint32_t tid, int kind, const TimeRange &r,
                                       const TickTimes &ticks, int64_t threadEnd) const {
  return spanTicks(tid, r, ticks, threadEnd,
                   [kind](const FutexSpan &s) { return s.asleep != 0 && s.kind == kind; });
}

std::vector<uint32_t> SyncActivity::futexThreads(uint64_t addr) const {
  std::vector<uint32_t> out;
  for (const auto &f : futex_)
    for (const FutexSpan &s : f.second)
      if (s.addr == addr) {
        out.push_back(f.first);
        break;
      }
  std::sort(out.begin(), out.end());
  return out;
}

// A live model holds millions of these (docs/architecture.md).
static_assert(sizeof(WaitRecord) == 40, "WaitRecord::count fits in the padding");

void SyncActivity::ObjectWaits::fold(const WaitRecord &w) {
  const FoldKey key{w.waiter, w.holder, w.releaser, w.state};
  const auto [at, added] = foldIndex.emplace(key, uint32_t(folded.size()));
  if (added) {
    folded.push_back(w);
  } else {
    // One waiter's waits never overlap: their sum from the first start
    // ends before the last of them does, inside [foldedFrom, foldedTo].
    WaitRecord &c = folded[at->second];
    const int64_t ns = c.end - c.start + (w.end - w.start);
    c.start = std::min(c.start, w.start);
    c.end = c.start + ns;
    c.count++;
  }
  foldedFrom = std::min(foldedFrom, w.start);
  foldedTo = std::max(foldedTo, w.end);
}

void SyncActivity::evictBefore(int64_t t) {
  for (auto &o : objects_) {
    ObjectWaits &ow = o.second;
    PodVector<WaitRecord> &v = ow.closed;
    size_t keep = 0, i = 0;
    for (; i < v.size() && v[i].start < t; i++) {
      if (v[i].end < t && owned(v[i].state))
        ow.fold(v[i]);
      else
        v[keep++] = v[i];
    }
    if (keep == i) continue;
    v.erase(v.begin() + std::ptrdiff_t(keep), v.begin() + std::ptrdiff_t(i));
    if (v.capacity() > 2 * v.size() + 64) v.shrink_to_fit();
  }
  for (ThreadWaits &th : threads_) {
    std::vector<TimeRange> &v = th.sleeps;
    Checkpoints<1>::Sums part{};
    size_t gone = 0;
    for (; gone < v.size() && v[gone].t0 < t; gone++)
      part[0] += std::min(v[gone].t1, t) - v[gone].t0;
    if (!gone) continue;
    firstSleep_.emplace(th.tid, v.front().t0);
    if (v[gone - 1].t1 > t) v[--gone].t0 = t;  // its part after t stays
    v.erase(v.begin(), v.begin() + std::ptrdiff_t(gone));
    if (v.capacity() > 2 * v.size() + 64) v.shrink_to_fit();
    sleptBefore_[th.tid].cut(t, part);
  }
}

int64_t SyncActivity::sleepNs(uint32_t tid, const TimeRange &r, int64_t horizon) const {
  auto clip = [&](int64_t s, int64_t e) {
    return std::max<int64_t>(0, std::min(e, r.t1) - std::max(s, r.t0));
  };
  int64_t n = 0;
  auto gone = sleptBefore_.find(tid);
  if (gone != sleptBefore_.end() && r.t0 < gone->second.last()) {
    const int64_t from = firstSleep_.at(tid);
    n += gone->second.at(std::min(r.t1, gone->second.last()), from)[0] -
         gone->second.at(r.t0, from)[0];
  }
  if (const ThreadWaits *th = findThread(tid)) {
    for (const TimeRange &s : th->sleeps) n += clip(s.t0, s.t1);
    if (th->sleepingSince != kNotSleeping) n += clip(th->sleepingSince, horizon);
  }
  return n;
}

size_t SyncActivity::bytes() const {
  size_t b = sizeof(*this);
  b += threads_.capacity() * sizeof(ThreadWaits) + threadIndex_.bytes();
  for (const ThreadWaits &th : threads_) b += th.sleeps.capacity() * sizeof(TimeRange);
  for (const auto &s : sleptBefore_) b += s.second.bytes() + 32;
  for (const auto &c : objects_)
    b += (c.second.closed.capacity() + c.second.folded.capacity()) * sizeof(WaitRecord) +
         c.second.foldIndex.size() * (sizeof(FoldKey) + 24) + 96;
  for (const auto &s : sites_)
    for (const SiteEntry &e : s.second) b += sizeof(SiteEntry) + e.series.bytes();
  for (const auto &f : futex_) b += f.second.capacity() * sizeof(FutexSpan);
  return b;
}

}  // namespace tmon
