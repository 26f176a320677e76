// Readable names for mangled symbols: C++ (Itanium, by the C++ runtime's
// abi::__cxa_demangle), Rust legacy (Itanium-like, "::h<hash>" dropped) and
// Rust v0 (rustdemangle.h). Qt-free, for the display's model and for
// threadmon-attach-peek. Names come from captures and from other people's
// binaries, so hostile: anything not understood, too long or too deep is
// refused and the caller shows the name as it was.
#ifndef THREADMON_DEMANGLENAME_H
#define THREADMON_DEMANGLENAME_H

#include <string>

namespace tmon {

// True with *out set to the readable form of symbol.
bool demangleName(const std::string &symbol, std::string *out);

}  // namespace tmon

#endif
