#include "waitorder.h"

#include <algorithm>

namespace tmon {

namespace {

constexpr uint32_t kFewInBucket = 32;

using Ref = const WaitRecord *;

// order[from, to) by start, ties by compareWaits, sorted in place by
// insertion (a bucket's few waits, or buckets in order, each of few);
// true when two waits tie on all four.
bool sortBucket(Ref *order, size_t from, size_t to) {
  bool tie = false;
  if (to - from < 2) return tie;
  int64_t last = order[from]->start;  // the latest start before i
  for (size_t i = from + 1; i < to; i++) {
    const Ref x = order[i];
    const int64_t s = x->start;
    if (s > last) {  // (nearly every one)
      last = s;
      continue;
    }
    size_t j = i;
    for (; j > from; j--) {
      const Ref y = order[j - 1];
      const int64_t t = y->start;
      if (t < s) break;
      if (t == s) {
        const int c = compareWaits(*y, *x);
        tie = tie || c == 0;
        if (c <= 0) break;
      }
      order[j] = y;
    }
    order[j] = x;  // (last stays: s was not after it)
  }
  return tie;
}

// The same, bucket by bucket (at[b]: bucket b's end), a bucket of many
// by std::sort (a start far from the others crowds the rest into a few).
bool sortBuckets(Ref *order, const uint32_t *at, size_t count) {
  bool tie = false;
  for (size_t b = 0, from = 0; b < count && !tie; b++) {
    const size_t to = at[b];
    if (to - from <= kFewInBucket) {
      tie = sortBucket(order, from, to);
    } else {
      std::sort(order + from, order + to, [](Ref x, Ref y) {
        const int64_t a = x->start, c = y->start;
        return a != c ? a < c : compareWaits(*x, *y) < 0;
      });
      for (size_t i = from + 1; i < to && !tie; i++)
        tie = compareWaits(*order[i - 1], *order[i]) == 0;
    }
    from = to;
  }
  return tie;
}

}  // namespace

void orderWaits(const WaitRecord *const *waits, size_t count,
                PodVector<const WaitRecord *> *ordered, WaitOrder *pairs,
                std::vector<uint32_t> *buckets) {
  const uint32_t n = uint32_t(count);
  ordered->clear();
  if (n == 0) return;
  int64_t lo = waits[0]->start, hi = lo;
  for (uint32_t i = 1; i < n; i++) {
    lo = std::min(lo, waits[i]->start);
    hi = std::max(hi, waits[i]->start);
  }
  // About two waits a bucket, each bucket a span of starts of a power of
  // two ns.
  int bits = 0;
  while (bits < 28 && (uint32_t(1) << bits) < n / 2) bits++;
  const uint64_t range = uint64_t(hi) - uint64_t(lo);
  int shift = 0;
  while ((range >> shift) >> bits) shift++;
  const size_t bucketCount = (size_t(range >> shift)) + 1;
  buckets->assign(bucketCount, 0);
  uint32_t *const at = buckets->data();
  const auto bucketOf = [lo, shift](Ref w) {
    return size_t((uint64_t(w->start) - uint64_t(lo)) >> shift);
  };
  for (uint32_t i = 0; i < n; i++) at[bucketOf(waits[i])]++;
  uint32_t sum = 0, most = 0;  // each bucket's first place; the most in one
  for (size_t b = 0; b < bucketCount; b++) {
    const uint32_t c = at[b];
    at[b] = sum;
    sum += c;
    most = std::max(most, c);
  }
  Ref *const o = ordered->reserveMore(n);
  ordered->setEnd(o + n);
  for (uint32_t i = 0; i < n; i++) o[at[bucketOf(waits[i])]++] = waits[i];  // at[b]: its end now
  // Sorted by insertion in one pass over all of them (each bucket's in
  // place: a wait moves back only past later ones of its bucket), or
  // bucket by bucket when one holds many.
  const bool tie = most <= kFewInBucket ? sortBucket(o, 0, n) : sortBuckets(o, at, bucketCount);
  if (!tie) return;
  const auto pairBefore = [waits](const std::pair<int64_t, uint32_t> &a,
                                  const std::pair<int64_t, uint32_t> &b) {
    if (a.first != b.first) return a.first < b.first;
    return compareWaits(*waits[a.second], *waits[b.second]) < 0;
  };
  pairs->resize(n);
  for (uint32_t i = 0; i < n; i++) (*pairs)[i] = {waits[i]->start, i};
  std::sort(pairs->begin(), pairs->end(), pairBefore);
  for (uint32_t i = 0; i < n; i++) o[i] = waits[(*pairs)[i].second];
}

void WindowWaits::clear() {
  spans_.clear();
  runs_.clear();
  copies_.clear();
  copyPlaces_.clear();
  others_.clear();
  otherPlaces_.clear();
  runsInOrder_ = true;
  prev_ = nullptr;
  taken_ = 0;
}

void WindowWaits::beginRun(const ExportObject *object) {
  Run run;
  run.from = run.to = uint32_t(spans_.size());
  run.object = object;
  runs_.push_back(run);
  prev_ = nullptr;
}

void WindowWaits::addCopy(const WaitRecord &r) {
  follow(r);
  copyPlaces_.push_back(uint32_t(spans_.size()));
  spans_.push_back(Span{nullptr, nullptr});  // (set when copies_ stops growing)
  copies_.push_back(r);
  prev_ = &copies_.back();
  taken_++;
  runs_.back().to = uint32_t(spans_.size());
}

void WindowWaits::endRun() {
  runs_.back().to = uint32_t(spans_.size());
  if (runs_.back().to == runs_.back().from) runs_.pop_back();
  prev_ = nullptr;
}

void WindowWaits::addOther(const ExportWait &w) {
  otherPlaces_.push_back(uint32_t(taken_++));
  others_.push_back(w);
}

[[gnu::always_inline]] inline void WindowWaits::put(const WaitRecord &r,
                                                    const ExportObject *object) {
  // From the first one not before the cut, the rest wait for the next window.
  if (__builtin_expect(hasCut_ && r.start >= cut_.start, 0) && !cutPassed_ &&
      compareWaits(r, cut_) >= 0) {
    flush();
    cutPassed_ = true;
  }
  ExportWait &w = batch_[batchSize_++];
  std::memcpy(static_cast<void *>(&w), &r, sizeof r);
  w.object = object;
  if (batchSize_ == kBatch) flush();
}

void WindowWaits::flush() {
  if (cutPassed_)
    rest_->insert(rest_->end(), batch_, batch_ + batchSize_);
  else if (batchSize_)
    (*give_)(batch_, batchSize_);
  batchSize_ = 0;
}

void WindowWaits::inOrder(const ExportWait *cut,
                          const std::function<void(const ExportWait *, size_t)> &give,
                          PodVector<ExportWait> *rest) {
  for (size_t i = 0; i < copyPlaces_.size(); i++)
    spans_[copyPlaces_[i]] = Span{&copies_[i], &copies_[i] + 1};
  otherOrder_.resize(others_.size());
  for (uint32_t i = 0; i < others_.size(); i++) otherOrder_[i] = i;
  std::sort(otherOrder_.begin(), otherOrder_.end(),
            [this](uint32_t a, uint32_t b) { return compareWaits(others_[a], others_[b]) < 0; });
  hasCut_ = cut != nullptr;
  cutPassed_ = false;
  if (cut) cut_ = recordOf(*cut);
  give_ = &give;
  rest_ = rest;
  batchSize_ = 0;
  if (mergeable())
    merge();
  else
    sortAll();
  flush();
}

bool WindowWaits::mergeable() const {
  if (!runsInOrder_) return false;
  for (size_t i = 1; i < otherOrder_.size(); i++)
    if (compareWaits(others_[otherOrder_[i - 1]], others_[otherOrder_[i]]) == 0) return false;
  // Waits of two runs differ in their object: no two runs of one.
  for (size_t i = 0; i < runs_.size(); i++)
    for (size_t j = i + 1; j < runs_.size(); j++)
      if (runs_[i].object->id == runs_[j].object->id) return false;
  // Nor another wait tied with one of a run.
  for (const ExportWait &w : others_)
    for (const Run &run : runs_) {
      if (run.object->id != w.objectId) continue;
      for (uint32_t i = run.from; i < run.to; i++) {
        const WaitRecord *at = std::lower_bound(
            spans_[i].from, spans_[i].to, w,
            [](const WaitRecord &r, const ExportWait &x) { return compareWaits(r, x) < 0; });
        if (at != spans_[i].to && compareWaits(*at, w) == 0) return false;
      }
    }
  return true;
}

// A run's next wait (p, in its span), in the merge.
struct WindowWaits::Cursor {
  const WaitRecord *p, *end;
  const Span *span, *lastSpan;  // its span; the run's last
  const ExportObject *object;
};

void WindowWaits::merge() {
  // The runs' cursors, and their order (a few: one a sync object); the
  // first one's (in locals) is the next wait unless another one comes
  // before it.
  const size_t runs = runs_.size();
  if (runs == 0) return mergeOthers(0);
  std::vector<Cursor> cursors(runs);
  std::vector<uint32_t> ranks(runs);
  for (size_t i = 0; i < runs; i++) {
    const Span *first = spans_.data() + runs_[i].from;
    cursors[i] =
        Cursor{first->from, first->to, first, spans_.data() + runs_[i].to - 1, runs_[i].object};
    ranks[i] = uint32_t(i);
  }
  const auto before = [](const Cursor &a, const Cursor &b) {
    return a.p->start != b.p->start ? a.p->start < b.p->start : compareWaits(*a.p, *b.p) < 0;
  };
  std::sort(ranks.begin(), ranks.end(),
            [&](uint32_t a, uint32_t b) { return before(cursors[a], cursors[b]); });
  Cursor *const c = cursors.data();
  uint32_t *const rank = ranks.data();
  size_t k = runs;
  // The next run's cursor, its wait and its span's end in locals.
  Cursor *now = c + rank[0];
  const WaitRecord *p = now->p, *end = now->end;
  // The batch in locals (as members, each was loaded and stored again
  // around every wait's stores).
  ExportWait *w = batch_ + batchSize_;  // the batch's end
  ExportWait *const full = batch_ + kBatch;
  int64_t cutStart = hasCut_ && !cutPassed_ ? cut_.start : INT64_MAX;
  size_t o = 0;  // in otherOrder_
  const size_t others = otherOrder_.size();
  int64_t otherStart = others ? others_[otherOrder_[0]].start : INT64_MAX;
  const auto out = [&](const WaitRecord &r, const ExportObject *names)
                       __attribute__((always_inline)) {
    if (__builtin_expect(r.start >= cutStart, 0) && compareWaits(r, cut_) >= 0) {
      batchSize_ = size_t(w - batch_);
      flush();
      w = batch_;
      cutPassed_ = true;
      cutStart = INT64_MAX;
    }
    std::memcpy(static_cast<void *>(w), &r, sizeof r);
    w->object = names;
    if (__builtin_expect(++w == full, 0)) {
      batchSize_ = kBatch;
      flush();
      w = batch_;
    }
  };
  for (;;) {
    const WaitRecord &r = *p;
    while (__builtin_expect(otherStart <= r.start, 0) &&
           compareWaits(others_[otherOrder_[o]], r) < 0) {
      const ExportWait &other = others_[otherOrder_[o++]];
      out(recordOf(other), other.object);
      otherStart = o < others ? others_[otherOrder_[o]].start : INT64_MAX;
    }
    out(r, now->object);
    if (__builtin_expect(++p == end, 0)) {
      if (now->span != now->lastSpan) {
        ++now->span;
        p = now->span->from;
        end = now->span->to;
      } else {
        if (--k == 0) break;
        // The next run's cursor goes on.
        std::memmove(rank, rank + 1, k * sizeof *rank);
        now = c + rank[0];
        p = now->p;
        end = now->end;
        continue;
      }
    }
    // Nearly always a step or two back among the others (the objects'
    // waits interleave in time), or none.
    if (k == 1) continue;
    const Cursor &second = c[rank[1]];
    const int64_t s = p->start, t = second.p->start;
    if (s < t || (s == t && compareWaits(*p, *second.p) < 0)) continue;
    const uint32_t x = rank[0];
    now->p = p;
    now->end = end;
    size_t j = 0;
    do {
      rank[j] = rank[j + 1];
      j++;
    } while (j + 1 < k && before(c[rank[j + 1]], *now));
    rank[j] = x;
    now = c + rank[0];
    p = now->p;
    end = now->end;
  }
  batchSize_ = size_t(w - batch_);
  mergeOthers(o);
}

void WindowWaits::mergeOthers(size_t from) {
  for (size_t o = from; o < otherOrder_.size(); o++) {
    const ExportWait &w = others_[otherOrder_[o]];
    put(recordOf(w), w.object);
  }
}

void WindowWaits::sortAll() {
  // Every wait as read (the runs, the others where they came), copied.
  all_.clear();
  allObjects_.clear();
  size_t o = 0;
  const auto other = [&] {
    all_.push_back(recordOf(others_[o]));
    allObjects_.push_back(others_[o].object);
    o++;
  };
  for (const Run &run : runs_)
    for (uint32_t i = run.from; i < run.to; i++)
      for (const WaitRecord *r = spans_[i].from; r != spans_[i].to; ++r) {
        while (o < others_.size() && otherPlaces_[o] == all_.size()) other();
        all_.push_back(*r);
        allObjects_.push_back(run.object);
      }
  while (o < others_.size()) other();
  allRefs_.clear();
  for (const WaitRecord &r : all_) allRefs_.push_back(&r);
  orderWaits(allRefs_.data(), allRefs_.size(), &ordered_, &pairs_, &buckets_);
  for (const WaitRecord *r : ordered_) put(*r, allObjects_[size_t(r - all_.data())]);
}

}  // namespace tmon
