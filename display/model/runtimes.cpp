#include "runtimes.h"

#include <QFileInfo>

#include "threadmon.pb-c.h"

namespace tmon {

namespace {

// The JVM's own threads, as the kernel keeps their names (15 bytes: "C2
// CompilerThread0" reads "C2 CompilerThre"). HotSpot 11-21: JIT compilers,
// the VM operation thread, every collector's workers (G1, Parallel, ZGC,
// Shenandoah), the reference and finaliser daemons, JFR's and the attach
// listener.
const char *const kJvmThreadPrefixes[] = {
    "VM Thread",       "VM Periodic",     "GC Thread#",      "G1 ",
    "Reference Handl", "Finalizer",       "Signal Dispatch", "Service Thread",
    "Monitor Deflati", "C1 CompilerThre", "C2 CompilerThre", "JVMCI",
    "Sweeper thread",  "Notification Th", "Common-Cleaner",  "Attach Listener",
    "Surrogate Locke", "Shenandoah",      "JFR ",            "StrDedup",
    "process reaper",  "GC Conc",         "Cleaner-",
};

// "module!function+0x10 (file.c:3)" -> "function"; "" without a symbol.
QString functionOf(const QString &frame) {
  int bang = frame.indexOf('!');
  if (bang < 0) return QString();
  QString f = frame.mid(bang + 1);
  int sp = f.indexOf(QLatin1String(" ("));
  if (sp >= 0) f.truncate(sp);
  int plus = f.lastIndexOf(QLatin1String("+0x"));
  if (plus >= 0) f.truncate(plus);
  return f;
}

bool has(const QString &f, const char *s) { return f.contains(QLatin1String(s)); }

// One frame's function, or Unknown when it says nothing specific. The
// innermost specific frame decides: a Rust Condvar re-taking its mutex shows
// lock_contended innermost, a Go M parked shows notesleep.
StackWait specificWait(const QString &f, const QString &module) {
  if (f.isEmpty()) return StackWait::Unknown;
  // CPython.
  if (has(f, "take_gil")) return StackWait::PythonGil;
  if (has(f, "PyThread_acquire_lock")) return StackWait::PythonLock;
  // HotSpot (mangled: _ZN13ObjectMonitor6EnterIEP10JavaThread; demangled:
  // ObjectMonitor::EnterI(JavaThread*)).
  if (has(f, "ObjectMonitor")) {
    if (has(f, "wait")) return StackWait::JavaWait;
    if (has(f, "Enter") || has(f, "enter")) return StackWait::JavaMonitor;
  }
  if (has(f, "Unsafe_Park") ||
      (module.startsWith(QLatin1String("libjvm")) && has(f, "Parker") && has(f, "park")))
    return StackWait::JavaPark;
  if (has(f, "LinuxWaitBarrier") || has(f, "SafepointSynchronize")) return StackWait::RuntimePark;
  // Go's runtime: runtime.lock2 is its mutex; the note and semaphore sleeps
  // are the scheduler parking an M that has no goroutine to run.
  if (f == QLatin1String("runtime.lock2") || f == QLatin1String("runtime.lockWithRank") ||
      f == QLatin1String("runtime.lock"))
    return StackWait::Lock;
  if (f.startsWith(QLatin1String("runtime.notesleep")) ||
      f.startsWith(QLatin1String("runtime.notetsleep")) || f == QLatin1String("runtime.semasleep") ||
      f == QLatin1String("runtime.mPark") || f == QLatin1String("runtime.stopm") ||
      f == QLatin1String("runtime.stoplockedm") || f == QLatin1String("runtime.templateThread"))
    return StackWait::RuntimePark;
  // Locks' slow paths: glibc's internal locks, Rust's std::sync (futex),
  // parking_lot's (lock_slow, lock_exclusive_slow, ...).
  if (has(f, "__lll_lock_wait") || has(f, "lock_contended") || has(f, "write_contended") ||
      has(f, "read_contended") || (has(f, "lock") && has(f, "_slow")))
    return StackWait::Lock;
  // Waiting for an event: condition variables, libstdc++'s atomic waits
  // (counting_semaphore, barrier, latch and atomic::wait all end there).
  if ((has(f, "Condvar") && has(f, "wait")) || has(f, "__platform_wait") ||
      has(f, "__atomic_wait") || has(f, "__waiter_pool") || has(f, "atomic_semaphore") ||
      has(f, "barrier") || has(f, "latch"))
    return StackWait::EventWait;
  return StackWait::Unknown;
}

// Primitives that locks and waits share (a futex wait, a thread parker):
// they decide only when no frame says more.
StackWait genericWait(const QString &f) {
  if (f == QLatin1String("runtime.futexsleep")) return StackWait::RuntimePark;
  if (has(f, "futex_wait") || has(f, "park")) return StackWait::EventWait;
  return StackWait::Unknown;
}

}  // namespace

QString runtimeHousekeeping(const ThreadInfo &t) {
  // Only threads the JVM itself started: a C program may name a thread
  // "Finalizer" too.
  QString module = QFileInfo(t.startRoutine.section('!', 0, 0).section('+', 0, 0)).fileName();
  if (!module.startsWith(QLatin1String("libjvm"))) return QString();
  for (const char *p : kJvmThreadPrefixes)
    if (t.name.startsWith(QLatin1String(p))) return QStringLiteral("jvm");
  // ZGC's threads: "ZDirector", "ZDriver", "ZWorker#0", ...
  if (t.name.size() > 1 && t.name[0] == 'Z' && t.name[1].isUpper()) return QStringLiteral("jvm");
  return QString();
}

StackWait classifyStack(const QStringList &frames) {
  StackWait generic = StackWait::Unknown;
  for (const QString &frame : frames) {
    QString f = functionOf(frame);
    StackWait w = specificWait(f, QFileInfo(frame.section('!', 0, 0)).fileName());
    if (w != StackWait::Unknown) return w;
    if (generic == StackWait::Unknown) generic = genericWait(f);
  }
  return generic;
}

const char *stackWaitKey(StackWait w) {
  switch (w) {
    case StackWait::Unknown: return "unknown";
    case StackWait::Lock: return "lock";
    case StackWait::RuntimePark: return "runtime_park";
    case StackWait::EventWait: return "event_wait";
    case StackWait::JavaMonitor: return "java_monitor";
    case StackWait::JavaPark: return "java_park";
    case StackWait::JavaWait: return "java_wait";
    case StackWait::PythonGil: return "python_gil";
    case StackWait::PythonLock: return "python_lock";
  }
  return "unknown";
}

bool isPythonGilObject(const SyncObjectInfo &o) {
  if (o.kind != THREADMON__SYNC_KIND__KIND_COND && o.kind != THREADMON__SYNC_KIND__KIND_MUTEX)
    return false;
  QString module = QFileInfo(o.module).fileName();
  bool python = module.startsWith(QLatin1String("python")) ||
                module.startsWith(QLatin1String("libpython"));
  return python && (o.symbolRaw == QLatin1String("_PyRuntime") ||
                    o.symbol == QLatin1String("_PyRuntime"));
}

}  // namespace tmon
