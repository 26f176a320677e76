// orderWaits (display/export/waitorder.h) gives the order std::sort of
// the waits' (start, place) pairs gives, for runs as the export walk makes
// them: long runs in order (a sync object's waits), short ones (held and
// carried waits), one far from the rest, and with waits tied on all four
// keys, where std::sort's own order of the pairs is the one written.
#include <QtTest>
#include <algorithm>
#include <random>

#include "waitorder.h"

using namespace tmon;

namespace {

// What the walk did before orderWaits: every pair sorted.
std::vector<uint32_t> sortedPairs(const PodVector<WaitRecord> &waits) {
  WaitOrder pairs;
  for (uint32_t i = 0; i < waits.size(); i++) pairs.emplace_back(waits[i].start, i);
  std::sort(pairs.begin(), pairs.end(), [&waits](const auto &a, const auto &b) {
    if (a.first != b.first) return a.first < b.first;
    return compareWaits(waits[a.second], waits[b.second]) < 0;
  });
  std::vector<uint32_t> order;
  for (const auto &p : pairs) order.push_back(p.second);
  return order;
}

// runs runs of lengths up to maxRun, each in order; starts from a few
// values (many equal), waiters and objects from a few; tie: a few waits
// repeated at the end (equal on all four keys, another releaser).
PodVector<WaitRecord> randomWaits(std::mt19937 *rng, int runs, int maxRun, int64_t starts,
                                  bool tie) {
  PodVector<WaitRecord> waits;
  for (int r = 0; r < runs; r++) {
    std::vector<WaitRecord> run(size_t(1 + (*rng)() % unsigned(maxRun)));
    for (WaitRecord &w : run) {
      w.start = int64_t((*rng)() % uint64_t(starts));
      w.end = w.start + int64_t((*rng)() % 3);
      w.waiter = 1 + (*rng)() % 5;
      w.object = 1 + (*rng)() % 3;
      w.releaser = (*rng)() % 1000;
    }
    std::sort(run.begin(), run.end(),
              [](const WaitRecord &a, const WaitRecord &b) { return compareWaits(a, b) < 0; });
    // Within a run no two tie: the walk's runs are of distinct waits.
    run.erase(std::unique(
                  run.begin(), run.end(),
                  [](const WaitRecord &a, const WaitRecord &b) { return compareWaits(a, b) == 0; }),
              run.end());
    for (const WaitRecord &w : run) waits.push_back(w);
  }
  for (int twins = tie ? 1 + int((*rng)() % 6) : 0; twins > 0 && !waits.empty(); twins--) {
    WaitRecord twin = waits[(*rng)() % waits.size()];
    twin.releaser = 5000 + uint32_t(twins);
    waits.push_back(twin);
  }
  return waits;
}

// orderWaits' order of waits, as places in it.
std::vector<uint32_t> ordered(const PodVector<WaitRecord> &waits) {
  std::vector<const WaitRecord *> refs;
  for (const WaitRecord &w : waits) refs.push_back(&w);
  PodVector<const WaitRecord *> order;
  WaitOrder pairs;
  std::vector<uint32_t> buckets;
  orderWaits(refs.data(), refs.size(), &order, &pairs, &buckets);
  std::vector<uint32_t> places;
  for (const WaitRecord *r : order) places.push_back(uint32_t(r - waits.data()));
  return places;
}

}  // namespace

class TestWaitOrder : public QObject {
  Q_OBJECT

 private slots:
  void orderIsTheSortedPairs() {
    std::mt19937 rng(25);
    int ties = 0;
    for (int round = 0; round < 2000; round++) {
      const bool tie = round % 4 == 3;
      // Few long runs and many short ones, or only short ones.
      const int runs = 1 + int(rng() % 12), maxRun = round % 2 ? 300 : 8;
      const int64_t starts = round % 3 ? 400 : 20;
      const PodVector<WaitRecord> waits = randomWaits(&rng, runs, maxRun, starts, tie);
      const std::vector<uint32_t> order = ordered(waits);
      const std::vector<uint32_t> want = sortedPairs(waits);
      QCOMPARE(order.size(), want.size());
      for (size_t i = 0; i < want.size(); i++) QCOMPARE(order[i], want[i]);
      ties += tie;
    }
    QVERIFY(ties > 400);
  }

  // A wait held from long before (a start far from the rest) crowds the
  // others into one bucket, sorted otherwise than by insertion.
  void farStartCrowdsTheOthers() {
    std::mt19937 rng(29);
    for (int round = 0; round < 200; round++) {
      PodVector<WaitRecord> waits = randomWaits(&rng, 8, 300, 400, round % 2);
      WaitRecord far = waits[0];
      far.start = (round % 4 < 2 ? -1 : 1) * (int64_t(1) << 40);
      waits.push_back(far);
      QCOMPARE(ordered(waits), sortedPairs(waits));
    }
  }

  void emptyAndSingle() {
    PodVector<WaitRecord> waits;
    QVERIFY(ordered(waits).empty());
    WaitRecord w;
    w.start = 5;
    waits.push_back(w);
    QCOMPARE(ordered(waits), std::vector<uint32_t>{0});
  }
};

QTEST_GUILESS_MAIN(TestWaitOrder)
#include "test_waitorder.moc"
