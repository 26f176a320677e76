// Pools: threads grouped by start routine and name pattern, the outliers
// pulled out, the rows a pooled view shows (expanded, sorted, filtered),
// on items whose truth is set by hand.
#include <QtTest>

#include "pools.h"

using namespace tmon;

namespace {

// Categories: 0 running, 1 blocked, 2 sleeping.
const QStringList kLabels = {QStringLiteral("On CPU"), QStringLiteral("Blocked: mutex"),
                             QStringLiteral("Sleeping")};

PoolItem item(uint32_t id, const QString &name, const QString &routine, double run, double blocked,
              double sleep) {
  PoolItem it;
  it.index = int(id);
  it.id = id;
  it.name = name;
  it.routine = routine;
  it.values = {run, blocked, sleep};
  return it;
}

// The main thread, 500 `worker-N` threads of worker_main of which the
// `blocked` first ones spend 90% blocked (the rest 80% running), and two
// std::threads of one routine named apart.
std::vector<PoolItem> program(int blocked) {
  std::vector<PoolItem> items;
  PoolItem main = item(100, QStringLiteral("server"), QString(), 10, 0, 90);
  main.alone = true;
  items.push_back(main);
  for (int i = 0; i < 500; ++i) {
    const uint32_t tid = uint32_t(101 + i);
    const QString name = QStringLiteral("worker-%1").arg(i);
    items.push_back(i < blocked ? item(tid, name, QStringLiteral("worker_main"), 5, 90, 5)
                                : item(tid, name, QStringLiteral("worker_main"), 80, 10, 10));
  }
  items.push_back(item(700, QStringLiteral("reader"), QStringLiteral("execute_native_thread_routine"), 1, 0, 0));
  items.push_back(item(701, QStringLiteral("writer"), QStringLiteral("execute_native_thread_routine"), 1, 0, 0));
  return items;
}

const Pool *findPool(const std::vector<Pool> &pools, const QString &label) {
  for (const Pool &p : pools)
    if (p.label() == label) return &p;
  return nullptr;
}

}  // namespace

class TestModelPools : public QObject {
  Q_OBJECT
 private slots:
  void namesLoseTheirDigits() {
    QCOMPARE(namePattern(QStringLiteral("worker-12")), QStringLiteral("worker-#"));
    QCOMPARE(namePattern(QStringLiteral("pool-3-thread-140")), QStringLiteral("pool-#-thread-#"));
    QCOMPARE(namePattern(QStringLiteral("main")), QStringLiteral("main"));
    QCOMPARE(namePattern(QString()), QString());
    Pool p;
    p.routine = QStringLiteral("server!worker_main+0x24");
    QCOMPARE(p.routineName(), QStringLiteral("worker_main"));
    p.routine = QStringLiteral("worker_main");
    QCOMPARE(p.routineName(), QStringLiteral("worker_main"));
  }

  // 88 of 500 workers blocked: the pool keeps 412 typical members, the 88
  // are its outliers; the main thread and the two std::threads stand alone.
  void outliersArePulledOut() {
    const std::vector<PoolItem> items = program(88);
    const std::vector<Pool> pools = poolItems(items);
    QCOMPARE(pools.size(), size_t(4));
    const Pool &w = pools.front();
    QCOMPARE(w.label(), QStringLiteral("worker-#"));
    QCOMPARE(w.routine, QStringLiteral("worker_main"));
    QCOMPARE(w.size(), 500);
    QCOMPARE(w.members.size(), size_t(412));
    QCOMPARE(w.outliers.size(), size_t(88));
    QVERIFY(w.grouped());
    for (int m : w.outliers) QVERIFY(items[size_t(m)].id < 101 + 88);
    // The aggregate is the typical members': 80% running.
    QCOMPARE(w.share(0), 0.8);
    QCOMPARE(w.typical.low[0], 0.8);
    QCOMPARE(w.typical.high[0], 0.8);
    QCOMPARE(w.outlying.share(1), 0.9);
    QCOMPARE(w.outlying.total, 88 * 100.0);
    QVERIFY(findPool(pools, QStringLiteral("reader")));
    QVERIFY(findPool(pools, QStringLiteral("writer")));
    const Pool *main = findPool(pools, QStringLiteral("server"));
    QVERIFY(main && !main->grouped());
    const std::vector<int> of = poolOfItems(pools, items.size());
    QCOMPARE(of[1], 0);
    QCOMPARE(of[500], 0);
  }

  // Half of them blocked is no outlier: a mixed pool, its spread says so.
  void aMixedPoolKeepsEveryMember() {
    const std::vector<Pool> pools = poolItems(program(250));
    const Pool &w = pools.front();
    QCOMPARE(w.members.size(), size_t(500));
    QVERIFY(w.outliers.empty());
    QCOMPARE(w.typical.low[1], 0.1);
    QCOMPARE(w.typical.high[1], 0.9);
    QCOMPARE(w.outlying.total, 0.0);
    QCOMPARE(w.share(1), 0.5);
  }

  // Small pools are never split: five threads, one unlike the rest.
  void smallPoolsHaveNoOutliers() {
    std::vector<PoolItem> items;
    for (uint32_t i = 0; i < 5; ++i)
      items.push_back(item(i, QStringLiteral("w%1").arg(i), QStringLiteral("f"), i ? 9 : 1, 0, i ? 1 : 9));
    const std::vector<Pool> pools = poolItems(items);
    QCOMPARE(pools.size(), size_t(1));
    QCOMPARE(pools[0].members.size(), size_t(5));
  }

  // Items without time in the window are in no pool.
  void idleItemsAreLeftOut() {
    std::vector<PoolItem> items = {item(1, QStringLiteral("a"), QString(), 0, 0, 0),
                                   item(2, QStringLiteral("a"), QString(), 1, 0, 0)};
    const std::vector<Pool> pools = poolItems(items);
    QCOMPARE(pools.size(), size_t(1));
    QCOMPARE(pools[0].size(), 1);
    QCOMPARE(poolOfItems(pools, 2)[0], -1);
  }

  // Rows: in creation order the main thread, the worker pool, its outliers
  // (its typical members only when expanded), then the std::threads.
  void rowsFollowTheExpandedSetAndTheSort() {
    const std::vector<PoolItem> items = program(88);
    const std::vector<Pool> pools = poolItems(items);
    // 88 outliers are one row until it is expanded too.
    std::vector<PoolRow> rows = poolRows(items, pools, {}, -1);
    QCOMPARE(rows.size(), size_t(1 + 1 + 1 + 2));
    QCOMPARE(rows[0].kind, PoolRow::Kind::Single);
    QCOMPARE(items[size_t(rows[0].item)].name, QStringLiteral("server"));
    QCOMPARE(rows[1].kind, PoolRow::Kind::Pool);
    QCOMPARE(rows[2].kind, PoolRow::Kind::Outliers);
    QCOMPARE(items[size_t(rows[3].item)].name, QStringLiteral("reader"));
    rows = poolRows(items, pools, {pools.front().outliersKey()}, -1);
    QCOMPARE(rows.size(), size_t(1 + 1 + 1 + 88 + 2));
    QCOMPARE(rows[3].kind, PoolRow::Kind::Outlier);

    rows = poolRows(items, pools, {pools.front().key()}, -1);
    QCOMPARE(rows.size(), size_t(1 + 1 + 1 + 412 + 2));
    QCOMPARE(rows.back().kind, PoolRow::Kind::Single);
    QCOMPARE(rows[100].kind, PoolRow::Kind::Member);

    // Three outliers are listed as they are.
    const std::vector<PoolItem> few = program(3);
    rows = poolRows(few, poolItems(few), {}, -1);
    QCOMPARE(rows.size(), size_t(1 + 1 + 3 + 2));
    QCOMPARE(rows[2].kind, PoolRow::Kind::Outlier);

    // Sorted by sleeping: the main thread (90%) leads, the std::threads (0%) trail.
    rows = poolRows(items, pools, {}, 2);
    QCOMPARE(items[size_t(rows[0].item)].name, QStringLiteral("server"));
    QCOMPARE(rows[1].kind, PoolRow::Kind::Pool);
    // Sorted by running: the std::threads (100%) before the pool (80%).
    rows = poolRows(items, pools, {}, 0);
    QCOMPARE(rows[0].kind, PoolRow::Kind::Single);
    QCOMPARE(rows[2].kind, PoolRow::Kind::Pool);
  }

  void filterByNameTidRoutineOrState() {
    const std::vector<PoolItem> items = program(88);
    auto matches = [&](int i, const char *text) {
      return ItemFilter(QString::fromUtf8(text), kLabels).matches(items[size_t(i)]);
    };
    QVERIFY(matches(1, "WORKER"));
    QVERIFY(matches(1, "101"));
    QVERIFY(matches(1, "worker_main"));
    QVERIFY(!matches(1, "reader"));
    // A state: at least a quarter of the time in it.
    QVERIFY(matches(1, "mutex"));
    QVERIFY(!matches(200, "mutex"));
    QVERIFY(matches(200, "on cpu"));
    QVERIFY(!matches(200, "cpu x"));
    QVERIFY(matches(200, " "));
  }
};

QTEST_GUILESS_MAIN(TestModelPools)
#include "test_model_pools.moc"
