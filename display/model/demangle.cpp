#include "demangle.h"

#include <string>

#include "demanglename.h"

namespace tmon {

QString demangle(const QString &symbol) {
  std::string out;
  if (demangleName(symbol.toStdString(), &out)) return QString::fromStdString(out);
  return symbol;
}

}  // namespace tmon
