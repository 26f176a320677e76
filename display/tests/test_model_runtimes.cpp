// Language runtimes: call stacks told apart by their function names (locks,
// event waits, a runtime parking its workers), the JVM's housekeeping
// threads, and the findings that name a runtime's own locks (CPython's GIL
// and threading.Lock, Java monitors and java.util.concurrent parking) on
// synthetic streams whose truth is known.
#include <QtTest>

#include <optional>

#include "runtimes.h"
#include "sessionmodel.h"
#include "synthstream.h"

using namespace tmon;
using namespace tmtest;

namespace {

int64_t at(int64_t ms) { return kT0 + ms * kMs; }
constexpr auto kRun = THREADMON__THREAD_STATE__STATE_RUNNING;
constexpr auto kCond = THREADMON__THREAD_STATE__STATE_BLOCKED_COND;
constexpr auto kSem = THREADMON__THREAD_STATE__STATE_BLOCKED_SEM;
constexpr auto kOut = THREADMON__SWITCH_KIND__SWITCH_OUT;

// Ticks every 10 ms over (0, ms] with these call sites, cumulative; the
// threads `busy` ran 40% of the time (kernel samples).
void ticks(StreamBuilder &b, int ms, const std::vector<Site> &sitesPerTick = {},
           const std::vector<uint32_t> &busy = {}) {
  for (int t = 10; t <= ms; t += 10) {
    std::vector<Lwp> lwps;
    for (uint32_t tid : busy) lwps.push_back(Lwp{tid, uint64_t(t) * kMs * 4 / 10, 0, uint64_t(t) * kMs * 4 / 10, 0});
    std::vector<Site> sites;
    for (Site s : sitesPerTick) {
      s.contentions *= uint64_t(t / 10);
      s.waitNs *= uint64_t(t / 10);
      sites.push_back(s);
    }
    uint64_t all = uint64_t(t) * kMs;
    b.tick(at(t), lwps, {Cpu{0, all / 2, 0, 0, all / 2, 0, 0, 0, 0}, Cpu{1, all / 2, 0, 0, all / 2, 0, 0, 0, 0}},
           {}, 0, sites);
  }
}

std::vector<Finding> findingsOf(const SessionModel &m) {
  return m.findings(m.resolve(Window::wholeRun()));
}

std::vector<Finding> findAll(const std::vector<Finding> &fs, FindingKind k) {
  std::vector<Finding> out;
  for (const Finding &f : fs)
    if (f.kind == k) out.push_back(f);
  return out;
}

// Threads 11..13 take turns: each 10 ms period, thread i works `workMs` then
// blocks in `state` on object objectOf(i) until the next thread wakes it.
template <typename ObjectOf>
void turns(StreamBuilder &b, Threadmon__ThreadState state, int workMs, ObjectOf objectOf,
           uint32_t releaser = 0) {
  for (uint32_t tid = 11; tid <= 13; tid++)
    for (int p = 0; p < 1000; p += 10) {
      uint32_t next = tid == 13 ? 11 : tid + 1;
      b.transition(tid, at(p + workMs), state, objectOf(tid));
      b.transition(tid, at(p + 10), kRun, 0, 0, releaser ? releaser : next);
    }
}

}  // namespace

class TestModelRuntimes : public QObject {
  Q_OBJECT

 private slots:
  void stacksAreToldApartByTheirFunctions() {
    struct Case {
      QStringList frames;
      StackWait want;
    };
    const Case cases[] = {
        // Go: an idle M parked by the scheduler; the runtime's own mutex.
        {{"app!runtime.futex.abi0+0x23", "app!runtime.futexsleep+0x30", "libthreadmon.so!tm_wait_end+0x1f",
          "app!runtime.notesleep+0x87", "app!runtime.stopm+0xc5"},
         StackWait::RuntimePark},
        {{"app!runtime.futex.abi0+0x23", "app!runtime.futexsleep+0x30", "app!runtime.lock2+0x80"},
         StackWait::Lock},
        {{"app!runtime.futex.abi0+0x23", "app!runtime.futexsleep+0x30"}, StackWait::RuntimePark},
        // Rust std (v0 mangling): Mutex slow path, Condvar wait, Condvar
        // re-taking its mutex (the innermost says it).
        {{"libc.so.6!syscall+0x19",
          "rs!_RNvMNtNtNtNtCs1_3std3sys4sync5mutex5futexNtB2_5Mutex14lock_contended+0xb6"},
         StackWait::Lock},
        {{"libc.so.6!syscall+0x19",
          "rs!_RNvMNtNtNtNtCs1_3std3sys4sync7condvar5futexNtB2_7Condvar21wait_optional_timeout+0x10b"},
         StackWait::EventWait},
        {{"libc.so.6!syscall+0x19", "rs!std::sys::sync::mutex::futex::Mutex::lock_contended+0x1",
          "rs!std::sys::sync::condvar::futex::Condvar::wait+0x2"},
         StackWait::Lock},
        // parking_lot: a lock that parks is a lock.
        {{"libc.so.6!syscall+0x19", "rs!parking_lot_core::thread_parker::imp::ThreadParker::futex_wait+0x1",
          "rs!parking_lot_core::parking_lot::park+0x2", "rs!parking_lot::raw_mutex::RawMutex::lock_slow+0x3"},
         StackWait::Lock},
        // libstdc++ C++20: barrier, semaphore via atomic waits.
        {{"libc.so.6!syscall+0x19", "cpp!_ZNSt8__detail15__platform_waitIiEEvPKT_i+0x1a"}, StackWait::EventWait},
        {{"cpp!std::__atomic_semaphore::_M_acquire()+0x10"}, StackWait::EventWait},
        // glibc's internal lock behind rand().
        {{"libc.so.6!__lll_lock_wait_private+0x2a", "libc.so.6!random+0x5c", "app!worker+0x10"}, StackWait::Lock},
        // HotSpot.
        {{"libjvm.so!_ZN2os13PlatformEvent4parkEv+0x6b", "libjvm.so!_ZN13ObjectMonitor6EnterIEP10JavaThread+0x1",
          "libjvm.so!_ZN13ObjectMonitor5enterEP10JavaThread+0x2"},
         StackWait::JavaMonitor},
        {{"libjvm.so!ObjectMonitor::wait(long, bool, JavaThread*)+0x1"}, StackWait::JavaWait},
        {{"libjvm.so!_ZN6Parker4parkEbl+0x10", "libjvm.so!Unsafe_Park+0x5", "[anon]"}, StackWait::JavaPark},
        {{"libc.so.6!syscall+0x19", "libjvm.so!_ZN16LinuxWaitBarrier4waitEi+0x1"}, StackWait::RuntimePark},
        // CPython.
        {{"libpython3.11.so.1.0!take_gil+0xbf", "libpython3.11.so.1.0!PyEval_RestoreThread+0x1"},
         StackWait::PythonGil},
        {{"python3.11!PyThread_acquire_lock_timed+0x16f", "python3.11+0x1234"}, StackWait::PythonLock},
        // Nothing said.
        {{"app+0x1234", "libc.so.6!syscall+0x19", "app!main+0x10"}, StackWait::Unknown},
        {{}, StackWait::Unknown},
    };
    for (const Case &c : cases)
      QVERIFY2(classifyStack(c.frames) == c.want,
               qPrintable(c.frames.join(" <- ") + " -> " + stackWaitKey(classifyStack(c.frames))));
    QVERIFY(isEventLikeWait(StackWait::RuntimePark) && isEventLikeWait(StackWait::EventWait));
    QVERIFY(!isEventLikeWait(StackWait::Lock) && !isEventLikeWait(StackWait::Unknown));
  }

  void jvmThreadsAreKnownByNameAndStarter() {
    ThreadInfo t;
    t.startRoutine = QStringLiteral("libjvm.so!_ZL19thread_native_entryP6Thread+0x0");
    for (const char *n : {"C2 CompilerThre", "C1 CompilerThre", "GC Thread#0", "G1 Main Marker",
                          "VM Thread", "Signal Dispatch", "Finalizer", "Reference Handl",
                          "Common-Cleaner", "Sweeper thread", "Service Thread", "ZWorker#1"}) {
      t.name = QString::fromLatin1(n);
      QVERIFY2(runtimeHousekeeping(t) == QLatin1String("jvm"), n);
    }
    for (const char *n : {"sync-worker-0", "main", "Thread-3", "java", "Zebra"}) {
      t.name = QString::fromLatin1(n);
      QVERIFY2(runtimeHousekeeping(t).isEmpty(), n);
    }
    // The same name, started by a C program: its own thread.
    t.name = QStringLiteral("Finalizer");
    t.startRoutine = QStringLiteral("app!finalizer_main+0x0");
    QVERIFY(runtimeHousekeeping(t).isEmpty());
  }

  void pythonGilIsKnownByItsSymbol() {
    SyncObjectInfo o;
    o.kind = THREADMON__SYNC_KIND__KIND_COND;
    o.module = QStringLiteral("/usr/bin/python3.11");
    o.symbol = QStringLiteral("_PyRuntime");  // as the model keeps it: name and offset apart
    o.symbolOffset = 0x188;
    QVERIFY(isPythonGilObject(o));
    o.module = QStringLiteral("/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0");
    QVERIFY(isPythonGilObject(o));
    o.kind = THREADMON__SYNC_KIND__KIND_SEM;
    QVERIFY(!isPythonGilObject(o));
    o.kind = THREADMON__SYNC_KIND__KIND_COND;
    o.module = QStringLiteral("/opt/bin/app");
    QVERIFY(!isPythonGilObject(o));
  }

  // Three CPython threads take turns at the GIL (a cond in _PyRuntime of a
  // stripped python): each waits 7 ms of every 10.
  void gilContentionNamesTheGil() {
    StreamBuilder b;
    b.setExe("/usr/bin/python3.11");
    b.hello(false);
    b.syncObject(1, THREADMON__SYNC_KIND__KIND_COND, 0xa5b8c8, "/usr/bin/python3.11",
                 "_PyRuntime+0x188", nullptr);
    for (uint32_t tid = 11; tid <= 13; tid++) b.threadStart(tid, at(0), "python3.11", "python3.11+0x2543a0");
    turns(b, kCond, 3, [](uint32_t) { return 1u; });
    ticks(b, 1000);
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    std::vector<Finding> gil = findAll(findingsOf(m), FindingKind::GilContention);
    QCOMPARE(gil.size(), size_t(1));
    QCOMPARE(gil[0].severity, Severity::High);  // 70% >= 2 x 20%
    QCOMPARE(gil[0].threads, (std::vector<uint32_t>{11, 12, 13}));
    QVERIFY(qAbs(gil[0].evidence["share"].toDouble() - 0.7) < 0.01);
    QVERIFY2(gil[0].message.contains("GIL") && gil[0].message.contains("processes"),
             qPrintable(gil[0].message));
    QVERIFY(findAll(findingsOf(m), FindingKind::SerialisingObject).empty());
  }

  // threading.Lock is a semaphore taken in PyThread_acquire_lock_timed. Used
  // as a lock (released by the threads that wait on it) it serialises them;
  // a Condition's waiter lock, released by a notifier that never waits on
  // it, is waiting for work.
  void pythonLockIsALockOnlyWhenItsWaitersReleaseIt() {
    for (bool asLock : {true, false}) {
      StreamBuilder b;
      b.setExe("/usr/bin/python3.11");
      b.hello(false);
      b.syncObject(2, THREADMON__SYNC_KIND__KIND_SEM, 0x5563485b3770, "[heap]", "", nullptr);
      b.stack(5, {"python3.11!PyThread_acquire_lock_timed+0x16f", "python3.11+0x1234"});
      for (uint32_t tid = 11; tid <= 14; tid++) b.threadStart(tid, at(0), "python3.11", "python3.11+0x2543a0");
      turns(b, kSem, 3, [](uint32_t) { return 2u; }, asLock ? 0 : 14);
      ticks(b, 1000, {Site{2, 5, 3, 21 * kMs}});
      b.goodbye(at(1000), 0);
      SessionModel m;
      b.applyTo(&m);
      std::vector<Finding> s = findAll(findingsOf(m), FindingKind::SerialisingObject);
      QCOMPARE(s.size(), size_t(asLock ? 1 : 0));
      if (asLock) QVERIFY2(s[0].message.contains("PyThread_acquire_lock_timed"), qPrintable(s[0].message));
    }
  }

  // The JVM parks every thread on its own cond: sync-worker-N block
  // entering a monitor, lock-worker-N park in a ReentrantLock, each 6 ms of
  // every 10. The compile queue's waiter (a housekeeping thread) raises
  // nothing.
  void javaLocksAreNamedAcrossPerThreadConds() {
    StreamBuilder b;
    b.setExe("/usr/lib/jvm/java-17-openjdk-amd64/bin/java");
    b.hello(false);
    const char *jvm = "libjvm.so!_ZL19thread_native_entryP6Thread";
    b.stack(1, {"libjvm.so!_ZN2os13PlatformEvent4parkEv+0x6b", "libjvm.so!_ZN13ObjectMonitor6EnterIEP10JavaThread+0x1"});
    b.stack(2, {"libjvm.so!_ZN6Parker4parkEbl+0x10", "libjvm.so!Unsafe_Park+0x5", "[anon]"});
    b.stack(3, {"libjvm.so!_ZN2os15PlatformMonitor4waitEl+0x60", "libjvm.so!_ZN12CompileQueue3getEv+0x65"});
    std::vector<Site> sites;
    for (uint32_t tid = 11; tid <= 13; tid++) {
      b.threadStart(tid, at(0), qPrintable(QStringLiteral("sync-worker-%1").arg(tid - 11)), jvm);
      b.syncObject(tid, THREADMON__SYNC_KIND__KIND_COND, 0x7f0000000000 + tid * 64, "[anon]", "", nullptr);
      sites.push_back(Site{tid, 1, 1, 6 * kMs});
    }
    turns(b, kCond, 4, [](uint32_t tid) { return tid; });
    // lock-worker-0 also enters a monitor once, for 0.5 ms of its 1 s (a
    // class another thread initialises): not one of the monitor's waiters.
    b.syncObject(121, THREADMON__SYNC_KIND__KIND_COND, 0x7f0000003000, "[anon]", "", nullptr);
    sites.push_back(Site{121, 1, 1, kMs / 2});
    for (uint32_t tid = 21; tid <= 23; tid++) {
      b.threadStart(tid, at(0), qPrintable(QStringLiteral("lock-worker-%1").arg(tid - 21)), jvm);
      b.syncObject(tid, THREADMON__SYNC_KIND__KIND_COND, 0x7f0000001000 + tid * 64, "[anon]", "", nullptr);
      sites.push_back(Site{tid, 2, 1, 6 * kMs});
      if (tid == 21) {
        b.transition(tid, at(1), kCond, 121);
        b.transition(tid, at(1) + kMs / 2, kRun, 0, 0, 11);
      }
      for (int p = 0; p < 1000; p += 10) {
        b.transition(tid, at(p + 4), kCond, tid);
        b.transition(tid, at(p + 10), kRun, 0, 0, tid == 23 ? 21 : tid + 1);
      }
    }
    // C2 CompilerThread: waits for methods to compile all run long.
    b.threadStart(31, at(0), "C2 CompilerThre", jvm);
    b.syncObject(31, THREADMON__SYNC_KIND__KIND_COND, 0x7f0000002000, "[anon]", "", nullptr);
    b.transition(31, at(1), kCond, 31);
    b.cpuSwitch(31, at(1), 0, kOut);
    sites.push_back(Site{31, 3, 1, 10 * kMs});
    ticks(b, 1000, sites, {11, 12, 13, 21, 22, 23});
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    std::vector<Finding> all = findingsOf(m);
    std::vector<Finding> java = findAll(all, FindingKind::JavaLock);
    QCOMPARE(java.size(), size_t(2));
    for (const Finding &f : java) {
      bool monitor = f.evidence["lock"].toString() == QLatin1String("synchronized");
      QCOMPARE(f.threads, monitor ? (std::vector<uint32_t>{11, 12, 13}) : (std::vector<uint32_t>{21, 22, 23}));
      QCOMPARE(f.severity, Severity::High);  // 60% >= 2 x 20%
      QVERIFY(qAbs(f.evidence["share"].toDouble() - 0.6) < 0.01);
      QVERIFY2(f.message.contains(monitor ? "synchronized" : "java.util.concurrent"), qPrintable(f.message));
    }
    for (const Finding &f : all)
      QVERIFY2(std::find(f.threads.begin(), f.threads.end(), 31u) == f.threads.end(),
               qPrintable(QString(findingKindKey(f.kind)) + ": " + f.message));
  }

  // The JIT's compile queue: two compiler threads wait on a cond that Java
  // threads broadcast when they queue methods, mostly the same one. As
  // program threads, that shape is a barrier whose last arrival is always
  // late (it raised a HIGH barrier_imbalance on a JVM); as the JVM's own
  // threads it is nothing.
  void compileQueueIsNoBarrier() {
    for (bool jvmNames : {false, true}) {
      StreamBuilder b;
      b.hello(false);
      const char *jvm = "libjvm.so!_ZL19thread_native_entryP6Thread";
      b.syncObject(5, THREADMON__SYNC_KIND__KIND_COND, 0x5000, "[anon]", "", nullptr);
      b.threadStart(61, at(0), jvmNames ? "C1 CompilerThre" : "compiler-1", jvm);
      b.threadStart(62, at(0), jvmNames ? "C2 CompilerThre" : "compiler-2", jvm);
      b.threadStart(71, at(0), "worker-1", jvm);
      b.threadStart(72, at(0), "worker-2", jvm);
      for (int r = 0; r < 10; r++) {
        const int end = 100 * (r + 1);
        const uint32_t releaser = r % 5 == 4 ? 72 : 71;
        for (uint32_t tid : {61u, 62u}) {
          b.transition(tid, at(end - 80), kCond, 5);
          b.transition(tid, at(end), kRun, 0, 0, releaser);
        }
      }
      ticks(b, 1000, {}, {61, 62, 71, 72});
      b.goodbye(at(1000), 0);
      SessionModel m;
      b.applyTo(&m);
      QCOMPARE(findAll(findingsOf(m), FindingKind::BarrierImbalance).size(), size_t(jvmNames ? 0 : 1));
      QCOMPARE(m.housekeepingThread(m.indexOfTid(61)), jvmNames);
      QCOMPARE(m.housekeepingObject(m.indexOfSyncObject(5), m.resolve(Window::wholeRun())), jvmNames);
    }
  }

  // A pool's workers parked for work (LinkedBlockingQueue.take), each woken
  // by the submitting thread, which parks in Future.get() until a worker
  // wakes it: a star of wake-ups, no cycle among peers, no lock. Workers
  // sometimes meet on the queue's lock (one worker wakes another once in a
  // run: on a 2-core machine half the runs of an executor had one): that
  // closes a cycle submitter-worker-worker, but it carries 1% of their
  // waits and is still no lock.
  void idlePoolThreadsParkedForWorkAreNoLock() {
    for (bool meet : {false, true}) idlePool(meet);
  }

 private:
  void idlePool(bool meet) {
    StreamBuilder b;
    b.setExe("/usr/lib/jvm/java-17-openjdk-amd64/bin/java");
    b.hello(false);
    const char *jvm = "libjvm.so!_ZL19thread_native_entryP6Thread";
    b.stack(2, {"libjvm.so!_ZN6Parker4parkEbl+0x10", "libjvm.so!Unsafe_Park+0x5", "[anon]"});
    b.threadStart(10, at(0), "submitter", jvm);
    std::vector<Site> sites;
    for (uint32_t tid = 21; tid <= 23; tid++) {
      b.threadStart(tid, at(0), qPrintable(QStringLiteral("pool-1-thread-%1").arg(tid - 20)), jvm);
      b.syncObject(tid, THREADMON__SYNC_KIND__KIND_COND, 0x7f0000001000 + tid * 64, "[anon]", "", nullptr);
      sites.push_back(Site{tid, 2, 1, 9 * kMs});
      for (int p = 0; p < 1000; p += 10) {
        b.transition(tid, at(p + 1), kCond, tid);
        b.transition(tid, at(p + 10), kRun, 0, 0, meet && tid == 22 && p == 500 ? 21 : 10);
      }
    }
    b.syncObject(10, THREADMON__SYNC_KIND__KIND_COND, 0x7f0000000f00, "[anon]", "", nullptr);
    sites.push_back(Site{10, 2, 1, 8 * kMs});
    for (int p = 0; p < 1000; p += 10) {
      b.transition(10, at(p + 2), kCond, 10);
      b.transition(10, at(p + 10), kRun, 0, 0, 21 + uint32_t(p / 10) % 3);
    }
    ticks(b, 1000, sites, {10, 21, 22, 23});
    b.goodbye(at(1000), 0);
    SessionModel m;
    b.applyTo(&m);
    QVERIFY2(findAll(findingsOf(m), FindingKind::JavaLock).empty(), meet ? "workers met once" : "star");
  }
};

QTEST_GUILESS_MAIN(TestModelRuntimes)
#include "test_model_runtimes.moc"
