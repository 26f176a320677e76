#include "rustdemangle.h"

#include <cstdint>
#include <cstdio>

namespace tmon {

namespace {

// Bounds for hostile input: nesting (backrefs count), and parse steps,
// which cap the time a symbol whose backrefs refer to backrefs can take.
constexpr int kMaxDepth = 100;
constexpr size_t kMaxSteps = 100000;

class V0Parser {
 public:
  V0Parser(const std::string &s, size_t maxOut) : s_(s), maxOut_(maxOut) {}

  bool symbol(std::string *out) {
    if (s_.compare(0, 2, "_R") != 0) return false;
    pos_ = 2;
    // An encoding version other than the implied 0 is not understood.
    if (pos_ < s_.size() && isDigit(s_[pos_])) return false;
    if (!path(true)) return false;
    if (pos_ < s_.size() && s_[pos_] != '.' && s_[pos_] != '$') {
      // The instantiating crate: not part of the readable name.
      ++skip_;
      bool ok = path(false);
      --skip_;
      if (!ok) return false;
    }
    if (pos_ < s_.size() && s_[pos_] != '.' && s_[pos_] != '$') return false;
    *out = std::move(out_);
    return true;
  }

 private:
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }
  static bool isLower(char c) { return c >= 'a' && c <= 'z'; }
  static bool isUpper(char c) { return c >= 'A' && c <= 'Z'; }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    pos_++;
    return true;
  }
  bool print(const std::string &t) {
    if (skip_) return true;
    if (out_.size() + t.size() > maxOut_) return false;
    out_ += t;
    return true;
  }
  // Entered by every production: bounds depth and total work.
  struct Enter {
    V0Parser &p;
    bool ok;
    explicit Enter(V0Parser &parser)
        : p(parser), ok(++p.depth_ <= kMaxDepth && ++p.steps_ <= kMaxSteps) {}
    ~Enter() { --p.depth_; }
  };

  // <base-62-number> = {0-9a-zA-Z} "_"; "_" is 0, else the digits' value + 1.
  bool base62(uint64_t *v) {
    if (eat('_')) {
      *v = 0;
      return true;
    }
    uint64_t x = 0;
    for (char c = peek(); c != '_'; c = peek()) {
      int d = isDigit(c) ? c - '0' : isLower(c) ? c - 'a' + 10 : isUpper(c) ? c - 'A' + 36 : -1;
      if (d < 0 || x > (UINT64_MAX - 62) / 62) return false;
      x = x * 62 + uint64_t(d);
      pos_++;
    }
    pos_++;
    if (x == UINT64_MAX) return false;
    *v = x + 1;
    return true;
  }
  // ["s" <base-62-number>]: 0 when absent, else the number + 1.
  bool disambiguator(uint64_t *v) {
    *v = 0;
    if (!eat('s')) return true;
    if (!base62(v) || *v == UINT64_MAX) return false;
    ++*v;
    return true;
  }
  bool decimal(size_t *n) {
    if (!isDigit(peek())) return false;
    if (eat('0')) {
      *n = 0;
      return true;
    }
    size_t x = 0;
    while (isDigit(peek())) {
      x = x * 10 + size_t(s_[pos_++] - '0');
      if (x > s_.size()) return false;
    }
    *n = x;
    return true;
  }

  struct Ident {
    uint64_t dis = 0;
    std::string text;  // UTF-8
  };
  // ["u"] <decimal> ["_"] <bytes>: "u" marks punycode.
  bool undisambiguatedIdent(std::string *text) {
    bool puny = eat('u');
    size_t len = 0;
    if (!decimal(&len)) return false;
    eat('_');
    if (len > s_.size() - pos_) return false;
    std::string bytes = s_.substr(pos_, len);
    pos_ += len;
    for (char c : bytes)
      if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) return false;
    if (!puny) {
      *text = std::move(bytes);
      return true;
    }
    return punycode(bytes, text);
  }
  bool identifier(Ident *id) { return disambiguator(&id->dis) && undisambiguatedIdent(&id->text); }

  // RFC 3492 with '_' as the delimiter, as v0 uses it.
  static bool punycode(const std::string &in, std::string *out) {
    const size_t delim = in.rfind('_');
    std::u32string cps;
    size_t p = 0;
    if (delim != std::string::npos) {
      for (size_t k = 0; k < delim; k++) cps += char32_t(static_cast<unsigned char>(in[k]));
      p = delim + 1;
    }
    uint64_t n = 128, i = 0, bias = 72;
    while (p < in.size()) {
      const uint64_t oldi = i;
      uint64_t w = 1;
      for (uint64_t k = 36;; k += 36) {
        if (p >= in.size()) return false;
        char c = in[p++];
        uint64_t d = isLower(c) ? uint64_t(c - 'a') : isDigit(c) ? uint64_t(c - '0' + 26) : 99;
        if (d > 35 || d * w > (uint64_t(1) << 40)) return false;
        i += d * w;
        uint64_t t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
        if (d < t) break;
        w *= 36 - t;
        if (w > (uint64_t(1) << 40)) return false;
      }
      const uint64_t points = cps.size() + 1;
      uint64_t delta = oldi == 0 ? (i - oldi) / 700 : (i - oldi) / 2;
      delta += delta / points;
      uint64_t k = 0;
      while (delta > 35 * 26 / 2) {
        delta /= 35;
        k += 36;
      }
      bias = k + 36 * delta / (delta + 38);
      n += i / points;
      i %= points;
      if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff) || cps.size() >= in.size()) return false;
      cps.insert(cps.begin() + std::ptrdiff_t(i), char32_t(n));
      i++;
    }
    for (char32_t c : cps) appendUtf8(c, out);
    return true;
  }
  static void appendUtf8(char32_t c, std::string *out) {
    if (c < 0x80) {
      *out += char(c);
    } else if (c < 0x800) {
      *out += char(0xc0 | (c >> 6));
      *out += char(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      *out += char(0xe0 | (c >> 12));
      *out += char(0x80 | ((c >> 6) & 0x3f));
      *out += char(0x80 | (c & 0x3f));
    } else {
      *out += char(0xf0 | (c >> 18));
      *out += char(0x80 | ((c >> 12) & 0x3f));
      *out += char(0x80 | ((c >> 6) & 0x3f));
      *out += char(0x80 | (c & 0x3f));
    }
  }

  // "B" <base-62-number>: parse again what starts that many bytes after
  // "_R", which must lie before this backref (no loops).
  template <typename F>
  bool backref(F &&again) {
    const size_t at = pos_ - 1;
    uint64_t v = 0;
    if (!base62(&v) || v >= at - 2) return false;
    const size_t back = pos_;
    pos_ = 2 + size_t(v);
    bool ok = again();
    pos_ = back;
    return ok;
  }

  bool path(bool inValue) {
    Enter e(*this);
    if (!e.ok) return false;
    const char tag = peek();
    pos_++;
    switch (tag) {
      case 'C': {
        Ident id;
        return identifier(&id) && print(id.text);
      }
      case 'N': {
        const char ns = peek();
        if (!isLower(ns) && !isUpper(ns)) return false;
        pos_++;
        if (!path(inValue)) return false;
        Ident id;
        if (!identifier(&id)) return false;
        if (isLower(ns)) return print("::") && print(id.text);
        std::string kind = ns == 'C' ? "closure" : ns == 'S' ? "shim" : std::string(1, ns);
        return print("::{" + kind + (id.text.empty() ? "" : ":" + id.text) + "#" +
                     std::to_string(id.dis) + "}");
      }
      case 'M':
      case 'X': {
        uint64_t dis = 0;
        ++skip_;  // the impl's own path is not shown
        bool ok = disambiguator(&dis) && path(false);
        --skip_;
        if (!ok || !print("<") || !type()) return false;
        if (tag == 'X' && !(print(" as ") && path(false))) return false;
        return print(">");
      }
      case 'Y':
        return print("<") && type() && print(" as ") && path(false) && print(">");
      case 'I': {
        if (!path(inValue) || !print(inValue ? "::<" : "<")) return false;
        for (bool first = true; !eat('E'); first = false)
          if ((!first && !print(", ")) || !genericArg()) return false;
        return print(">");
      }
      case 'B':
        return backref([&] { return path(inValue); });
      default:
        return false;
    }
  }

  bool genericArg() {
    if (peek() == 'L') {
      pos_++;
      return lifetime(false);
    }
    if (eat('K')) return constant();
    return type();
  }

  // 'a, 'b, ... for lifetimes bound by the binders around; '_ when erased.
  bool lifetime(bool trailingSpace) {
    uint64_t i = 0;
    if (!base62(&i)) return false;
    std::string name;
    if (i == 0) {
      name = "'_";
    } else {
      if (i > bound_) return false;
      uint64_t depth = bound_ - i;
      name = depth < 26 ? std::string("'") + char('a' + depth) : "'_" + std::to_string(depth);
    }
    return print(name + (trailingSpace ? " " : ""));
  }
  // "G" <base-62-number>: the next lifetimes bound; printed "for<'a, 'b> ".
  bool binder(uint64_t *count) {
    *count = 0;
    if (!eat('G')) return true;
    if (!base62(count)) return false;
    ++*count;
    if (*count > 64) return false;
    std::string text = "for<";
    for (uint64_t k = 0; k < *count; k++) {
      uint64_t depth = bound_ + k;
      text += (k ? ", '" : "'") +
              (depth < 26 ? std::string(1, char('a' + depth)) : "_" + std::to_string(depth));
    }
    bound_ += *count;
    return print(text + "> ");
  }

  static const char *basicType(char c) {
    switch (c) {
      case 'a': return "i8";
      case 'b': return "bool";
      case 'c': return "char";
      case 'd': return "f64";
      case 'e': return "str";
      case 'f': return "f32";
      case 'h': return "u8";
      case 'i': return "isize";
      case 'j': return "usize";
      case 'l': return "i32";
      case 'm': return "u32";
      case 'n': return "i128";
      case 'o': return "u128";
      case 's': return "i16";
      case 't': return "u16";
      case 'u': return "()";
      case 'v': return "...";
      case 'x': return "i64";
      case 'y': return "u64";
      case 'z': return "!";
      case 'p': return "_";
      default: return nullptr;
    }
  }

  bool type() {
    Enter e(*this);
    if (!e.ok) return false;
    const char tag = peek();
    if (const char *basic = basicType(tag)) {
      pos_++;
      return print(basic);
    }
    switch (tag) {
      case 'A':
        pos_++;
        return print("[") && type() && print("; ") && constant() && print("]");
      case 'S':
        pos_++;
        return print("[") && type() && print("]");
      case 'T': {
        pos_++;
        size_t n = 0;
        if (!print("(")) return false;
        for (; !eat('E'); n++)
          if ((n && !print(", ")) || !type()) return false;
        return print(n == 1 ? ",)" : ")");
      }
      case 'R':
      case 'Q':
        pos_++;
        if (!print("&") || (eat('L') && !lifetime(true))) return false;
        return (tag == 'R' || print("mut ")) && type();
      case 'P':
        pos_++;
        return print("*const ") && type();
      case 'O':
        pos_++;
        return print("*mut ") && type();
      case 'F':
        pos_++;
        return fnSig();
      case 'D':
        pos_++;
        return dynBounds();
      case 'B':
        pos_++;
        return backref([&] { return type(); });
      default:
        return path(false);
    }
  }

  bool fnSig() {
    uint64_t bound = 0;
    if (!binder(&bound)) return false;
    if (eat('U') && !print("unsafe ")) return false;
    if (eat('K')) {
      std::string abi;
      if (eat('C')) {
        abi = "C";
      } else {
        if (!undisambiguatedIdent(&abi)) return false;
        for (char &c : abi)
          if (c == '_') c = '-';
      }
      if (!print("extern \"" + abi + "\" ")) return false;
    }
    if (!print("fn(")) return false;
    for (bool first = true; !eat('E'); first = false)
      if ((!first && !print(", ")) || !type()) return false;
    if (!print(")")) return false;
    bool ok = eat('u') || (print(" -> ") && type());
    bound_ -= bound;
    return ok;
  }

  bool dynBounds() {
    uint64_t bound = 0;
    if (!print("dyn ") || !binder(&bound)) return false;
    for (bool first = true; !eat('E'); first = false) {
      if (!first && !print(" + ")) return false;
      const bool generic = peek() == 'I';
      if (!path(false)) return false;
      // Associated types go inside the trait's generics: Fn<(A,), Output = B>.
      for (bool firstBinding = true; eat('p'); firstBinding = false) {
        if (firstBinding && !skip_) {
          if (generic && !out_.empty() && out_.back() == '>') {
            out_.pop_back();
            if (!print(", ")) return false;
          } else if (!print("<")) {
            return false;
          }
        } else if (!print(", ")) {
          return false;
        }
        std::string name;
        if (!undisambiguatedIdent(&name) || !print(name + " = ") || !type()) return false;
        if (peek() != 'p' && !print(">")) return false;
      }
    }
    bound_ -= bound;
    if (!eat('L')) return false;
    const size_t before = out_.size();
    if (!print(" + ") || !lifetime(false)) return false;
    if (!skip_ && out_.compare(before, std::string::npos, " + '_") == 0) out_.resize(before);
    return true;
  }

  bool constant() {
    Enter e(*this);
    if (!e.ok) return false;
    if (eat('p')) return print("_");
    if (eat('B')) return backref([&] { return constant(); });
    const char t = peek();
    pos_++;
    const bool isSigned = t == 'a' || t == 's' || t == 'l' || t == 'x' || t == 'n' || t == 'i';
    const bool isUnsigned = t == 'h' || t == 't' || t == 'm' || t == 'y' || t == 'o' || t == 'j';
    if (!isSigned && !isUnsigned && t != 'b' && t != 'c') return false;
    const bool negative = isSigned && eat('n');
    std::string hex;
    while (peek() != '_') {
      char c = peek();
      if (!(isDigit(c) || (c >= 'a' && c <= 'f')) || hex.size() >= 32) return false;
      hex += c;
      pos_++;
    }
    pos_++;
    uint64_t v = 0;
    const bool fits = hex.size() <= 16;
    if (fits)
      for (char c : hex) v = v * 16 + uint64_t(isDigit(c) ? c - '0' : c - 'a' + 10);
    if (t == 'b') {
      if (!fits || v > 1) return false;
      return print(v ? "true" : "false");
    }
    if (t == 'c') {
      if (!fits || v > 0x10ffff) return false;
      if (v >= 0x20 && v < 0x7f && v != '\'' && v != '\\') return print(std::string("'") + char(v) + "'");
      char buf[16];
      std::snprintf(buf, sizeof buf, "'\\u{%llx}'", static_cast<unsigned long long>(v));
      return print(buf);
    }
    std::string text = fits ? std::to_string(v) : "0x" + hex;
    return print((negative ? "-" : "") + text);
  }

  const std::string &s_;
  const size_t maxOut_;
  size_t pos_ = 0;
  std::string out_;
  int depth_ = 0;
  size_t steps_ = 0;
  int skip_ = 0;        // > 0: parsing a part that is not shown
  uint64_t bound_ = 0;  // lifetimes bound by the binders around
};

}  // namespace

bool demangleRustV0(const std::string &symbol, size_t maxOut, std::string *out) {
  return V0Parser(symbol, maxOut).symbol(out);
}

}  // namespace tmon
