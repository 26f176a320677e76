// orderWaits (display/export/waitorder.h) gives the order std::sort of
// the waits' (start, place) pairs gives, for runs as the export walk makes
// them: long runs in order (a sync object's waits), short ones (held and
// carried waits), one far from the rest, and with waits tied on all four
// keys, where std::sort's own order of the pairs is the one written.
#include <QtTest>
#include <algorithm>
#include <cstring>
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

// A window's waits as read, in the order of their sorted pairs.
std::vector<ExportWait> inPairOrder(const std::vector<ExportWait> &read) {
  PodVector<WaitRecord> records;
  for (const ExportWait &w : read) records.push_back(recordOf(w));
  std::vector<ExportWait> out;
  for (uint32_t i : sortedPairs(records)) out.push_back(read[i]);
  return out;
}

bool sameWait(const ExportWait &a, const ExportWait &b) {
  return compareWaits(a, b) == 0 && a.holder == b.holder && a.releaser == b.releaser &&
         a.state == b.state && a.open == b.open && a.object == b.object;
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

  // WindowWaits gives a window's waits as the walk gave them when it
  // copied them all and sorted their pairs: runs of objects merged, or
  // (a run out of order, two runs of one object, two waits tied) sorted;
  // those from the cut on kept back.
  void windowWaitsAsSortedPairs() {
    std::mt19937 rng(41);
    std::vector<ExportObject> objects(6);
    for (uint32_t i = 0; i < objects.size(); i++) objects[i].id = 1 + i % 5;  // 6th: id 1 again
    int merged = 0, sorted = 0;
    for (int round = 0; round < 600; round++) {
      const int kind = round % 6;  // 0-2 plain, 3 a run out of order, 4 a tie, 5 one object twice
      WindowWaits window;
      window.clear();
      std::vector<ExportWait> read;
      std::vector<PodVector<WaitRecord>> stores(5);
      const int runs = 1 + int(rng() % 5);
      for (int k = 0; k < runs; k++) {
        const ExportObject *object = &objects[kind == 5 && k == 1 ? 5 : size_t(k)];
        PodVector<WaitRecord> &store = stores[size_t(k)];
        int64_t t = int64_t(rng() % 50);
        for (int i = 0, n = 1 + int(rng() % 200); i < n; i++) {
          WaitRecord r;
          r.start = t;
          r.end = t + int64_t(rng() % 40);
          r.waiter = 1 + rng() % 9;
          r.object = object->id;
          r.releaser = rng() % 9;
          store.push_back(r);
          t += 1 + int64_t(rng() % 7);
        }
        if (kind == 3 && k == 0 && store.size() > 2) std::swap(store[0].start, store[1].start);
        window.beginRun(object);
        for (size_t i = 0; i < store.size();) {
          // (A span's starts rise: the one out of order starts a span.)
          const size_t span =
              kind == 3 && k == 0 && i == 0 ? 1 : std::min(store.size() - i, size_t(1 + rng() % 40));
          if (rng() % 5 == 0) {
            window.addCopy(store[i]);
            ExportWait w;
            std::memcpy(static_cast<void *>(&w), &store[i], sizeof store[i]);
            w.object = object;
            read.push_back(w);
            i++;
            continue;
          }
          window.addSpan(store.data() + i, store.data() + i + span);
          for (size_t j = i; j < i + span; j++) {
            ExportWait w;
            std::memcpy(static_cast<void *>(&w), &store[j], sizeof store[j]);
            w.object = object;
            read.push_back(w);
          }
          i += span;
        }
        window.endRun();
      }
      // Others: held, kept back or joined at the window's edges.
      for (int i = 0, n = int(rng() % 8); i < n; i++) {
        ExportWait w = read[rng() % read.size()];
        if (kind != 4) w.start -= 1 + int64_t(rng() % 30);  // (a tie with its run's otherwise)
        w.releaser = 100 + uint32_t(i);
        window.addOther(w);
        read.push_back(w);
      }
      const std::vector<ExportWait> want = inPairOrder(read);
      const ExportWait *cut = round % 3 ? &want[rng() % want.size()] : nullptr;
      const ExportWait cutCopy = cut ? *cut : ExportWait{};
      std::vector<ExportWait> given;
      PodVector<ExportWait> rest;
      window.inOrder(
          cut ? &cutCopy : nullptr,
          [&given](const ExportWait *batch, size_t n) { given.insert(given.end(), batch, batch + n); },
          &rest);
      QCOMPARE(given.size() + rest.size(), want.size());
      size_t before = want.size();
      if (cut)
        while (before > 0 && compareWaits(want[before - 1], cutCopy) >= 0) before--;
      QCOMPARE(given.size(), before);
      for (size_t i = 0; i < want.size(); i++)
        QVERIFY2(sameWait(i < before ? given[i] : rest[i - before], want[i]),
                 qPrintable(QStringLiteral("round %1 kind %2 wait %3 of %4, cut before %5")
                                .arg(round)
                                .arg(kind)
                                .arg(i)
                                .arg(want.size())
                                .arg(before)));
      (kind <= 2 ? merged : sorted)++;
    }
    QVERIFY(merged > 250 && sorted > 250);
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
