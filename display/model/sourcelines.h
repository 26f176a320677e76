// Source file and line of code in a probed program, looked up in the
// reader (the probe reads no debug information): elfutils' libdwfl over the
// module's file, or its separate debug file found by build-id or debuglink
// (/usr/lib/debug). A module whose file is not on this machine, or is
// another build than the one recorded (build-ids differ), gives nothing:
// frames then show what the capture has. One cache per process, per
// module; thread-safe.
#ifndef THREADMON_SOURCELINES_H
#define THREADMON_SOURCELINES_H

#include <QByteArray>
#include <QString>

#include <cstdint>

struct Threadmon__CodeLocation;
struct Threadmon__Frame;

namespace tmon {

// threadmon.CodeLocation, as read.
struct CodeLocation {
  QString modulePath;
  uint64_t address = 0;  // link-time address in the module
  QByteArray buildId;
};

// "file.c:12" (the file's base name), or "" when unknown. Library code
// (Rust std or a crate, libstdc++'s headers) inlined into the program's adds
// where: "futex.rs:35 in main.rs:41".
QString sourceLine(const CodeLocation &where);

// The struct member an object of C type typeName ("pthread_mutex_t") made
// by the call at where is, by the debug information: "table->lock" when the
// function holding the call sees exactly one member of that type through
// its pointer variables; "" when none or several, or when where's module
// was not looked up by sourceLine first.
QString sourceMember(const CodeLocation &where, const char *typeName);

// The member of a global variable an object at symbol+offset is, by the
// debug information of module (its path; its build-id when known):
// ".users.lock", "[3].lock"; "" when the variable is the object itself
// (typeName: the object's C type, null for a futex word), or unknown.
// file: the source file's base name of a local symbol whose name is not
// unique, else "".
QString sourceGlobalMember(const CodeLocation &module, const QString &symbol, uint64_t offset,
                           const char *typeName, const QString &file);

// A lookup in where's module was made: its debug information is read
// (waits for a lookup in progress there).
bool sourceLinesRead(const CodeLocation &where);

CodeLocation codeLocationOf(const Threadmon__CodeLocation &where);

// Looks up, on the calling thread, the lines of every code location the
// frame carries (a Stack's frames, a SyncObject's first contention), so
// that its fold finds each module's debug information read: the first
// lookup in a module reads it, 0.1 s for libc's (compressed, libc6-dbg).
// A live session's decoder thread calls it, keeping that off the GUI.
void preloadSourceLines(const Threadmon__Frame &frame);

}  // namespace tmon

#endif
