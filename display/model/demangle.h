// Readable names for mangled symbols: C++ (Itanium, by the C++ runtime's
// abi::__cxa_demangle), Rust legacy (Itanium-like, "::h<hash>" dropped) and
// Rust v0 (rustdemangle.h). Runs in the reader on names from a capture, so
// hostile input: anything not understood, too long or too deep comes back
// as it was.
#ifndef THREADMON_DEMANGLE_H
#define THREADMON_DEMANGLE_H

#include <QString>

namespace tmon {

// The readable form of a symbol, or the symbol itself.
QString demangle(const QString &symbol);

}  // namespace tmon

#endif
