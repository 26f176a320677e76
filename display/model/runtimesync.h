// Futex-based synchronisation that a language's runtime builds into the
// program itself: C++20 <semaphore>, <barrier>, <latch> and atomic::wait,
// Rust's std::sync Mutex, RwLock and Condvar. No pthread wrapper sees it;
// the probe finds it as a futex word (KIND_INTERNAL) and the waiting
// thread's stack says what it is. Unlike a lock hidden in a library, the
// program wrote it: it is shown as the kind it is.
#ifndef THREADMON_RUNTIMESYNC_H
#define THREADMON_RUNTIMESYNC_H

#include <QString>
#include <QStringList>

namespace tmon {

struct RuntimeSync {
  int kind = 0;  // threadmon.SyncKind it acts as; 0: not recognised (a library's lock)
  QString what;  // "C++ std::counting_semaphore", "Rust std::sync::Mutex", ...
};

// From a waiting thread's stack, innermost first, frames `module!function+0xoff`
// with mangled or demangled function names.
RuntimeSync runtimeSyncOf(const QStringList &frames);
// Whether a frame is the runtime's own code (libstdc++'s std::, Rust's std
// or core), which sits in the program's binary but is not where the program
// took the object.
bool isRuntimeFrame(const QString &frame);

}  // namespace tmon

#endif
