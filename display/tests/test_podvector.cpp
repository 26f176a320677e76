// PodVector's blocks: small ones malloc's, large ones mappings of their own
// (largeblocks.h) that keep their records as they grow and shrink, and that
// a reader of segments gets back from the vectors it dropped.
#include <QtTest>
#include <cstdint>

#include "largeblocks.h"
#include "podvector.h"

using namespace tmon;

namespace {

struct Record {
  int64_t t;
  uint32_t tid, state;
};

// n records, each telling its place.
void fill(PodVector<Record> *v, size_t n) {
  for (size_t i = 0; i < n; i++) v->push_back({int64_t(i) * 3, uint32_t(i), uint32_t(i % 7)});
}

bool holds(const PodVector<Record> &v, size_t n) {
  if (v.size() != n) return false;
  for (size_t i = 0; i < n; i++)
    if (v[i].t != int64_t(i) * 3 || v[i].tid != uint32_t(i) || v[i].state != uint32_t(i % 7))
      return false;
  return true;
}

constexpr size_t kLargeRecords = 4 * largeblocks::kFrom / sizeof(Record);

}  // namespace

class TestPodVector : public QObject {
  Q_OBJECT

 private slots:
  void growsFromSmallToLargeKeepingItsRecords() {
    PodVector<Record> v;
    fill(&v, kLargeRecords);
    QVERIFY(holds(v, kLargeRecords));
    QVERIFY(v.capacity() * sizeof(Record) >= largeblocks::kFrom);
    PodVector<Record> copy = v;
    QVERIFY(holds(copy, kLargeRecords));
  }

  void shrinksToSmallAndBack() {
    PodVector<Record> v;
    fill(&v, kLargeRecords);
    v.erase(v.begin() + 100, v.end());
    v.shrink_to_fit();
    QCOMPARE(v.capacity(), size_t(100));
    QVERIFY(holds(v, 100));
    v.clear();
    fill(&v, kLargeRecords);
    QVERIFY(holds(v, kLargeRecords));
    v.clear();
    v.shrink_to_fit();
    QCOMPARE(v.capacity(), size_t(0));
  }

  void shrinksALargeBlockToItsPages() {
    PodVector<Record> v;
    fill(&v, 4 * kLargeRecords);
    v.erase(v.begin() + std::ptrdiff_t(kLargeRecords), v.end());
    v.shrink_to_fit();
    QVERIFY(holds(v, kLargeRecords));
    QVERIFY(v.capacity() >= kLargeRecords);
    QVERIFY((v.capacity() - kLargeRecords) * sizeof(Record) < largeblocks::kPage);
    v.push_back({int64_t(kLargeRecords) * 3, uint32_t(kLargeRecords), uint32_t(kLargeRecords % 7)});
    QVERIFY(holds(v, kLargeRecords + 1));
  }

  void insertsARangeAnywhere() {
    PodVector<Record> v, tail;
    fill(&v, 10);
    fill(&tail, kLargeRecords);
    v.insert(v.end(), tail.begin() + 10, tail.end());  // grows large on the way
    QVERIFY(holds(v, kLargeRecords));
    PodVector<Record> w;
    fill(&w, 20);
    w.erase(w.begin() + 5, w.begin() + 15);
    w.insert(w.begin() + 5, tail.begin() + 5, tail.begin() + 15);
    QVERIFY(holds(w, 20));
    w.insert(w.begin(), tail.begin(), tail.begin());
    QVERIFY(holds(w, 20));
  }

  void keepsTheBlocksOfDroppedVectorsOnlyWhileAsked() {
    QCOMPARE(largeblocks::keptBytes(), size_t(0));
    {
      PodVector<Record> v;
      fill(&v, kLargeRecords);
    }
    QCOMPARE(largeblocks::keptBytes(), size_t(0));  // nobody asked: unmapped
    QVERIFY(!largeblocks::keeping());
    {
      const largeblocks::KeepFreed keep;
      QVERIFY(largeblocks::keeping());
      const Record *first = nullptr;
      {
        PodVector<Record> v;
        fill(&v, kLargeRecords);
        first = v.data();
      }
      QVERIFY(largeblocks::keptBytes() >= kLargeRecords * sizeof(Record));
      // The next vector to grow large takes it, pages and all.
      PodVector<Record> w;
      fill(&w, kLargeRecords / 2);
      QCOMPARE(w.data(), first);
      QCOMPARE(largeblocks::keptBytes(), size_t(0));
      QVERIFY(holds(w, kLargeRecords / 2));
      PodVector<Record> x;  // none kept: a new one
      fill(&x, kLargeRecords);
      QVERIFY(x.data() != w.data());
      QVERIFY(holds(x, kLargeRecords));
    }
    QCOMPARE(largeblocks::keptBytes(), size_t(0));  // the last keeper unmapped them
    QVERIFY(!largeblocks::keeping());
  }

  void growsAKeptBlockTooSmall() {
    const largeblocks::KeepFreed keep;
    {
      PodVector<Record> v;
      fill(&v, kLargeRecords);
    }
    PodVector<Record> w;
    fill(&w, 8 * kLargeRecords);
    QVERIFY(holds(w, 8 * kLargeRecords));
    QCOMPARE(largeblocks::keptBytes(), size_t(0));
  }
};

QTEST_GUILESS_MAIN(TestPodVector)
#include "test_podvector.moc"
