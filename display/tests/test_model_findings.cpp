// Who waits for whom, over synthetic streams whose truth is known: wait
// records with holders and releasers, the waiter x holder matrix, call
// sites, hidden-lock waiters, deadlock cycles (live and post-mortem), and
// every finding raised on a stream built to have it and not on clean ones.
#include <QSignalSpy>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "pools.h"
#include "runtimesync.h"
#include "sessionmodel.h"
#include "synthscenarios.h"

using namespace tmon;
using namespace tmtest;

namespace {

int64_t at(int64_t ms) { return kT0 + ms * kMs; }
constexpr auto kRun = THREADMON__THREAD_STATE__STATE_RUNNING;
constexpr auto kMutex = THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX;
constexpr auto kLost = THREADMON__THREAD_STATE__STATE_UNKNOWN;
constexpr auto kBarrier = THREADMON__THREAD_STATE__STATE_BLOCKED_BARRIER;
constexpr auto kSleep = THREADMON__THREAD_STATE__STATE_SLEEPING;
constexpr auto kIn = THREADMON__SWITCH_KIND__SWITCH_IN;
constexpr auto kOut = THREADMON__SWITCH_KIND__SWITCH_OUT;
constexpr auto kPreempt = THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT;

// Barrier 5 and threads 71 and 72, on CPUs 0 and 1 from the start.
void twoOnCpusWithABarrier(StreamBuilder &b) {
  b.hello(true);
  b.syncObject(5, THREADMON__SYNC_KIND__KIND_BARRIER, 0x5000, "app", "phase", nullptr);
  for (uint32_t tid : {71u, 72u}) {
    b.threadStart(tid, at(0), "w", "app!w");
    b.cpuSwitch(tid, at(0), tid - 71, kIn);
  }
}

// Ticks every 10 ms over (0, ms], with 2 CPUs busy `busy` of the time.
void ticks(StreamBuilder &b, int ms, double busy, const std::vector<Site> &sitesPerTick = {}) {
  for (int t = 10; t <= ms; t += 10) {
    uint64_t used = uint64_t(double(t) * busy * double(kMs)), all = uint64_t(t) * kMs;
    std::vector<Site> sites;
    for (Site s : sitesPerTick) {
      s.contentions *= uint64_t(t / 10);
      s.waitNs *= uint64_t(t / 10);
      sites.push_back(s);
    }
    b.tick(at(t), {}, {Cpu{0, used, 0, 0, all - used, 0, 0, 0, 0},
                       Cpu{1, used, 0, 0, all - used, 0, 0, 0, 0}},
           {}, 0, sites);
  }
}

std::vector<Finding> findingsOf(const SessionModel &m) {
  return m.findings(m.resolve(Window::wholeRun()));
}

std::optional<Finding> find(const std::vector<Finding> &fs, FindingKind k) {
  for (const Finding &f : fs)
    if (f.kind == k) return f;
  return std::nullopt;
}

// No high or medium finding at all.
void expectClean(const SessionModel &m) {
  for (const Finding &f : findingsOf(m))
    QVERIFY2(f.severity == Severity::Low, qPrintable(QString(findingKindKey(f.kind)) + ": " + f.message));
}

// Threads 11..13 take mutex 1 in turns: each 10 ms period, thread i works
// for `workMs` then blocks on the mutex (held by the next thread) until the
// period ends. Program exe is "loop".
StreamBuilder mutexScenario(int workMs) {
  StreamBuilder b;
  b.setExe("/opt/bin/loop");
  b.hello(false);
  b.syncObject(1, THREADMON__SYNC_KIND__KIND_MUTEX, 0x601040, "/opt/bin/loop", "table_lock", nullptr);
  b.stack(7, {"loop!update+0x12 (loop.c:40)", "loop!worker+0x30 (loop.c:60)", "libc.so.6!start_thread+0x8"});
  for (uint32_t tid = 11; tid <= 13; tid++) {
    b.threadStart(tid, at(0), qPrintable(QStringLiteral("looper-%1").arg(tid - 11)), "loop!worker");
    for (int p = 0; p < 1000; p += 10) {
      uint32_t next = tid == 13 ? 11 : tid + 1;
      b.transition(tid, at(p + workMs), kMutex, 1, next);
      b.transition(tid, at(p + 10), kRun, 0, 0, next);
    }
  }
  ticks(b, 1000, 0.5, {Site{1, 7, 3, uint64_t(3 * (10 - workMs)) * kMs}});
  b.goodbye(at(1000), 0);
  return b;
}

// Three loopers: 201 sampled on the word 500 ms, 202 100 ms, 203 on
// another word; the word's module and symbol and the waiters' stack given.
// notUnwoundShare: samples of the probe's "[not unwound]" stack for each one
// of stack's.
void sampledWaits(SessionModel *m, const char *module, const char *symbol,
                  const std::vector<const char *> &stack, uint64_t notUnwoundShare = 0) {
  StreamBuilder b;
  b.setExe("/opt/bin/mutex_loop");
  b.hello(false);
  const uint64_t lock = 0x7f0000001000, other = 0x7f0000002000;
  b.syncObject(9, THREADMON__SYNC_KIND__KIND_INTERNAL, lock, module, symbol, nullptr);
  b.stack(3, stack);
  b.stack(1, {"[not unwound]"});
  for (uint32_t tid : {201u, 202u, 203u}) b.threadStart(tid, at(0), "looper", "mutex_loop!work");
  // A thread is only sampled when something changed: futex_addr holds
  // until its next sample. 201 waits [100,600), 202 [200,300), 203 waits
  // on a word that is no internal object.
  for (int t = 10; t <= 1000; t += 10) {
    std::vector<Lwp> l;
    uint64_t on = uint64_t(t) * kMs / 4;
    if (t == 100) l.push_back(Lwp{201, 0, 0, on, 0, 0, 0, 0, 0, 0, 'S', lock});
    if (t == 600) l.push_back(Lwp{201, 0, 0, on, 0, 0, 0, 0, 0, 0, 'R', 0});
    if (t == 200) l.push_back(Lwp{202, 0, 0, on, 0, 0, 0, 0, 0, 0, 'S', lock});
    if (t == 300) l.push_back(Lwp{202, 0, 0, on, 0, 0, 0, 0, 0, 0, 'R', 0});
    if (t == 100) l.push_back(Lwp{203, 0, 0, on, 0, 0, 0, 0, 0, 0, 'S', other});
    std::vector<Site> sites{Site{9, 3, uint64_t(t / 10), uint64_t(t) * kMs}};
    if (notUnwoundShare)
      sites.push_back(Site{9, 1, notUnwoundShare * uint64_t(t / 10), uint64_t(t) * kMs});
    b.tick(at(t), l, {}, {}, 0, sites);
  }
  b.goodbye(at(1000), 0);
  b.applyTo(m);
}

}  // namespace

class TestModelFindings : public QObject {
  Q_OBJECT

 private slots:
  void waitsCarryHolderAndReleaser() {
    SessionModel m;
    mutexScenario(4).applyTo(&m);
    std::vector<WaitRecord> w = m.waits(1, TimeRange{at(0), at(10)});
    QCOMPARE(w.size(), size_t(3));
    QCOMPARE(w[0].start, at(4));
    QCOMPARE(w[0].end, at(10));
    QCOMPARE(w[0].waiter, 11u);
    QCOMPARE(w[0].holder, 12u);
    QCOMPARE(w[0].releaser, 12u);
    QVERIFY(!w[0].open);
  }

  void waitMatrixIsAWindowDelta() {
    SessionModel m;
    mutexScenario(4).applyTo(&m);
    // [5, 22): waits that began at 14 (one per thread) count; the ones from
    // 4 only add their clipped time (5..10 = 5 ms).
    std::vector<WaitPair> wm = m.waitMatrix(TimeRange{at(5), at(22)}, 1);
    QCOMPARE(wm.size(), size_t(3));
    for (const WaitPair &c : wm) {
      QCOMPARE(c.holder, c.waiter == 13 ? 11u : c.waiter + 1);
      QCOMPARE(c.count, uint64_t(1));
      QCOMPARE(c.waitNs, uint64_t(11 * kMs));  // 5 + 6
    }
    std::vector<WaitPair> all = m.waitMatrix(m.resolve(Window::wholeRun()));
    QCOMPARE(all.size(), size_t(3));
    QCOMPARE(all[0].count, uint64_t(100));
    QCOMPARE(all[0].waitNs, uint64_t(600 * kMs));
  }

  // SessionModel::waitSums says what waits() and waitMatrix() say, over
  // many waits (summed by thread place) and few (a hash table), with
  // holders that are no thread (99), unknown ones (0) and a barrier's
  // self-release; idle: threads that never wait (300 of them: fewer waits
  // than threads in a window, summed in hash tables alone).
  void waitSumsAgreeWithWaitsAndMatrix_data() {
    QTest::addColumn<int>("idle");
    QTest::newRow("4 threads") << 0;
    QTest::newRow("304 threads") << 300;
  }
  void waitSumsAgreeWithWaitsAndMatrix() {
    QFETCH(int, idle);
    StreamBuilder b;
    b.hello(false);
    for (uint32_t tid = 1000; tid < 1000 + uint32_t(idle); tid++) {
      b.threadStart(tid, at(0), "idle", "app!idle");
      b.transition(tid, at(2), kSleep);
    }
    b.syncObject(1, THREADMON__SYNC_KIND__KIND_MUTEX, 0x1000, "app", "a", nullptr);
    b.syncObject(2, THREADMON__SYNC_KIND__KIND_BARRIER, 0x2000, "app", "b", nullptr);
    for (uint32_t tid = 21; tid <= 24; tid++) {
      b.threadStart(tid, at(0), "worker", "app!work");
      for (int p = 0; p < 400; p += 4) {
        const uint32_t holder = p % 12 == 0 ? 0 : p % 12 == 4 ? 99 : (tid == 24 ? 21 : tid + 1);
        const bool barrier = p % 40 == 8;
        b.transition(tid, at(p + 1), barrier ? kBarrier : kMutex, barrier ? 2 : 1,
                     barrier ? 0 : holder);
        if (p < 396 || tid != 23)  // 23's last wait stays open
          b.transition(tid, at(p + 3), kRun, 0, 0, barrier ? (tid % 2 ? tid : 22) : holder);
      }
    }
    ticks(b, 400, 0.5);
    SessionModel m;
    b.applyTo(&m);
    for (const TimeRange &r :
         {m.resolve(Window::wholeRun()), TimeRange{at(45), at(54)}, TimeRange{at(100), at(300)}}) {
      for (uint32_t object : {1u, 2u}) {
        WaitSums sums;
        m.waitSums(object, r, &sums);
        const std::vector<WaitRecord> waits = m.waits(object, r);
        QVERIFY(!waits.empty());
        QCOMPARE(sums.pieces, uint64_t(waits.size()));
        std::map<uint32_t, int64_t> waiters;
        int64_t recorded = 0, unfinished = 0, blamed = 0;
        uint64_t count = 0;
        for (const WaitRecord &w : waits) {
          const int64_t ns = w.end - w.start;
          waiters[w.waiter] += ns;
          (w.open ? unfinished : recorded) += ns;
          if (!w.open) count += w.count;
          if (w.holder || w.releaser != w.waiter) blamed += ns;
        }
        const std::vector<std::pair<uint32_t, int64_t>> byTid(waiters.begin(), waiters.end());
        QCOMPARE(sums.waiters, byTid);
        QCOMPARE(sums.recorded, recorded);
        QCOMPARE(sums.unfinished, unfinished);
        QCOMPARE(sums.blamed, blamed);
        QCOMPARE(sums.count, count);
        std::vector<WaitPair> cells = sums.cells;
        sortWaitPairs(&cells);
        const std::vector<WaitPair> matrix = m.waitMatrix(r, object);
        QVERIFY(std::equal(cells.begin(), cells.end(), matrix.begin(), matrix.end(),
                           [](const WaitPair &x, const WaitPair &y) {
                             return x.waiter == y.waiter && x.holder == y.holder &&
                                    x.count == y.count && x.waitNs == y.waitNs;
                           }));
      }
    }
  }

  void callSitesAreWindowDeltas() {
    StreamBuilder b;
    b.hello(false);
    b.syncObject(1, THREADMON__SYNC_KIND__KIND_MUTEX, 0x1000, "app", "a", nullptr);
    b.stack(1, {"app!f+0x1", "app!main+0x2"});
    b.stack(2, {"app!g+0x1", "app!main+0x9"});
    for (int k = 1; k <= 10; k++) {
      uint64_t K = uint64_t(k), late = uint64_t(std::max(0, k - 5));
      b.tick(at(10 * k), {}, {}, {}, 0,
             {Site{1, 1, K, K * kMs}, Site{1, 2, 2 * late, 3 * late * kMs}});
    }
    SessionModel m;
    b.applyTo(&m);
    std::vector<CallSite> s = m.callSites(1, TimeRange{at(20), at(40)});
    QCOMPARE(s.size(), size_t(1));  // stack 2 did not move yet
    QCOMPARE(s[0].frames, QStringList({"app!f+0x1", "app!main+0x2"}));
    QCOMPARE(s[0].contentions, uint64_t(2));
    QCOMPARE(s[0].waitNs, uint64_t(2 * kMs));
    s = m.callSites(1, TimeRange{at(50), at(100)});
    QCOMPARE(s.size(), size_t(2));
    QCOMPARE(s[0].stackId, 2u);  // 15 ms beats 5 ms
    QCOMPARE(s[0].contentions, uint64_t(10));
    QCOMPARE(s[0].waitNs, uint64_t(15 * kMs));
    QCOMPARE(s[1].waitNs, uint64_t(5 * kMs));
    QCOMPARE(m.stack(2).size(), 2);
    QVERIFY(m.stack(99).isEmpty());
  }

  void internalWaitIsTheSleepShareOnTheWord() {
    // Waits far shorter than a tick: 301 sleeps in the kernel 4 x 5 ms, the
    // ticks see one of those sleeps, on the lock; 302 (another function)
    // sleeps 100 ms in read() (10 ticks) and 5 ms on the lock (1 tick). Each
    // one's wait on the lock is its exact kernel sleep x the share of its
    // asleep ticks on the word, and its system time x the same share is
    // kernel time for the lock. 303 runs 301's function and sleeps 50 ms,
    // never caught asleep: it waits like its sibling.
    StreamBuilder b;
    b.setExe("/opt/bin/mutex_loop");
    b.hello(true);
    const uint64_t lock = 0x7f0000001000;
    const uint32_t futexNr = 202 + 1, readNr = 0 + 1;
    b.syncObject(9, THREADMON__SYNC_KIND__KIND_INTERNAL, lock, "/lib/x86_64-linux-gnu/libc.so.6",
                 "lock", nullptr);
    b.threadStart(301, at(0), "looper", "mutex_loop!work");
    b.threadStart(302, at(0), "reader", "mutex_loop!reader");
    b.threadStart(303, at(0), "looper", "mutex_loop!work");
    for (uint32_t tid : {301u, 302u, 303u}) b.cpuSwitch(tid, at(0), tid - 301, kIn);
    auto asleep301 = [](int t) { return t % 100 == 0 && t >= 100 && t <= 400; };
    for (int s = 100; s <= 400; s += 100) {
      b.cpuSwitch(301, at(s), 0, kOut);
      b.cpuSwitch(301, at(s) + 5 * kMs, 0, kIn);
    }
    b.cpuSwitch(302, at(100), 1, kOut);
    b.cpuSwitch(302, at(200), 1, kIn);
    b.cpuSwitch(302, at(500), 1, kOut);
    b.cpuSwitch(302, at(505), 1, kIn);
    b.cpuSwitch(303, at(600), 2, kOut);
    b.cpuSwitch(303, at(650), 2, kIn);
    for (int t = 10; t <= 1000; t += 10) {
      // On a CPU all the time it was not asleep: no stolen time.
      uint64_t on301 = uint64_t(t) * kMs - uint64_t(std::min(4, t / 100 - (t % 100 == 0))) * 5 * kMs;
      if (t < 100) on301 = uint64_t(t) * kMs;
      uint64_t on302 = uint64_t(t) * kMs - (t > 100 ? uint64_t(std::min(t, 200) - 100) * kMs : 0) -
                       (t > 500 ? 5 * kMs : 0);
      uint64_t on303 = uint64_t(t) * kMs - (t > 600 ? uint64_t(std::min(t, 650) - 600) * kMs : 0);
      Lwp a{301, 0, uint64_t(t) * kMs / 10, on301, 0};  // 10% system time
      a.cpu = 0;
      a.kstate = asleep301(t) ? 'S' : 'R';
      if (asleep301(t) && t == 100) {
        a.futex = lock;
        a.asleep = futexNr;
      }
      Lwp c{302, 0, 0, on302, 0};
      c.cpu = 1;
      c.kstate = (t >= 100 && t < 200) || t == 500 ? 'S' : 'R';
      if (t >= 100 && t < 200) c.asleep = readNr;
      if (t == 500) {
        c.futex = lock;
        c.asleep = futexNr;
      }
      Lwp d{303, 0, 0, on303, 0};
      d.cpu = 2;
      d.kstate = 'R';
      b.tick(at(t), {a, c, d});
    }
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    TimeRange whole = m.resolve(Window::wholeRun());
    std::vector<InternalWaiter> w = m.internalWaiters(9, whole);
    // 303 runs the same function as 301 but was never seen on the word: a
    // sibling is not charged (every std::thread shares a start routine).
    QCOMPARE(w.size(), size_t(2));
    // Most lost first: 301 (20 ms asleep + 100 ms system), 302.
    QCOMPARE(w[0].tid, 301u);
    QCOMPARE(w[0].samples, uint64_t(1));
    QVERIFY2(qAbs(double(w[0].waitNs) - 20.0 * kMs) < 0.01 * kMs, qPrintable(QString::number(w[0].waitNs)));
    QVERIFY2(qAbs(double(w[0].kernelNs) - 100.0 * kMs) < 0.01 * kMs,
             qPrintable(QString::number(w[0].kernelNs)));
    QCOMPARE(w[1].tid, 302u);
    QCOMPARE(w[1].samples, uint64_t(1));
    QVERIFY2(qAbs(double(w[1].waitNs) - 105.0 * kMs / 11) < 0.01 * kMs,
             qPrintable(QString::number(w[1].waitNs)));
    QCOMPARE(w[1].kernelNs, uint64_t(0));
    QCOMPARE(m.internalWaitNs(m.indexOfTid(301), whole), w[0].waitNs);
    QCOMPARE(m.internalWaitNs(m.indexOfTid(303), whole), uint64_t(0));
  }

  void runtimeSyncIsRecognisedFromTheStack() {
    auto kindOf = [](std::initializer_list<const char *> frames) {
      QStringList l;
      for (const char *f : frames) l << QString::fromLatin1(f);
      return runtimeSyncOf(l);
    };
    // C++20 (libstdc++ 12): the caller of __atomic_wait_address says which type.
    RuntimeSync sem = kindOf({"libc.so.6!syscall+0x19", "p!_ZNSt8__detail15__platform_waitIiEEvPKT_i+0x23",
                              "p!_ZSt26__atomic_wait_address_bareIZNSt18__atomic_semaphore10_M_acquireEvEUlvE_EvPKiT_+0x4d"});
    QCOMPARE(sem.kind, int(THREADMON__SYNC_KIND__KIND_SEM));
    QCOMPARE(sem.what, QStringLiteral("C++ std::counting_semaphore"));
    QCOMPARE(kindOf({"libc.so.6!syscall+0x19",
                     "p!_ZSt21__atomic_wait_addressISt17__barrier_phase_tZNKSt14__tree_barrierISt18__"
                     "empty_completionE4waitEOS0_EUlvE_EvPKT_T0_+0x60"}).kind,
             int(THREADMON__SYNC_KIND__KIND_BARRIER));
    QCOMPARE(kindOf({"libc.so.6!syscall+0x19",
                     "p!_ZSt23__atomic_wait_address_vIiZNKSt13__atomic_baseIiE4waitEiSt12memory_"
                     "orderEUlvE_EvPKT_S4_T0_+0x84"}).kind,
             int(THREADMON__SYNC_KIND__KIND_COND));
    // Rust: v0 and legacy mangling, old and new std module paths.
    QCOMPARE(kindOf({"libc.so.6!syscall+0x19",
                     "p!_RNvMNtNtNtNtCsjrHSEGnQ3l9_3std3sys4sync5mutex5futexNtB2_5Mutex14lock_contended+0x9"}).kind,
             int(THREADMON__SYNC_KIND__KIND_MUTEX));
    QCOMPARE(kindOf({"libc.so.6!syscall+0x19",
                     "p!_ZN3std3sys4unix5locks11futex_rwlock6RwLock15write_contended17h0123456789abcdefE+0x3"}).kind,
             int(THREADMON__SYNC_KIND__KIND_RWLOCK));
    QCOMPARE(kindOf({"libc.so.6!syscall+0x19",
                     "p!_RNvMNtNtNtNtCsjrHSEGnQ3l9_3std3sys4sync7condvar5futexNtB2_7Condvar4wait+0x85"}).kind,
             int(THREADMON__SYNC_KIND__KIND_COND));
    // A library's own lock stays hidden, and a program function's name does
    // not make one (only the runtime's frames are read).
    QCOMPARE(kindOf({"libc.so.6!__lll_lock_wait_private+0x2b", "libc.so.6!random+0x1c",
                     "mutex_loop!work+0x31"}).kind, 0);
    QCOMPARE(kindOf({"libc.so.6!syscall+0x19", "p!latch_reset+0x10", "p!futex_mutex_wait+0x4"}).kind, 0);
    // OpenMP (a stripped libgomp, as Debian's): a wait inside it is at a
    // barrier (a worker at a loop's end, as recorded), or at a lock when an
    // entry point that takes one is on the stack.
    RuntimeSync bar = kindOf({"libgomp.so.1+0x1f823", "libgomp.so.1+0x1cd9a",
                              "libc.so.6!start_thread+0x305 (pthread_create.c:442)"});
    QCOMPARE(bar.kind, int(THREADMON__SYNC_KIND__KIND_BARRIER));
    QCOMPARE(bar.what, QStringLiteral("OpenMP barrier"));
    QCOMPARE(kindOf({"libgomp.so.1+0x1e0f0", "libgomp.so.1!GOMP_critical_start+0x1a",
                     "omp!main._omp_fn.0+0x40 (omp.c:9)"})
                 .kind,
             int(THREADMON__SYNC_KIND__KIND_MUTEX));
    QCOMPARE(
        kindOf({"libgomp.so.1+0x1e0f0", "libgomp.so.1!omp_set_lock+0x8", "omp!work+0x40"}).kind,
        int(THREADMON__SYNC_KIND__KIND_MUTEX));
    QCOMPARE(kindOf({"libgompish.so+0x10", "p!work+0x4"}).kind, 0);
  }

  // A looper never caught asleep (its waits too short for any tick) runs the
  // function of one seen on the lock: it is charged by inference. One seen
  // asleep in another call, or running another function, is not.
  void unseenPeersAreInferred() {
    StreamBuilder b;
    b.setExe("/opt/bin/mutex_loop");
    b.hello(false);
    const uint64_t lock = 0x7f0000001000;
    b.syncObject(9, THREADMON__SYNC_KIND__KIND_INTERNAL, lock, "/lib/x86_64-linux-gnu/libc.so.6",
                 "lock", nullptr);
    b.stack(3, {"libc.so.6!random+0x1c", "mutex_loop!work+0x31 (mutex_loop.c:36)"});
    for (uint32_t tid : {301u, 302u, 303u}) b.threadStart(tid, at(0), "looper", "mutex_loop!work");
    b.threadStart(304, at(0), "other", "mutex_loop!other");
    const uint32_t futexNr = 202 + 1, readNr = 0 + 1;
    for (int t = 10; t <= 1000; t += 10) {
      // Half of each tick on a CPU, and switches no wrapped call explains:
      // the other half is asleep outside wrapped calls.
      const uint64_t on = uint64_t(t) * kMs / 2, vol = uint64_t(t);
      const bool caught = t % 100 == 50;
      std::vector<Lwp> l;
      l.push_back(Lwp{301, 0, 0, on, 0, vol, 0, 0, 0, 0, caught ? 'S' : 'R', caught ? lock : 0,
                      caught ? futexNr : 0});
      l.push_back(Lwp{302, 0, 0, on, 0, vol, 0, 0, 0, 0, 'R', 0});
      l.push_back(Lwp{303, 0, 0, on, 0, vol, 0, 0, 0, 0, caught ? 'S' : 'R', 0, caught ? readNr : 0});
      l.push_back(Lwp{304, 0, 0, on, 0, vol, 0, 0, 0, 0, 'R', 0});
      b.tick(at(t), l, {}, {}, 0, {Site{9, 3, uint64_t(t / 100), 0}});
    }
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    TimeRange whole = m.resolve(Window::wholeRun());
    std::vector<InternalWaiter> w = m.internalWaiters(9, whole);
    std::map<uint32_t, InternalWaiter> by;
    for (const InternalWaiter &x : w) by[x.tid] = x;
    QCOMPARE(by.size(), size_t(2));
    QVERIFY(by.count(301) && by.count(302));
    QCOMPARE(by[301].samples, uint64_t(10));
    QVERIFY(!by[301].inferred);
    QCOMPARE(by[302].samples, uint64_t(0));
    QVERIFY(by[302].inferred);
    // Every sleep of 301 that a tick caught was on the lock: 302's half a
    // second asleep is charged whole (within a tick).
    QVERIFY2(by[302].waitNs > 490 * kMs && by[302].waitNs <= 500 * kMs,
             qPrintable(QString::number(by[302].waitNs)));
    QCOMPARE(m.internalWaitNs(m.indexOfTid(302), whole), by[302].waitNs);
    QCOMPARE(m.internalWaitNs(m.indexOfTid(303), whole), uint64_t(0));
    QCOMPARE(m.internalWaitNs(m.indexOfTid(304), whole), uint64_t(0));
  }

  void internalWaitsGoToTheRightThreads() {
    SessionModel m;
    sampledWaits(&m, "/lib/x86_64-linux-gnu/libc.so.6", "lock",
                 {"libc.so.6!random+0x1c", "mutex_loop!work+0x31 (mutex_loop.c:36)",
                  "libc.so.6!start_thread+0x8"});
    TimeRange whole = m.resolve(Window::wholeRun());
    std::vector<InternalWaiter> w = m.internalWaiters(9, whole);
    QCOMPARE(w.size(), size_t(2));
    QCOMPARE(w[0].tid, 201u);
    QCOMPARE(w[0].samples, uint64_t(50));
    QCOMPARE(w[0].waitNs, uint64_t(500 * kMs));
    QCOMPARE(w[1].tid, 202u);
    QCOMPARE(w[1].samples, uint64_t(10));
    std::vector<InternalWaiter> part = m.internalWaiters(9, TimeRange{at(250), at(400)});
    QCOMPARE(part.size(), size_t(2));
    QCOMPARE(part[0].samples, uint64_t(15));
    QCOMPARE(part[1].samples, uint64_t(5));
    QCOMPARE(m.internalWaitNs(m.indexOfTid(203), whole), uint64_t(0));

    std::vector<Finding> fs = findingsOf(m);
    std::optional<Finding> f = find(fs, FindingKind::InternalLock);
    QVERIFY(f);
    QCOMPARE(f->objects, std::vector<uint32_t>{9});
    QCOMPARE(f->threads, (std::vector<uint32_t>{201, 202}));
    // 500 + 100 ms of the two waiters' 2 s (203 is not a waiter).
    QVERIFY(qAbs(f->evidence["share"].toDouble() - 0.3) < 1e-9);
    QVERIFY2(f->message.contains("libc.so.6"), qPrintable(f->message));
    QVERIFY2(f->message.contains("mutex_loop!work"), qPrintable(f->message));
    QVERIFY2(f->message.contains("random()"), qPrintable(f->message));
    QVERIFY2(f->message.contains("looper (201)"), qPrintable(f->message));
    QVERIFY2(f->message.contains("never wrote"), qPrintable(f->message));
    QCOMPARE(viewKindName(findingInfo(f->kind).view), QStringLiteral("sync"));
  }

  // A busy machine may leave most of a hidden lock's samples without a
  // stack (the waiter ran on before its stack was read): the finding still
  // names the place the unwound ones came from, not "[not unwound]".
  void internalLockNamesItsBusiestUnwoundSite() {
    SessionModel m;
    sampledWaits(&m, "/lib/x86_64-linux-gnu/libc.so.6", "lock",
                 {"libc.so.6!random+0x1c", "mutex_loop!work+0x31 (mutex_loop.c:36)",
                  "libc.so.6!start_thread+0x8"},
                 3);
    const TimeRange whole = m.resolve(Window::wholeRun());
    const std::vector<CallSite> sites = m.callSites(9, whole);
    QCOMPARE(sites.size(), size_t(2));
    QCOMPARE(sites.front().frames, QStringList{notUnwoundFrame()});
    QVERIFY(!sites.front().unwound() && sites.back().unwound());
    std::optional<Finding> f = find(findingsOf(m), FindingKind::InternalLock);
    QVERIFY(f);
    QCOMPARE(f->evidence["program_function"].toString(), QStringLiteral("mutex_loop!work"));
    QCOMPARE(f->evidence["library_function"].toString(), QStringLiteral("random"));
    QVERIFY2(f->message.contains("reached from mutex_loop!work via random()"),
             qPrintable(f->message));
    QCOMPARE(m.objectCallSite(m.indexOfSyncObject(9), whole), QStringLiteral("mutex_loop!work"));
  }

  // Whose lock a sampled word is (raw futex waits, no syscall() to see):
  // one in the program's data, or on the heap and waited on by the
  // program's own code, is the program's; a heap word libc's code waits on
  // (a FILE from fopen) stays the library's.
  void programWordsAreTheProgramsLocks() {
    auto verdict = [](const char *module, const std::vector<const char *> &stack) {
      SessionModel m;
      sampledWaits(&m, module, "", stack);
      std::optional<Finding> f = find(findingsOf(m), FindingKind::InternalLock);
      if (!f) return QStringLiteral("no finding");
      const bool own = f->evidence["own_lock"].toBool();
      return own == f->message.contains("never wrote") ? f->message
                                                       : QString(own ? "own" : "library's");
    };
    QCOMPARE(verdict("/opt/bin/mutex_loop", {"mutex_loop!table_lock+0x40", "mutex_loop!work+0x31"}),
             QStringLiteral("own"));
    QCOMPARE(verdict("[heap]", {"mutex_loop!table_lock+0x40", "mutex_loop!work+0x31"}),
             QStringLiteral("own"));
    QCOMPARE(verdict("[heap]", {"libc.so.6!__lll_lock_wait_private+0x2b", "libc.so.6!fputs+0x40",
                                "mutex_loop!work+0x31"}),
             QStringLiteral("library's"));
  }

  void deadlockConfirmedAfter100msAndResolved() {
    StreamBuilder b;
    b.hello(false);
    b.syncObject(1, THREADMON__SYNC_KIND__KIND_MUTEX, 0x1000, "app", "lock_a", "app!transfer+0x10");
    b.syncObject(2, THREADMON__SYNC_KIND__KIND_MUTEX, 0x2000, "app", "lock_b", "app!audit+0x20");
    b.threadStart(31, at(0), "left", "app!left");
    b.threadStart(32, at(0), "right", "app!right");
    b.threadStart(33, at(0), "other", "app!other");
    // 33 waits on 1 held by 31, harmlessly, then gets it.
    b.transition(33, at(20), kMutex, 1, 31);
    b.transition(33, at(30), kRun, 0, 0, 31);
    b.transition(31, at(100), kMutex, 2, 32);  // 31 holds 1 (uncontended), waits for 2
    b.tick(at(100), {});
    b.tick(at(110), {});
    size_t before = b.frames().size();
    b.transition(32, at(115), kMutex, 1, 31);  // 32 holds 2, waits for 1: a cycle
    b.tick(at(120), {});
    for (int t = 130; t <= 210; t += 10) b.tick(at(t), {});
    size_t unconfirmed = b.frames().size();
    b.tick(at(220), {});  // the cycle has lasted the 100 ms that confirm it
    size_t confirmed = b.frames().size();
    for (int t = 230; t <= 500; t += 10) b.tick(at(t), {});
    b.transition(31, at(505), kRun, 0, 0, 0);  // a timed lock gave up
    b.tick(at(510), {});
    b.tick(at(520), {});
    b.goodbye(at(520), 0);

    SessionModel m;
    QSignalSpy spy(&m, &SessionModel::deadlockDetected);
    const auto &fr = b.frames();
    auto feed = [&](size_t from, size_t to) {
      for (size_t i = from; i < to; i++)
        m.applyPayload(reinterpret_cast<const uint8_t *>(fr[i].data()), fr[i].size());
    };
    feed(0, before);
    QVERIFY(m.liveDeadlocks().empty());
    feed(before, unconfirmed);
    QVERIFY(m.liveDeadlocks().empty());  // not yet: it could be a holder that just let go
    feed(unconfirmed, confirmed);
    std::vector<Deadlock> live = m.liveDeadlocks();
    QCOMPARE(live.size(), size_t(1));
    QCOMPARE(live[0].threads, (std::vector<uint32_t>{31, 32}));
    QCOMPARE(live[0].objects, (std::vector<uint32_t>{2, 1}));
    QCOMPARE(live[0].formedNs, at(115));
    QCOMPARE(live[0].detectedNs, at(220));
    QCOMPARE(spy.count(), 1);
    feed(confirmed, fr.size());
    QCOMPARE(spy.count(), 1);  // the same cycle is not announced again
    QVERIFY(m.liveDeadlocks().empty());
    QCOMPARE(m.deadlocks().size(), size_t(1));
    QCOMPARE(m.deadlocks()[0].resolvedNs, at(505));

    std::optional<Finding> f = find(findingsOf(m), FindingKind::Deadlock);
    QVERIFY(f);
    QCOMPARE(f->severity, Severity::High);
    QCOMPARE(f->evidence["resolved"].toBool(), true);
    QCOMPARE(f->evidence["formed_s"].toDouble(), 0.115);
    QVERIFY2(f->message.contains("left (31)") && f->message.contains("right (32)") &&
                 f->message.contains("app!transfer"),
             qPrintable(f->message));
  }

  void aChainIsNoDeadlock() {
    StreamBuilder b;
    b.hello(false);
    for (uint32_t tid : {41u, 42u, 43u}) b.threadStart(tid, at(0), "t", "app!t");
    b.transition(41, at(10), kMutex, 1, 42);
    b.transition(42, at(10), kMutex, 2, 43);  // 43 runs: the chain will unwind
    for (int t = 10; t <= 100; t += 10) b.tick(at(t), {});
    SessionModel m;
    b.applyTo(&m);
    QVERIFY(m.deadlocks().empty());
  }

  // mutex_loop-like: two threads take two mutexes in turn, never both. The
  // owners learnt from earlier waits are stale (an uncontended unlock sends
  // nothing), so they must not make a cycle of two short waits whose holder
  // was unknown (the lock was released between trylock and reading its owner).
  void staleOwnersMakeNoDeadlock() {
    StreamBuilder b;
    b.hello(false);
    b.syncObject(1, THREADMON__SYNC_KIND__KIND_MUTEX, 0x1000, "app", "m1", "app!loop+0x10");
    b.syncObject(2, THREADMON__SYNC_KIND__KIND_MUTEX, 0x2000, "app", "m2", "app!loop+0x20");
    b.threadStart(51, at(0), "looper", "app!loop");
    b.threadStart(52, at(0), "looper", "app!loop");
    b.transition(51, at(10), kMutex, 1, 52);  // 52 holds 1
    b.transition(51, at(20), kRun, 0, 0, 52);  // 51 owns 1, unlocks it unseen
    b.transition(52, at(30), kMutex, 2, 51);  // 51 holds 2
    b.transition(52, at(40), kRun, 0, 0, 51);  // 52 owns 2, unlocks it unseen
    b.transition(51, at(50), kMutex, 2, 0);
    b.transition(52, at(50), kMutex, 1, 0);
    for (int t = 10; t <= 60; t += 10) b.tick(at(t), {});
    b.transition(51, at(62), kRun, 0, 0, 0);
    b.transition(52, at(63), kRun, 0, 0, 0);
    for (int t = 70; t <= 100; t += 10) b.tick(at(t), {});
    SessionModel m;
    b.applyTo(&m);
    QVERIFY(m.deadlocks().empty());
    QVERIFY(!find(findingsOf(m), FindingKind::Deadlock));
  }

  // Two threads hammering one mutex while their sampler is starved (stress-ng
  // --mutex at real-time priority): 61's acquisition was lost, so both seem
  // to wait for the one mutex, each held up by the other. One mutex has one
  // owner: that is a stale holder, not a deadlock. The probe marks where its
  // events were lost (UNKNOWN), which ends the wait there.
  void lostEventsMakeNoDeadlockOnOneMutex() {
    StreamBuilder b;
    b.hello(false);
    b.syncObject(1, THREADMON__SYNC_KIND__KIND_MUTEX, 0x1000, "app", "m", "app!run+0x10");
    b.threadStart(61, at(0), "worker", "app!run");
    b.threadStart(62, at(0), "worker", "app!run");
    b.transition(61, at(10), kMutex, 1, 62);
    b.transition(62, at(20), kMutex, 1, 61);  // 61 got it; that event was lost
    for (int t = 10; t <= 400; t += 10) b.tick(at(t), {});
    SessionModel m;
    b.applyTo(&m);
    QVERIFY(m.deadlocks().empty());
    QVERIFY(!find(findingsOf(m), FindingKind::Deadlock));

    StreamBuilder marked;
    marked.hello(false);
    marked.syncObject(1, THREADMON__SYNC_KIND__KIND_MUTEX, 0x1000, "app", "m", "app!run+0x10");
    marked.threadStart(61, at(0), "worker", "app!run");
    marked.transition(61, at(10), kMutex, 1, 62);
    marked.transition(61, at(15), kLost, 0, 0);  // events lost from here
    marked.transition(61, at(300), kMutex, 1, 62);
    marked.transition(61, at(302), kRun, 0, 0, 62);
    for (int t = 10; t <= 400; t += 10) marked.tick(at(t), {});
    SessionModel mm;
    marked.applyTo(&mm);
    std::vector<BlockedInterval> waits = mm.blockedOn(1, mm.resolve(Window::wholeRun()));
    QCOMPARE(waits.size(), size_t(2));
    QCOMPARE(waits[0].start, at(10));
    QCOMPARE(waits[0].end, at(15));  // not until the next event that arrived
    QCOMPARE(waits[1].end - waits[1].start, at(2) - at(0));
  }

  // Lost data comes first: which threads have gaps, what was lost, and
  // whether the probe's thread was starved. A clean session says nothing.
  void dataLostIsReportedFirst() {
    for (bool lossy : {false, true}) {
      StreamBuilder b;
      b.hello(true);
      b.threadStart(4243, at(0), "threadmon", "", true);
      b.threadStart(91, at(0), "worker", "app!w");
      b.threadStart(92, at(0), "worker", "app!w");
      b.cpuSwitch(4243, at(0), 0, kPreempt);  // the probe waits for a CPU all along
      b.transition(91, at(10), kMutex, 1, 92);
      if (lossy) b.transition(91, at(12), kLost, 0, 0);
      b.cpuSwitch(92, at(20), 1, kIn, lossy ? 500 : 0);
      b.cpuSwitch(4243, at(21), 0, kPreempt);  // still waiting, after the loss too
      ticks(b, 500, 0.5);
      b.goodbye(at(500), 0, lossy ? 77 : 0);
      SessionModel m;
      b.applyTo(&m);
      std::vector<Finding> all = findingsOf(m);
      std::optional<Finding> f = find(all, FindingKind::DataLost);
      QCOMPARE(bool(f), lossy);
      if (!f) continue;
      QCOMPARE(all.front().kind, FindingKind::DataLost);
      QCOMPARE(f->severity, Severity::High);
      QCOMPARE(f->threads, (std::vector<uint32_t>{91}));
      QCOMPARE(f->evidence["events_dropped"].toInteger(), 77);
      QCOMPARE(f->evidence["switch_records_lost"].toInteger(), 500);
      QVERIFY2(f->message.contains("77 state changes of worker (91)") &&
                   f->message.contains("500 context-switch records") &&
                   f->message.contains("waited for a CPU"),
               qPrintable(f->message));
    }
    // One record lost in 200 received: a Low note, not an alarm.
    StreamBuilder b;
    b.hello(true);
    b.threadStart(91, at(0), "worker", "app!w");
    for (int k = 0; k < 200; k++) b.cpuSwitch(91, at(k), 0, k % 2 ? kOut : kIn, k == 100);
    ticks(b, 500, 0.5);
    SessionModel m;
    b.applyTo(&m);
    std::optional<Finding> minor = find(findingsOf(m), FindingKind::DataLost);
    QVERIFY(minor);
    QCOMPARE(minor->severity, Severity::Low);
  }

  // Folded changes keep every total: the finding is Medium when their gaps
  // held a share of the threads' time worth a look at their order, Low
  // when under kDataLostMinorShare (memcached's 271 changes in 12 ms of a
  // worker's 23 s read Medium, alone in its report).
  void foldedChangesWeighByTheirGapsTime() {
    for (uint64_t foldedMs : {uint64_t(4), uint64_t(100)}) {
      StreamBuilder b;
      b.hello(true);
      b.threadStart(91, at(0), "worker", "app!w");
      for (int k = 0; k < 20; k++) b.cpuSwitch(91, at(50 * k), 0, k % 2 ? kOut : kIn);
      b.transition(91, at(100), THREADMON__THREAD_STATE__STATE_RUNNING);
      b.transition(91, at(200), kLost);
      b.transition(91, at(200 + int64_t(foldedMs)), THREADMON__THREAD_STATE__STATE_RUNNING);
      for (int t = 10; t <= 1000; t += 10) {
        Lwp l{91, uint64_t(t) * kMs, 0, uint64_t(t) * kMs, 0, 0, 0, 0, 0, 0, 'R'};
        if (t > 200) {
          l.folded.assign(kWireStates, 0);
          l.folded[THREADMON__THREAD_STATE__STATE_RUNNING] = foldedMs * kMs / 2;
          l.folded[THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX] = foldedMs * kMs / 2;
          l.foldedChanges = 40;
        }
        b.tick(at(t), {l});
      }
      b.goodbye(at(1000), 0);
      SessionModel m;
      b.applyTo(&m);
      std::optional<Finding> f = find(findingsOf(m), FindingKind::DataLost);
      QVERIFY(f);
      const double share = f->evidence["folded_share"].toDouble();
      QVERIFY2(qAbs(share - double(foldedMs) / 1000) < 0.002, qPrintable(QString::number(share)));
      QCOMPARE(f->severity, foldedMs < 10 ? Severity::Low : Severity::Medium);
      QCOMPARE(f->threads, (std::vector<uint32_t>{91}));
    }
  }

  // A capture that stops without the program's exit while the probe's thread
  // waited for a CPU (the kernel's run-queue counter: its records show a
  // sleep, the wait after its timer fired is not in them) lost its end.
  // The same with a Goodbye, or an unstarved probe, says nothing.
  void capturesCutShortByAStarvedProbe() {
    struct Case {
      bool goodbye;
      uint64_t probeQueuedMs;
      bool fires;
    };
    for (Case c : {Case{false, 450, true}, Case{true, 450, false}, Case{false, 20, false}}) {
      StreamBuilder b;
      b.hello(true);
      b.threadStart(4243, at(0), "threadmon", "", true);
      b.threadStart(91, at(0), "worker", "app!w");
      b.cpuSwitch(4243, at(1), 0, kOut);  // asleep by its records from here
      b.cpuSwitch(91, at(0), 0, kIn);
      for (int t = 10; t <= 500; t += 10) {
        const uint64_t queued = c.probeQueuedMs * uint64_t(t) / 500 * kMs;
        b.tick(at(t), {Lwp{4243, 0, 0, kMs, queued}, Lwp{91, uint64_t(t) * kMs, 0,
                                                          uint64_t(t) * kMs, 0}});
      }
      if (c.goodbye) b.goodbye(at(500), 0);
      SessionModel m;
      b.applyTo(&m);
      m.markEnded();
      std::optional<Finding> f = find(findingsOf(m), FindingKind::DataLost);
      QCOMPARE(bool(f), c.fires);
      if (!f) continue;
      QCOMPARE(f->severity, Severity::High);
      QVERIFY(f->evidence["ends_without_exit"].toBool());
      QVERIFY2(qAbs(f->evidence["probe_runnable_share"].toDouble() - 0.9) < 0.02,
               qPrintable(QString::number(f->evidence["probe_runnable_share"].toDouble())));
      QVERIFY2(f->message.contains("the end of the run") && f->message.contains("90%"),
               qPrintable(f->message));
    }
  }

  // Two readers of one rwlock that both want to write it are a real deadlock:
  // the one-owner rule is for mutexes only.
  void twoUpgradingReadersAreADeadlock() {
    StreamBuilder b;
    b.hello(false);
    b.syncObject(1, THREADMON__SYNC_KIND__KIND_RWLOCK, 0x1000, "app", "rw", "app!up+0x10");
    b.threadStart(71, at(0), "reader", "app!up");
    b.threadStart(72, at(0), "reader", "app!up");
    b.transition(71, at(10), THREADMON__THREAD_STATE__STATE_BLOCKED_RWLOCK, 1, 72);
    b.transition(72, at(10), THREADMON__THREAD_STATE__STATE_BLOCKED_RWLOCK, 1, 71);
    for (int t = 10; t <= 300; t += 10) b.tick(at(t), {});
    SessionModel m;
    b.applyTo(&m);
    QCOMPARE(m.deadlocks().size(), size_t(1));
  }

  void serialisingObjectRaisedOnlyWhenHeavy() {
    SessionModel heavy;
    mutexScenario(4).applyTo(&heavy);
    std::optional<Finding> f = find(findingsOf(heavy), FindingKind::SerialisingObject);
    QVERIFY(f);
    QCOMPARE(f->severity, Severity::High);  // 60% >= 2 x 20%
    QCOMPARE(f->objects, std::vector<uint32_t>{1});
    QCOMPARE(f->threads, (std::vector<uint32_t>{11, 12, 13}));
    QVERIFY(qAbs(f->evidence["share"].toDouble() - 0.6) < 1e-9);
    QVERIFY2(f->message.contains("loop!update") && f->message.contains("looper-0 (11)"),
             qPrintable(f->message));
    // Lightly contended: 1 ms of each 10.
    SessionModel light;
    mutexScenario(9).applyTo(&light);
    expectClean(light);
    QVERIFY(!find(findingsOf(light), FindingKind::SerialisingObject));
  }

  // A rwlock's writer held off by its readers (no holder at its waits'
  // start): starved_writer names it; waits behind a writer (its tid the
  // holder) are serialisation's, and a writer that waited little raises
  // nothing.
  void starvedWriterNamedByItsWaitsBehindReaders() {
    constexpr auto kRw = THREADMON__THREAD_STATE__STATE_BLOCKED_RWLOCK;
    for (const bool behindReaders : {true, false}) {
      for (const int waitMs : {8, 2}) {
        StreamBuilder b;
        b.setExe("/opt/bin/table");
        b.hello(false);
        b.syncObject(1, THREADMON__SYNC_KIND__KIND_RWLOCK, 0x601040, "/opt/bin/table", "table_lock",
                     nullptr);
        b.stack(7, {"table!writer+0x12 (table.c:40)", "libc.so.6!start_thread+0x8"});
        for (uint32_t tid : {10u, 11u}) b.threadStart(tid, at(0), "reader", "table!reader");
        b.threadStart(12, at(0), "writer", "table!writer");
        // Each 10 ms the writer waits waitMs, behind readers or behind 13.
        b.threadStart(13, at(0), "other-writer", "table!writer");
        for (int p = 0; p < 1000; p += 10) {
          b.transition(12, at(p + 1), kRw, 1, behindReaders ? 0 : 13);
          b.transition(12, at(p + 1 + waitMs), kRun, 0, 0, 0);
        }
        ticks(b, 1000, 0.5, {Site{1, 7, 100, uint64_t(100 * waitMs) * kMs}});
        b.goodbye(at(1000), 0);
        SessionModel m;
        b.applyTo(&m);
        std::optional<Finding> f = find(findingsOf(m), FindingKind::StarvedWriter);
        QCOMPARE(bool(f), behindReaders && waitMs == 8);
        if (!f) continue;
        QCOMPARE(f->threads, std::vector<uint32_t>{12});
        QCOMPARE(f->objects, std::vector<uint32_t>{1});
        QCOMPARE(f->severity, Severity::High);  // 80% >= 2 x 30%
        QVERIFY(qAbs(f->evidence["share"].toDouble() - 0.8) < 0.01);
        QVERIFY(qAbs(f->evidence["longest_wait_s"].toDouble() - 0.008) < 1e-6);
        QVERIFY2(f->message.startsWith("writer (12) spent 80% of its time waiting to write-lock") &&
                     f->message.contains("table_lock") && f->message.contains("table!writer"),
                 qPrintable(f->message));
        // Not also "only one of them can hold it at a time".
        QVERIFY(!find(findingsOf(m), FindingKind::SerialisingObject));
      }
    }
  }

  // The sentence's waiters are those that lost 1% of their lives or more:
  // a holder that once waited 3 us does not halve the waiters' 80%.
  void serialisingNamesTheThreadsThatLost() {
    StreamBuilder b;
    b.setExe("/opt/bin/hold");
    b.hello(false);
    b.syncObject(1, THREADMON__SYNC_KIND__KIND_MUTEX, 0x601040, "/opt/bin/hold", "big_lock",
                 nullptr);
    b.stack(7, {"hold!waiter+0x12 (hold.c:40)", "libc.so.6!start_thread+0x8"});
    b.threadStart(10, at(0), "holder", "hold!holder");
    for (uint32_t tid : {11u, 12u}) {
      b.threadStart(tid, at(0), qPrintable(QStringLiteral("waiter-%1").arg(tid - 11)),
                    "hold!waiter");
      for (int p = 0; p < 1000; p += 10) {
        b.transition(tid, at(p + 1), kMutex, 1, 10);
        b.transition(tid, at(p + 9), kRun, 0, 0, 10);
      }
    }
    b.transition(10, at(500), kMutex, 1, 11);
    b.transition(10, at(500) + 3000, kRun, 0, 0, 11);
    ticks(b, 1000, 0.5, {Site{1, 7, 2, 16 * kMs}});
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    std::optional<Finding> f = find(findingsOf(m), FindingKind::SerialisingObject);
    QVERIFY(f);
    QCOMPARE(f->threads, (std::vector<uint32_t>{10, 11, 12}));  // every waiter
    QVERIFY2(f->message.startsWith("waiter-0 (11) and waiter-1 (12) spent 80% of their time"),
             qPrintable(f->message));
    QVERIFY(qAbs(f->evidence["waiters_share"].toDouble() - 0.8) < 0.01);
    QVERIFY(qAbs(f->evidence["waiters_lifetime_s"].toDouble() - 2.0) < 0.01);
  }

  // Many threads are named by pool: 30 of 40 loopers wait, 10 only run.
  void manyThreadsAreNamedByPool() {
    StreamBuilder b;
    b.setExe("/opt/bin/loop");
    b.hello(false);
    b.syncObject(1, THREADMON__SYNC_KIND__KIND_MUTEX, 0x601040, "/opt/bin/loop", "table_lock", nullptr);
    b.stack(7, {"loop!update+0x12 (loop.c:40)", "loop!worker+0x30 (loop.c:60)", "libc.so.6!start_thread+0x8"});
    constexpr uint32_t kFirst = 11, kLoopers = 40, kWaiting = 30;
    for (uint32_t tid = kFirst; tid < kFirst + kLoopers; tid++) {
      b.threadStart(tid, at(0), qPrintable(QStringLiteral("looper-%1").arg(tid - kFirst)), "loop!worker");
      if (tid >= kFirst + kWaiting) continue;
      for (int p = 0; p < 1000; p += 10) {
        const uint32_t next = tid + 1 == kFirst + kWaiting ? kFirst : tid + 1;
        b.transition(tid, at(p + 2), kMutex, 1, next);
        b.transition(tid, at(p + 10), kRun, 0, 0, next);
      }
    }
    ticks(b, 1000, 0.5, {Site{1, 7, kWaiting, uint64_t(kWaiting * 8) * kMs}});
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    std::optional<Finding> f = find(findingsOf(m), FindingKind::SerialisingObject);
    QVERIFY(f);
    QCOMPARE(f->threads.size(), size_t(kWaiting));
    QVERIFY2(f->message.startsWith("30 of the 40 looper-# threads spent"), qPrintable(f->message));
    QVERIFY2(!f->message.contains("more)"), qPrintable(f->message));  // no list of tids
    // The who-blocks-whom matrix by pool: looper-# waited for looper-#, every wait summed.
    std::vector<WaitPair> pairs = m.waitMatrix(TimeRange{m.startNs(), m.latestNs()});
    QCOMPARE(pairs.size(), size_t(kWaiting));
    // A wait of nobody known stays apart from every pool: holder 0.
    PoolPairs pp = poolPairs(m, {WaitPair{kFirst, 0, 1, 5}});
    QCOMPARE(pp.pairs.size(), size_t(1));
    QCOMPARE(pp.pairs[0].holder, 0u);
    QCOMPARE(pp.pairs[0].waiter, 1u);
    pp = poolPairs(m, pairs);
    QCOMPARE(pp.parties, QStringList{QStringLiteral("looper-# (40 threads)")});
    QCOMPARE(pp.pooled, 1);
    QCOMPARE(pp.pairs.size(), size_t(1));
    uint64_t count = 0, ns = 0;
    for (const WaitPair &p : pairs) count += p.count, ns += p.waitNs;
    QCOMPARE(pp.pairs[0].count, count);
    QCOMPARE(pp.pairs[0].waitNs, ns);
    QCOMPARE(pp.pairs[0].waiter, 1u);
  }

  void barrierImbalanceAndBalancedBarrier() {
    // uneven: 53 works 100 ms a round, the others 20. balanced: all work 98.
    // heldUp: all work 20 ms, but 53 waits 80 ms for a CPU first.
    // lastEnters: uneven, as the probe records a pthread barrier: 53 enters
    // too and names itself (glibc's serial thread), and 52's releaser is
    // unknown every other round (it read its own stale name).
    enum Case { Uneven, Balanced, HeldUp, LastEnters };
    for (Case c : {Uneven, Balanced, HeldUp, LastEnters}) {
      StreamBuilder b;
      b.hello(false);
      b.syncObject(5, THREADMON__SYNC_KIND__KIND_BARRIER, 0x5000, "app", "phase", nullptr);
      for (uint32_t tid : {51u, 52u, 53u}) b.threadStart(tid, at(0), "w", "app!w");
      // Rounds of 100 ms; 53 arrives last and releases the others.
      for (int r = 0; r < 10; r++) {
        int end = 100 * (r + 1), arrive = c == Balanced ? end - 2 : end - 80;
        for (uint32_t tid : {51u, 52u}) {
          b.transition(tid, at(arrive), kBarrier, 5);
          b.transition(tid, at(end), kRun, 0, 0, c == LastEnters && tid == 52 && r % 2 ? 0 : 53);
        }
        if (c == LastEnters) {
          b.transition(53, at(end - 1), kBarrier, 5);
          b.transition(53, at(end), kRun, 0, 0, 53);
        }
        if (c == HeldUp) {
          b.cpuSwitch(53, at(end - 100), 1, kPreempt);
          b.cpuSwitch(53, at(end - 20), 1, kIn);
        }
      }
      // Each thread's CPU clock and run-queue time up to t ms, as sampled.
      auto ranBy = [c](uint32_t tid, int t) {
        const int run = tid != 53 ? (c == Balanced ? 98 : 20) : (c == HeldUp ? 20 : 100);
        const int from = tid == 53 && c == HeldUp ? 80 : 0;  // within each round
        return (t / 100) * run + std::clamp(t % 100 - from, 0, run);
      };
      for (int t = 10; t <= 1000; t += 10) {
        uint64_t used = uint64_t(t) * kMs * 9 / 10, all = uint64_t(t) * kMs;
        std::vector<Lwp> lwps;
        for (uint32_t tid : {51u, 52u, 53u}) {
          const uint64_t on = uint64_t(ranBy(tid, t)) * kMs;
          const uint64_t queued = tid == 53 && c == HeldUp ? uint64_t(t - ranBy(tid, t)) * kMs : 0;
          lwps.push_back(Lwp{tid, on, 0, on, queued});
        }
        b.tick(at(t), lwps, {Cpu{0, used, 0, 0, all - used, 0, 0, 0, 0},
                             Cpu{1, used, 0, 0, all - used, 0, 0, 0, 0}});
      }
      b.goodbye(at(1000), 0);
      SessionModel m;
      b.applyTo(&m);
      std::optional<Finding> f = find(findingsOf(m), FindingKind::BarrierImbalance);
      if (c == Balanced) {
        QVERIFY(!f);
        expectClean(m);
        continue;
      }
      QVERIFY(f);
      if (c == LastEnters) {
        // Who blocked whom: nobody blocked the last arrival; 52's unknown
        // releasers are unknown, not 53.
        std::map<std::pair<uint32_t, uint32_t>, int> cells;
        for (const WaitPair &p : m.waitMatrix(m.resolve(Window::wholeRun()), 5))
          cells[{p.waiter, p.holder}] = p.count;
        const std::map<std::pair<uint32_t, uint32_t>, int> want = {
            {{51, 53}, 10}, {{52, 53}, 5}, {{52, 0}, 5}};
        QVERIFY(cells == want);
      }
      QCOMPARE(f->evidence["usual_last"].toInteger(), 53);
      QVERIFY(qAbs(f->evidence["others_wait_share"].toDouble() - 0.8) < 1e-9);
      QCOMPARE(viewKindName(findingInfo(f->kind).view), QStringLiteral("timeline"));
      // What held the last one up: more work (5x the CPU), or no CPU (1x).
      const double ratio = f->evidence["cpu_ratio"].toDouble();
      const bool moreWork = c != HeldUp;
      QVERIFY2(qAbs(ratio - (moreWork ? 5.0 : 1.0)) < 0.05, qPrintable(QString::number(ratio)));
      QVERIFY2(f->message.contains(moreWork ? "5.0× the CPU time" : "waiting for a CPU"),
               qPrintable(f->message));
    }
  }

  // jshell: the JIT's compiler threads wait on the compile queue (a cond)
  // and the thread that queued a method wakes them, round after round; they
  // use more CPU than the program's threads, so the rules see them, but a
  // runtime's own queue is no finding's subject (it read as a HIGH
  // barrier_imbalance). The same rounds between program threads are one.
  void jitCompileQueueIsNoBarrier() {
    for (bool jvm : {true, false}) {
      StreamBuilder b;
      b.hello(false);
      const char *routine = jvm ? "/usr/lib/jvm/lib/server/libjvm.so!thread_native_entry" : "app!w";
      b.threadStart(80, at(0), "java", "", false, true);
      b.threadStart(83, at(0), "jshell-worker", "app!work");
      b.threadStart(81, at(0), jvm ? "C2 CompilerThre" : "w-1", routine);
      b.threadStart(82, at(0), jvm ? "C1 CompilerThre" : "w-2", routine);
      b.syncObject(9, THREADMON__SYNC_KIND__KIND_COND, 0x9000, "[anon]", nullptr, nullptr);
      for (int r = 0; r < 20; r++) {
        const uint32_t releaser = r % 10 ? 80 : 83;
        for (uint32_t tid : {81u, 82u}) {
          b.transition(tid, at(10 * r + 2), THREADMON__THREAD_STATE__STATE_BLOCKED_COND, 9);
          b.transition(tid, at(10 * r + 10), kRun, 0, 0, releaser);
        }
      }
      for (int t = 10; t <= 200; t += 10) {
        const uint64_t little = uint64_t(t) * kMs / 10, more = uint64_t(t) * kMs / 5;
        b.tick(at(t), {Lwp{80, little, 0, little, 0}, Lwp{83, little, 0, little, 0},
                       Lwp{81, more, 0, more, 0}, Lwp{82, more, 0, more, 0}});
      }
      b.goodbye(at(200), 0);
      SessionModel m;
      b.applyTo(&m);
      std::optional<Finding> f = find(findingsOf(m), FindingKind::BarrierImbalance);
      QVERIFY2(bool(f) == !jvm, jvm ? qPrintable(f->message) : "no barrier_imbalance");
    }
  }

  // A pool's workers waiting on their queue's cond for work that an event
  // loop reads (idle in epoll_wait, as the reads find it) and queues, with
  // a second releaser (main's broadcast at shutdown): waiting for work, not
  // for a slow member. The same rounds released by a busy thread are one.
  void poolWaitingForWorkIsNoBarrier() {
    for (bool idleLoop : {true, false}) {
      StreamBuilder b;
      b.hello(false);
      b.threadStart(80, at(0), "main", "", false, true);
      b.threadStart(83, at(0), "evloop", "app!evloop");
      b.threadStart(81, at(0), "worker-0", "app!worker");
      b.threadStart(82, at(0), "worker-1", "app!worker");
      b.syncObject(9, THREADMON__SYNC_KIND__KIND_COND, 0x9000, "app", "queue", nullptr);
      for (int r = 0; r < 20; r++) {
        const uint32_t releaser = r == 19 ? 80 : 83;
        for (uint32_t tid : {81u, 82u}) {
          b.transition(tid, at(10 * r + 2), THREADMON__THREAD_STATE__STATE_BLOCKED_COND, 9);
          b.transition(tid, at(10 * r + 10), kRun, 0, 0, releaser);
        }
      }
      for (int t = 10; t <= 200; t += 10) {
        const uint64_t little = uint64_t(t) * kMs / 100, more = uint64_t(t) * kMs / 5;
        Lwp loop{83, little, 0, little, 0};
        if (idleLoop) {
          loop.asleep = 233;  // a syscall number + 1; its kind is what counts
          loop.asleepKind = THREADMON__ASLEEP_KIND__ASLEEP_IO_EVENTS;
        } else {
          loop.oncpu = loop.user = uint64_t(t) * kMs * 9 / 10;
          loop.kstate = 'R';
        }
        b.tick(at(t), {Lwp{80, little, 0, little, 0}, loop, Lwp{81, more, 0, more, 0},
                       Lwp{82, more, 0, more, 0}});
      }
      b.goodbye(at(200), 0);
      SessionModel m;
      b.applyTo(&m);
      std::optional<Finding> f = find(findingsOf(m), FindingKind::BarrierImbalance);
      QVERIFY2(bool(f) == !idleLoop, idleLoop ? qPrintable(f->message) : "no barrier_imbalance");
      const StateTimes loop = m.threadStates(m.indexOfTid(83), m.resolve(Window::wholeRun()));
      QCOMPARE(loop.ns[size_t(FinalState::Idle)] > 0, idleLoop);
    }
  }

  // A thread that sleeps by choice 45% of its life, waits for answers
  // (idle) 45% and 10% in a futex is no thread stuck in a call that never
  // returns, though neither share is half its life.
  void neverRunsIsNotIdlePlusChosenSleep() {
    StreamBuilder b;
    b.hello(true);
    b.threadStart(95, at(0), "client", "app!client");
    b.threadStart(96, at(0), "stuck", "app!stuck");
    for (int r = 0; r < 10; r++) {  // 45 ms asleep by choice, 45 idle in recv, 10 in a futex
      b.transition(95, at(100 * r), kSleep);
      b.cpuSwitch(95, at(100 * r), 1, kOut);
      b.transition(95, at(100 * r + 45), kRun);
    }
    b.cpuSwitch(96, at(0), 1, kOut);
    for (int t = 10; t <= 1000; t += 10) {
      Lwp client{95, 0, 0, 0, 0}, stuck{96, 0, 0, 0, 0};
      // A syscall number + 1: recv [45,90), a futex [90,100) of each 100 ms.
      client.asleep = t % 100 == 0 ? 203 : t % 100 >= 50 ? 46 : 0;
      client.asleepKind = t % 100 == 0 ? THREADMON__ASLEEP_KIND__ASLEEP_OTHER
                                       : THREADMON__ASLEEP_KIND__ASLEEP_READ;
      stuck.asleep = 100;
      b.tick(at(t), {client, stuck});
    }
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    std::vector<uint32_t> raised;
    for (const Finding &f : findingsOf(m))
      if (f.kind == FindingKind::NeverRuns) raised.insert(raised.end(), f.threads.begin(), f.threads.end());
    QCOMPARE(raised, (std::vector<uint32_t>{96}));
  }

  // A semaphore of one slot taken and posted by the same threads is a lock:
  // judged as one (serialising_object), as a mutex in its place would be.
  // Posted by a producer that never waits on it, it is a queue: nothing.
  void semaphoreUsedAsALockIsJudgedAsALock() {
    for (bool asLock : {true, false}) {
      StreamBuilder b;
      b.hello(false);
      b.syncObject(3, THREADMON__SYNC_KIND__KIND_SEM, 0x3000, "app", "slot", nullptr);
      for (uint32_t tid : {11u, 12u, 13u, 14u}) b.threadStart(tid, at(0), "w", "app!w");
      // Each 10 ms: 11-13 wait 4 ms, posted by the previous holder (lock)
      // or by producer 14 (queue).
      for (int p = 0; p < 1000; p += 10)
        for (uint32_t tid : {11u, 12u, 13u}) {
          const uint32_t poster = asLock ? (tid == 11 ? 13 : tid - 1) : 14;
          b.transition(tid, at(p + 6), THREADMON__THREAD_STATE__STATE_BLOCKED_SEM, 3);
          b.transition(tid, at(p + 10), kRun, 0, 0, poster);
        }
      ticks(b, 1000, 0.5);
      b.goodbye(at(1000), 0);
      SessionModel m;
      b.applyTo(&m);
      std::optional<Finding> f = find(findingsOf(m), FindingKind::SerialisingObject);
      QCOMPARE(bool(f), asLock);
      if (f) QCOMPARE(f->objects, std::vector<uint32_t>{3});
    }
  }

  // The last arrival sleeps 70 ms of each 100 ms round (a sleep call) and
  // works 10: the others wait for its sleep, which the message says (it read
  // "used 0.5x the CPU time ... held up waiting for a CPU").
  void barrierLastArrivalThatSleeps() {
    StreamBuilder b;
    b.hello(false);
    b.syncObject(5, THREADMON__SYNC_KIND__KIND_BARRIER, 0x5000, "app", "phase", nullptr);
    for (uint32_t tid : {51u, 52u, 53u}) b.threadStart(tid, at(0), "w", "app!w");
    for (int r = 0; r < 10; r++) {
      const int end = 100 * (r + 1);
      for (uint32_t tid : {51u, 52u}) {
        b.transition(tid, at(end - 80), kBarrier, 5);
        b.transition(tid, at(end), kRun, 0, 0, 53);
      }
      b.transition(53, at(end - 100), kSleep);
      b.transition(53, at(end - 30), kRun);
    }
    for (int t = 10; t <= 1000; t += 10) {
      // 51 and 52 work the first 20 ms of a round, 53 10 ms after its sleep.
      auto ran = [t](int per, int from) {
        return uint64_t((t / 100) * per + std::clamp(t % 100 - from, 0, per)) * kMs;
      };
      b.tick(at(t), {Lwp{51, ran(20, 0), 0, ran(20, 0), 0}, Lwp{52, ran(20, 0), 0, ran(20, 0), 0},
                     Lwp{53, ran(10, 70), 0, ran(10, 70), 0}});
    }
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    std::optional<Finding> f = find(findingsOf(m), FindingKind::BarrierImbalance);
    QVERIFY(f);
    QCOMPARE(f->evidence["usual_last"].toInteger(), 53);
    // Its 70 ms sleep call and the 20 ms off a CPU after it (its clock says).
    QVERIFY2(f->message.contains("it sleeps 90% of its time outside the barrier"),
             qPrintable(f->message));
  }

  // Eight connection threads runnable half their life on 2 CPUs among 40
  // idle ones: the idle ones want no CPU and do not dilute the share.
  void oversubscribedCountsTheThreadsThatWantToRun() {
    StreamBuilder b;
    b.hello(true);
    for (uint32_t tid = 100; tid < 140; tid++) b.threadStart(tid, at(0), "idle", "app!idle");
    for (uint32_t tid = 140; tid < 148; tid++) {
      b.threadStart(tid, at(0), "conn", "app!conn");
      for (int p = 0; p < 1000; p += 10) {
        b.cpuSwitch(tid, at(p), (tid - 140) % 2, kIn);
        b.cpuSwitch(tid, at(p + 2), (tid - 140) % 2, kPreempt);
      }
    }
    ticks(b, 1000, 1.0);
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    std::optional<Finding> f = find(findingsOf(m), FindingKind::Oversubscribed);
    QVERIFY(f);
    QCOMPARE(f->evidence["busy_threads"].toInt(), 8);
    QVERIFY2(f->evidence["share"].toDouble() > 0.5, qPrintable(f->message));
  }

  // A herd of 30 threads that each wake for 4 ms in 200 ms, 2 of them
  // runnable, all at once, beside one busy thread on a CPU then, runnable
  // 10 ms in 100 at other times, on 2 CPUs: the herd wants no CPU, so its
  // runnable time is none of the program's oversubscription (the bins'
  // runnable sums are of the threads that want to run), and the busy
  // thread's is where no more threads are active than there are CPUs.
  void oversubscribedLeavesOutTheHerdsRunnableTime() {
    StreamBuilder b;
    b.hello(true);
    b.threadStart(99, at(0), "busy", "app!busy");
    for (int p = 0; p < 1000; p += 100) {
      b.cpuSwitch(99, at(p), 0, kIn);
      b.cpuSwitch(99, at(p + 90), 0, kPreempt);
    }
    for (uint32_t tid = 100; tid < 130; tid++) {
      b.threadStart(tid, at(0), "herd", "app!herd");
      for (int p = 0; p < 1000; p += 200) {
        b.cpuSwitch(tid, at(p), 1, kIn);
        b.cpuSwitch(tid, at(p + 1), 1, kPreempt);
        b.cpuSwitch(tid, at(p + 3), 1, kIn);
        b.cpuSwitch(tid, at(p + 4), 1, kOut);
      }
    }
    ticks(b, 1000, 1.0);
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    // As findings_sched.cpp's wantsToRun: on a CPU or runnable a tenth of its life.
    const auto wants = [&m](uint32_t tid) {
      const StateTimes st = m.threadStates(m.indexOfTid(tid), m.resolve(Window::wholeRun()));
      return 10 * (st.ns[size_t(FinalState::OnCpu)] + st.ns[size_t(FinalState::Runnable)]) >=
             st.lifetimeNs;
    };
    QVERIFY(!wants(100));  // the herd
    QVERIFY(wants(99));
    const std::vector<Finding> all = findingsOf(m);
    QVERIFY(!find(all, FindingKind::Oversubscribed));
    FindingInputs in;
    computeFindings(m, m.resolve(Window::wholeRun()), {}, &in);
    QVERIFY2(in.runnableBeyondCpusNs < double(kMs),
             qPrintable(QString::number(in.runnableBeyondCpusNs)));
  }

  void oversubscribedAndSpinSleep() {
    for (bool over : {true, false}) {
      StreamBuilder b;
      b.hello(true);
      uint32_t n = over ? 4 : 2;
      // A main thread parked in a join: part of the program, not a busy thread.
      b.threadStart(60, at(0), "main", "");
      b.transition(60, at(0), THREADMON__THREAD_STATE__STATE_BLOCKED_JOIN);
      for (uint32_t tid = 61; tid < 61 + n; tid++) {
        b.threadStart(tid, at(0), "w", "app!w");
        // Each 10 ms: 5 ms on a CPU, then 5 ms runnable (over) or asleep.
        for (int p = 0; p < 1000; p += 10) {
          b.cpuSwitch(tid, at(p), (tid - 61) % 2, kIn);
          if (!over) b.transition(tid, at(p + 5), kSleep);
          b.cpuSwitch(tid, at(p + 5), (tid - 61) % 2, over ? kPreempt : kOut);
          if (!over) b.transition(tid, at(p + 10), kRun);
        }
      }
      ticks(b, 1000, over ? 1.0 : 0.5);
      b.goodbye(at(1000), 0);
      SessionModel m;
      b.applyTo(&m);
      std::optional<Finding> f = find(findingsOf(m), FindingKind::Oversubscribed);
      if (!over) {
        QVERIFY(!f);
        expectClean(m);
        continue;
      }
      QVERIFY(f);
      // Runnable 2 of the 4 workers' 4 thread-seconds: the joiner, which
      // wants no CPU, does not dilute it.
      QVERIFY2(qAbs(f->evidence["share"].toDouble() - 0.5) < 0.01,
               qPrintable(QString::number(f->evidence["share"].toDouble())));
      QCOMPARE(f->severity, Severity::High);  // High from 2x the 25% threshold
      QCOMPARE(f->threads, (std::vector<uint32_t>{61, 62, 63, 64}));  // not the joiner
      QCOMPARE(f->evidence["busy_threads"].toInt(), 4);
    }
  }

  void undersubscribedPhase() {
    // /proc/stat every tick, or (as the probe reads it) only every `every`th,
    // off the 50 ms bins: thread 71 keeps
    // CPU 0 busy, 72 CPU 1 until it waits at the barrier; then CPU 1 idles
    // unless another process keeps it busy (no finding: nothing to gain).
    struct Case {
      int done;
      bool machineBusy;
      bool fires;
    };
    for (int every : {1, 5, 10}) {
      for (Case c : {Case{500, false, true}, Case{990, false, false}, Case{500, true, false}}) {
        StreamBuilder b;
        twoOnCpusWithABarrier(b);
        b.transition(72, at(c.done), kBarrier, 5);
        b.cpuSwitch(72, at(c.done), 1, kOut);
        b.transition(72, at(1000), kRun, 0, 0, 71);
        for (int t = 10; t <= 1000; t += 10) {
          std::vector<Cpu> cpus;
          if ((t / 10 + 2) % every == 0) {
            uint64_t all = uint64_t(t) * kMs;
            uint64_t busy1 = c.machineBusy ? all : uint64_t(std::min(t, c.done)) * kMs;
            cpus = {Cpu{0, all, 0, 0, 0, 0, 0, 0, 0}, Cpu{1, busy1, 0, 0, all - busy1, 0, 0, 0, 0}};
          }
          b.tick(at(t), {}, cpus);
        }
        b.goodbye(at(1000), 0);
        SessionModel m;
        b.applyTo(&m);
        const QString what =
            QStringLiteral("every %1, done %2, busy %3").arg(every).arg(c.done).arg(c.machineBusy);
        std::optional<Finding> f = find(findingsOf(m), FindingKind::Undersubscribed);
        QVERIFY2(bool(f) == c.fires, qPrintable(what));
        if (f) QVERIFY2(qAbs(f->evidence["share"].toDouble() - 0.5) < 0.06, qPrintable(what));
      }
    }
  }

  void undersubscribedNotFromABinCutShort() {
    // Thread 71 keeps CPU 0 busy; 72 runs 10 ms of each 50 ms round and
    // waits at the barrier the rest (1.2 threads hold a CPU per bin, under
    // the 1.5 a program that can fill 2 CPUs needs), until the run's last
    // 15 ms, a bin cut short, where both run. That sliver is no phase of the
    // program: a streamed report's windows end in such bins (its HIGH
    // undersubscribed of barrier_imbalance, which the whole read had not).
    StreamBuilder b;
    twoOnCpusWithABarrier(b);
    for (int round = 0; round < 20; round++) {
      const int start = 50 * round;
      b.transition(72, at(start + 10), kBarrier, 5);
      b.cpuSwitch(72, at(start + 10), 1, kOut);
      b.transition(72, at(start + 50), kRun, 0, 0, 71);
      b.cpuSwitch(72, at(start + 50), 1, kIn);
    }
    for (int t = 10; t <= 1015; t += t == 1010 ? 5 : 10) {
      const uint64_t all = uint64_t(t) * kMs;
      const uint64_t busy1 = uint64_t(t >= 1000 ? 200 + t - 1000 : t / 50 * 10 + std::min(t % 50, 10)) * kMs;
      b.tick(at(t), {},
             {Cpu{0, all, 0, 0, 0, 0, 0, 0, 0}, Cpu{1, busy1, 0, 0, all - busy1, 0, 0, 0, 0}});
    }
    b.goodbye(at(1015), 0);
    SessionModel m;
    b.applyTo(&m);
    std::optional<Finding> f = find(findingsOf(m), FindingKind::Undersubscribed);
    QVERIFY2(!f, f ? qPrintable(f->message) : "");
  }

  void neverRunsForStarvedAndStuckThreadsOnly() {
    StreamBuilder b;
    b.hello(true);
    b.threadStart(81, at(0), "starved", "app!s");
    b.threadStart(82, at(0), "busy", "app!b");
    b.threadStart(83, at(0), "reader", "app!r");
    b.threadStart(84, at(0), "timer", "app!t");
    b.cpuSwitch(81, at(0), 0, kPreempt);  // ready to run, never switched in
    b.cpuSwitch(82, at(0), 0, kIn);
    b.cpuSwitch(83, at(0), 1, kOut);      // blocked in the kernel (a read)
    b.transition(84, at(0), kSleep);      // asleep in nanosleep: its choice
    b.cpuSwitch(84, at(0), 1, kOut);
    b.tick(at(5), {Lwp{81, 0, 0, 0, 5 * kMs, 0, 0, 0, 0, 0, 'R'}, Lwp{82, 0, 0, 5 * kMs, 0},
                   Lwp{83, 0, 0, 0, 0}, Lwp{84, 0, 0, 0, 0}});
    ticks(b, 1000, 0.5);
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    std::vector<uint32_t> raised;
    for (const Finding &f : findingsOf(m))
      if (f.kind == FindingKind::NeverRuns) {
        QCOMPARE(f.severity, Severity::Medium);
        raised.insert(raised.end(), f.threads.begin(), f.threads.end());
      }
    QCOMPARE(raised, (std::vector<uint32_t>{81, 83}));
  }

  // Threads asleep outside wrapped calls, told apart by what their syscall
  // waits for: a parent waiting for its worker processes (wait4), a signal
  // thread, an event loop idle in epoll_wait or a reader waiting for input
  // is doing its job; one in a syscall that says nothing stays Medium.
  void neverRunsSaysWhatTheSyscallWaitsFor() {
    StreamBuilder b;
    b.hello(true);
    struct Case {
      uint32_t tid;
      Threadmon__AsleepKind kind;
    };
    const Case cases[] = {{85, THREADMON__ASLEEP_KIND__ASLEEP_CHILD},
                          {86, THREADMON__ASLEEP_KIND__ASLEEP_SIGNAL},
                          {87, THREADMON__ASLEEP_KIND__ASLEEP_READ},
                          {88, THREADMON__ASLEEP_KIND__ASLEEP_OTHER},
                          {89, THREADMON__ASLEEP_KIND__ASLEEP_IO_EVENTS}};
    std::vector<Lwp> first;
    for (const Case &c : cases) {
      b.threadStart(c.tid, at(0), "t", "app!t");
      b.cpuSwitch(c.tid, at(0), 1, kOut);
      Lwp l{c.tid, 0, 0, 0, 0};
      l.asleep = 100;  // a syscall number + 1; its kind is what counts
      l.asleepKind = c.kind;
      first.push_back(l);
    }
    b.tick(at(5), first);
    ticks(b, 1000, 0.5);
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    std::map<uint32_t, Finding> raised;
    for (const Finding &f : findingsOf(m))
      if (f.kind == FindingKind::NeverRuns) raised[f.threads.front()] = f;
    // Waiting for a child, a signal, work (read, poll): none is a problem;
    // a syscall that says nothing is.
    QCOMPARE(raised.size(), size_t(1));
    QVERIFY(raised.count(88));
    QCOMPARE(raised[88].severity, Severity::Medium);
    QVERIFY2(raised[88].message.contains("system call that never returned"),
             qPrintable(raised[88].message));
  }

  void runqueueIsNormalisedByTheRealSpan() {
    // Sampled only every 5th tick (counters moved): 25 ms run-queue per
    // 50 ms is half a thread waiting, not 2.5.
    StreamBuilder b;
    b.hello(false);
    b.threadStart(91, at(0), "w", "app!w");
    for (int t = 10; t <= 500; t += 10) {
      std::vector<Lwp> l;
      if (t % 50 == 0) l.push_back(Lwp{91, 0, 0, uint64_t(t) * kMs / 2, uint64_t(t) * kMs / 2});
      b.tick(at(t), l);
    }
    SessionModel m;
    b.applyTo(&m);
    for (const TickPoint &p : m.ticks(TimeRange{at(50), at(500)}))
      QVERIFY2(p.runqueueThreads <= 0.5f + 1e-4f, qPrintable(QString::number(p.runqueueThreads)));
  }

  // A first reading with a life's counters (the thread ran before it was
  // seen: an attach, a window's model started mid-run) puts none of its
  // run-queue time into its tick; it once read as 200 threads waiting.
  void runqueueOfAFirstReadingFromMidLifeIsNotItsTicks() {
    StreamBuilder b;
    b.hello(false);
    b.threadStart(91, at(0), "w", "app!w");
    b.tick(at(10), {});
    b.tick(at(20), {Lwp{91, 0, 0, 3000 * kMs, 2000 * kMs}});
    b.tick(at(30), {Lwp{91, 0, 0, 3005 * kMs, 2005 * kMs}});
    SessionModel m;
    b.applyTo(&m);
    const std::vector<TickPoint> tp = m.ticks(TimeRange{at(10), at(30)});
    QCOMPARE(tp.size(), size_t(3));
    QCOMPARE(tp[1].runqueueThreads, 0.0f);
    QVERIFY2(std::fabs(tp[2].runqueueThreads - 0.5f) < 1e-4f,
             qPrintable(QString::number(tp[2].runqueueThreads)));
  }

  // M:N: user threads sharing fewer LWPs are said in words (low when the
  // LWPs already match the CPUs, medium when more LWPs would run more);
  // long runs on an LWP are no handoff problem.
  void userThreadsSharingLwps() {
    for (uint32_t cpus : {2u, 4u}) {
      SessionModel m;
      synth::userSharingScenario(cpus).applyTo(&m);
      const std::vector<Finding> fs = findingsOf(m);
      std::optional<Finding> f = find(fs, FindingKind::UserThreadsShareLwps);
      QVERIFY(f);
      QVERIFY2(f->message.startsWith(QStringLiteral(
                   "6 user threads share 2 LWPs: at most 2 run at once; they were "
                   "dispatchable (off an LWP: waiting for one, or parked by their "
                   "scheduler) 67% of the time.")),
               qPrintable(f->message));
      QCOMPARE(f->severity, cpus == 2 ? Severity::Low : Severity::Medium);
      QCOMPARE(f->message.contains(QStringLiteral("more LWPs would run more")), cpus == 4);
      QCOMPARE(viewKindName(findingInfo(f->kind).view), QStringLiteral("users"));
      QCOMPARE(f->threads, (std::vector<uint32_t>{101, 102}));
      QVERIFY(std::fabs(f->evidence["dispatchable_share"].toDouble() - 2.0 / 3) < 0.01);
      QVERIFY2(!find(fs, FindingKind::UserThreadHandoff), "10 ms runs are no handoff");
    }
  }

  // The M-to-N study's fine-grained barrier: user threads run 10 us at a
  // time and their LWPs sit parked between them: the handoff finding, with
  // the numbers of the stream, and the bound alternative.
  void userThreadHandoffExplainsTheUnboundPenalty() {
    SessionModel m;
    synth::userHandoffScenario().applyTo(&m);
    const std::vector<Finding> fs = findingsOf(m);
    std::optional<Finding> f = find(fs, FindingKind::UserThreadHandoff);
    QVERIFY(f);
    QCOMPARE(f->severity, Severity::Medium);
    QVERIFY2(f->message.startsWith(QStringLiteral(
                 "4 user threads gave up their LWPs 20000 times a second, running 10.0 us on "
                 "average each time, and were dispatchable 95% of the time; meanwhile their 2 "
                 "LWPs spent 90% of the time in their scheduler parked or waiting for a CPU.")),
             qPrintable(f->message));
    QVERIFY(f->message.contains(QStringLiteral("Bound threads (one user thread per LWP")));
    QVERIFY(std::fabs(f->evidence["lwp_scheduler_idle_share"].toDouble() - 0.9) < 0.01);
    // 4 user threads on 2 LWPs share them too.
    QVERIFY(find(fs, FindingKind::UserThreadsShareLwps));
  }

  void cpuBusyIsNotBiasedByClockTickQuantisation() {
    // /proc/stat moves in 10 ms steps: a CPU 90% busy shows 0 or 20 ms per
    // 10 ms tick, alternating. Read every tick or (as the probe does) only
    // every 5th, the charts' 100 ms window ending at any tick must still be
    // near 90%, and with sparse samples so must a 10 ms one between two.
    for (int every : {1, 5}) {
      StreamBuilder b;
      b.hello(false, 1);
      uint64_t busy = 0, idle = 0;
      for (int t = 10; t <= 1000; t += 10) {
        if (t % 20 == 0) {
          busy += (t % 200 == 0) ? 10 * kMs : 20 * kMs;
          idle += (t % 200 == 0) ? 10 * kMs : 0;
        }
        std::vector<Cpu> c;
        if (t % (10 * every) == 0) c = {Cpu{0, busy, 0, 0, idle, 0, 0, 0, 0}};
        b.tick(at(t), {}, c);
      }
      SessionModel m;
      b.applyTo(&m);
      for (int t = 200; t <= 1000; t += 10) {
        for (int len : {100, 10}) {
          if (len == 10 && every == 1) continue;  // a single tick is 0 or 200%
          double share = m.cpuBusyShare(TimeRange{at(t - len), at(t)});
          QVERIFY2(share > 0.8 && share <= 1.0,
                   qPrintable(QStringLiteral("every %1: %2 ms over %3 ms: %4")
                                  .arg(every).arg(t).arg(len).arg(share)));
        }
      }
      if (every == 5)  // from the first sample to the last: 910 ms busy, 50 ms idle
        QVERIFY(std::fabs(m.cpuBusyShare(TimeRange{at(50), at(1000)}) - 910.0 / 960.0) < 1e-9);
    }
  }
};

QTEST_GUILESS_MAIN(TestModelFindings)
#include "test_model_findings.moc"
