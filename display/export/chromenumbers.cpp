#include "chromenumbers.h"

#include <charconv>

namespace tmon::chromenum {

char *putDecimal(char *p, uint64_t v) {
  return std::to_chars(p, p + 24, v).ptr;
}

char *putLongTime(char *p, int64_t ns) {
  uint64_t u = uint64_t(ns);
  if (ns < 0) *p++ = '-', u = 0 - u;
  const uint64_t us = u / 1000;
  return putDecimals(putDecimal(p, us), uint32_t(u - 1000 * us));
}

char *putOtherTime(char *p, int64_t ns) {
  return uint64_t(ns) < 10000000 ? putShortTime(p, uint32_t(ns)) : putLongTime(p, ns);
}

}  // namespace tmon::chromenum
