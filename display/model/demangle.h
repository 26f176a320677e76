// The readable form of a symbol from a capture, for the model and views
// (demangle/demanglename.h does the work).
#ifndef THREADMON_DEMANGLE_H
#define THREADMON_DEMANGLE_H

#include <QString>

namespace tmon {

// The readable form of a symbol, or the symbol itself.
QString demangle(const QString &symbol);

}  // namespace tmon

#endif
