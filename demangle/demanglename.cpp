#include "demanglename.h"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

#include "rustdemangle.h"

namespace tmon {

namespace {

// Longer names are shown mangled. Real ones stay far below (a std::thread
// state of a lambda is about 150 bytes); the bound keeps hostile names from
// costing the C++ runtime's demangler much time or memory.
constexpr size_t kMaxMangled = 1024;
// A demangled name past this (substitutions can grow it a lot) is not one
// a person reads: shown mangled.
constexpr size_t kMaxDemangled = 4096;

bool isHashComponent(const char *p, size_t n) {
  if (n != 17 || p[0] != 'h') return false;
  for (size_t i = 1; i < n; i++)
    if (!std::isxdigit(static_cast<unsigned char>(p[i]))) return false;
  return true;
}

// Rust legacy escapes inside a component: "$LT$" -> '<', "$u20$" -> ' ',
// ".." -> "::", a leading "_$" -> "$". False on an escape it does not know.
bool unescapeRustComponent(const char *p, size_t n, std::string *out) {
  static const struct {
    const char *code, *text;
  } kCodes[] = {{"SP", "@"}, {"BP", "*"}, {"RF", "&"}, {"LT", "<"}, {"GT", ">"}, {"LP", "("},
                {"RP", ")"}, {"C", ","}};
  size_t i = 0;
  if (n >= 2 && p[0] == '_' && p[1] == '$') i = 1;
  while (i < n) {
    if (p[i] == '.') {
      if (i + 1 < n && p[i + 1] == '.') {
        *out += "::";
        i += 2;
      } else {
        *out += '.';
        i++;
      }
      continue;
    }
    if (p[i] != '$') {
      *out += p[i++];
      continue;
    }
    const char *end = static_cast<const char *>(std::memchr(p + i + 1, '$', n - i - 1));
    if (!end) return false;
    std::string code(p + i + 1, size_t(end - (p + i + 1)));
    bool known = false;
    for (const auto &c : kCodes)
      if (code == c.code) {
        *out += c.text;
        known = true;
      }
    if (!known && code.size() >= 2 && code.size() <= 7 && code[0] == 'u') {
      char *stop = nullptr;
      unsigned long cp = std::strtoul(code.c_str() + 1, &stop, 16);
      if (*stop || cp == 0 || cp > 0x7e) return false;  // printable ASCII only
      *out += char(cp);
      known = true;
    }
    if (!known) return false;
    i = size_t(end - p) + 1;
  }
  return true;
}

// "_ZN" {len name} "17h<16 hex>" "E" [".suffix"]: a Rust legacy symbol.
// False when it is not one (a C++ name then gets its own chance).
bool demangleRustLegacy(const std::string &s, std::string *out) {
  if (s.compare(0, 3, "_ZN") != 0) return false;
  size_t i = 3;
  std::string text;
  bool hash = false;
  while (i < s.size() && s[i] != 'E') {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    size_t len = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      len = len * 10 + size_t(s[i++] - '0');
      if (len > s.size()) return false;
    }
    if (len == 0 || len > s.size() - i) return false;
    const char *p = s.data() + i;
    i += len;
    hash = isHashComponent(p, len) && i < s.size() && s[i] == 'E';
    if (hash) break;
    if (!text.empty()) text += "::";
    std::string part;
    if (unescapeRustComponent(p, len, &part)) text += part;
    else text.append(p, len);
  }
  if (!hash || i >= s.size() || s[i] != 'E') return false;
  if (i + 1 < s.size() && s[i + 1] != '.') return false;  // only ".llvm.N" style suffixes
  *out = text;
  return true;
}

bool demangleCxx(const std::string &s, std::string *out) {
  if (s.compare(0, 2, "_Z") != 0) return false;
  int status = -1;
  size_t length = 0;
  char *text = abi::__cxa_demangle(s.c_str(), nullptr, &length, &status);
  if (!text) return false;
  bool ok = status == 0 && std::strlen(text) <= kMaxDemangled;
  if (ok) *out = text;
  std::free(text);
  return ok;
}

}  // namespace

bool demangleName(const std::string &symbol, std::string *out) {
  if (symbol.size() < 3 || symbol.size() > kMaxMangled) return false;
  if (symbol.find('\0') != std::string::npos) return false;
  return demangleRustLegacy(symbol, out) || demangleRustV0(symbol, kMaxDemangled, out) ||
         demangleCxx(symbol, out);
}

}  // namespace tmon
