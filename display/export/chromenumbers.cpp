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

}  // namespace tmon::chromenum
