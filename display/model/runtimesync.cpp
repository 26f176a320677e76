#include "runtimesync.h"

#include "symbolname.h"
#include "threadmon.pb-c.h"

namespace tmon {

namespace {

struct Pattern {
  const char *needle;  // an identifier as it appears mangled and demangled
  int kind;
  const char *what;
};

// Most specific first, whichever frame it is in: every C++20 wait ends in
// __platform_wait, the frames out say which type waited (when the compiler
// kept them: at -O2 an atomic::wait is inlined into its caller).
const Pattern kPatterns[] = {
    {"__atomic_semaphore", THREADMON__SYNC_KIND__KIND_SEM, "C++ std::counting_semaphore"},
    {"counting_semaphore", THREADMON__SYNC_KIND__KIND_SEM, "C++ std::counting_semaphore"},
    {"__tree_barrier", THREADMON__SYNC_KIND__KIND_BARRIER, "C++ std::barrier"},
    {"latch", THREADMON__SYNC_KIND__KIND_BARRIER, "C++ std::latch"},
    {"__atomic_base", THREADMON__SYNC_KIND__KIND_COND, "C++ std::atomic::wait"},
    {"atomic_flag", THREADMON__SYNC_KIND__KIND_COND, "C++ std::atomic_flag::wait"},
    {"futex_mutex", THREADMON__SYNC_KIND__KIND_MUTEX, "Rust std::sync::Mutex"},
    {"lock_contended", THREADMON__SYNC_KIND__KIND_MUTEX, "Rust std::sync::Mutex"},
    {"futex_rwlock", THREADMON__SYNC_KIND__KIND_RWLOCK, "Rust std::sync::RwLock"},
    {"read_contended", THREADMON__SYNC_KIND__KIND_RWLOCK, "Rust std::sync::RwLock"},
    {"write_contended", THREADMON__SYNC_KIND__KIND_RWLOCK, "Rust std::sync::RwLock"},
    {"condvar", THREADMON__SYNC_KIND__KIND_COND, "Rust std::sync::Condvar"},  // sys::sync::condvar, futex_condvar
    {"Condvar", THREADMON__SYNC_KIND__KIND_COND, "Rust std::sync::Condvar"},
    {"__platform_wait", THREADMON__SYNC_KIND__KIND_COND, "C++ std::atomic::wait"},
};

// Only frames of a runtime's own waiting code count: a program function
// that happens to be called "latch_reset" must not turn a libc lock into a
// latch. C++: libstdc++'s templates (std:: / _ZNSt / _ZSt); Rust: std's
// sys module (std::sys / _ZN3std3sys / _RNv...3std).
// A demangled function's qualified name, without the return type a
// template's demangling starts with ("void std::__atomic_wait_address<...>").
QString qualifiedName(const QString &fn) {
  qsizetype cut = fn.size();
  for (QChar c : {QChar('<'), QChar('(')}) {
    qsizetype at = fn.indexOf(c);
    if (at >= 0 && at < cut) cut = at;
  }
  qsizetype space = cut > 0 ? fn.lastIndexOf(' ', cut - 1) : -1;
  return space >= 0 ? fn.mid(space + 1) : fn;
}

bool runtimeFrame(const QString &function) {
  // Rust's v0 demangling writes an impl's method as "<std::...::Mutex>::lock".
  QString fn = function.startsWith('<') ? function.mid(1) : function;
  fn = qualifiedName(fn);
  return fn.startsWith(QLatin1String("_ZNSt")) || fn.startsWith(QLatin1String("_ZSt")) ||
         fn.startsWith(QLatin1String("_ZNKSt")) || fn.startsWith(QLatin1String("std::")) ||
         fn.startsWith(QLatin1String("_ZN3std")) || fn.startsWith(QLatin1String("_ZN4core")) ||
         fn.startsWith(QLatin1String("core::")) ||
         (fn.startsWith(QLatin1String("_R")) &&
          (fn.contains(QLatin1String("3std")) || fn.contains(QLatin1String("4core"))));
}

// The futex call sits a few frames in (syscall, __platform_wait, the wait
// loop); the type or library that waits is within the next few.
constexpr int kStackDepth = 8;

// OpenMP (GCC's libgomp) makes its barriers and locks with the futex
// system call itself, and Debian's libgomp is stripped: only its exported
// entry points have names. A wait inside it is at a lock when an entry
// point that takes one is on the stack (critical, atomic, omp_set_lock);
// any other is at a barrier: the end of a parallel region or a worksharing
// loop, an explicit barrier, or a team's threads waiting for the next
// region. Read as a lock hidden in the library, a parallel loop's uneven
// split said "the library takes it for shared state" (an internal_lock).
RuntimeSync openmpSyncOf(const QStringList &frames) {
  bool inLibgomp = false;
  for (int k = 0; k < frames.size() && k < kStackDepth; k++) {
    const FrameParts f = splitFrame(frames[k]);
    if (!f.module.startsWith(QLatin1String("libgomp.so"))) continue;
    inLibgomp = true;
    for (const char *lock : {"GOMP_critical", "GOMP_atomic", "omp_set_lock", "omp_set_nest_lock"})
      if (f.function.startsWith(QLatin1String(lock)))
        return RuntimeSync{THREADMON__SYNC_KIND__KIND_MUTEX,
                           QStringLiteral("OpenMP critical section or lock")};
  }
  if (!inLibgomp) return RuntimeSync{};
  return RuntimeSync{THREADMON__SYNC_KIND__KIND_BARRIER, QStringLiteral("OpenMP barrier")};
}

}  // namespace

bool isRuntimeFrame(const QString &frame) { return runtimeFrame(splitFrame(frame).function); }

RuntimeSync runtimeSyncOf(const QStringList &frames) {
  QStringList fns;
  for (int k = 0; k < frames.size() && k < kStackDepth; k++) {
    QString fn = splitFrame(frames[k]).function;
    if (!fn.isEmpty() && runtimeFrame(fn)) fns << fn;
  }
  // A thread parked by std (Thread::park) waits for an unpark, never for a
  // Mutex (a futex Mutex sleeps in futex_wait itself): a lock frame beyond
  // it is a stale return address. Parked inside a channel's receive or send
  // (std::sync::mpmc, mpsc), it waits for the channel: a queue, not a lock
  // (it read as "Rust std::sync::Mutex" 60-68% of a consumer's life).
  for (const QString &fn : fns) {
    if (!fn.contains(QLatin1String("park"))) continue;
    for (const QString &out : fns)
      if (out.contains(QLatin1String("mpmc")) || out.contains(QLatin1String("mpsc")))
        return RuntimeSync{THREADMON__SYNC_KIND__KIND_COND,
                           QStringLiteral("Rust std::sync::mpsc channel (parked in it)")};
    break;
  }
  for (const Pattern &p : kPatterns)
    for (const QString &fn : fns)
      if (fn.contains(QLatin1String(p.needle))) return RuntimeSync{p.kind, QString::fromLatin1(p.what)};
  return openmpSyncOf(frames);
}

}  // namespace tmon
