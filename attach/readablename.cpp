// C++ only for the shared demangler (demangle/): this runs in threadmon's
// own process (threadmon-attach-peek), never in the target.
#include "readablename.h"

#include <cstring>
#include <string>

#include "demanglename.h"

extern "C" void tm_readable_frame(char *frame, size_t n) {
  char *bang = std::strchr(frame, '!');
  if (!bang) return;
  const char *plus = std::strstr(bang, "+0x");
  const char *name = bang + 1;
  std::string readable;
  if (!tmon::demangleName(std::string(name, plus ? size_t(plus - name) : std::strlen(name)),
                          &readable))
    return;
  std::string whole = std::string(frame, size_t(name - frame)) + readable + (plus ? plus : "");
  if (whole.size() + 1 > n) return;
  std::memcpy(frame, whole.c_str(), whole.size() + 1);
}
