// Language runtimes seen from the outside: which threads are a runtime's
// own housekeeping (the JVM's JIT compilers, GC, VM Thread...), and what a
// call stack waits in when its function names say so (a Go M parked by its
// scheduler, a Rust Condvar, a C++20 barrier, a Java monitor, CPython's GIL).
// Recognised by names only, so mangled and demangled frames both match.
// docs/findings.md ("Runtimes") lists every name and why. QtCore only.
#ifndef THREADMON_RUNTIMES_H
#define THREADMON_RUNTIMES_H

#include <QString>
#include <QStringList>

#include "modeltypes.h"

namespace tmon {

// "jvm" when the thread is one of the JVM's own (JIT compiler, GC, VM
// Thread, Finalizer, ...): its name is one of them and it was started by
// libjvm.so; empty otherwise (the program's threads, a JVM's included).
QString runtimeHousekeeping(const ThreadInfo &t);

// What a blocked call stack waits in, by the innermost frame whose function
// name says it. Unknown: nothing recognised (most C programs).
enum class StackWait {
  Unknown,
  Lock,          // a lock's slow path (glibc lll_lock_wait, Rust lock_contended, Go runtime.lock2)
  RuntimePark,   // a runtime parking an idle worker (Go notesleep/stopm, JVM safepoint barrier)
  EventWait,     // waiting for an event: condvar, semaphore, barrier, latch, atomic wait, park
  JavaMonitor,   // entering a Java synchronized block (ObjectMonitor::enter)
  JavaPark,      // java.util.concurrent parking (Unsafe_Park / Parker::park)
  JavaWait,      // Object.wait() (ObjectMonitor::wait): waiting for notify, by design
  PythonGil,     // CPython waiting for the GIL (take_gil)
  PythonLock,    // a CPython lock (threading.Lock/RLock, PyThread_acquire_lock)
};
StackWait classifyStack(const QStringList &frames);
const char *stackWaitKey(StackWait w);
// A wait that is how a thread waits for work or a peer, not a lock.
inline bool isEventLikeWait(StackWait w) {
  return w == StackWait::RuntimePark || w == StackWait::EventWait || w == StackWait::JavaWait;
}

// CPython's GIL: its cond and mutexes live in _PyRuntime (3.11: the
// runtime's ceval.gil; 3.12+: the main interpreter, also inside it) of the
// python executable or libpython, exported even by stripped builds.
bool isPythonGilObject(const SyncObjectInfo &o);

}  // namespace tmon

#endif
