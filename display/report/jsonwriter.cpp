#include "jsonwriter.h"

#include <QCborValue>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace {

// Written out a chunk at a time (a report's text is megabytes).
constexpr size_t kChunk = 1 << 16;

// Doubles Qt keeps as integers: whole numbers no wider than a double's
// mantissa (QJsonValue(double) will not add precision the double lacked).
constexpr double kMaxWholeDouble = 9007199254740992.0;  // 2^53

}  // namespace

JsonWriter::JsonWriter(std::FILE *out) : buf_(kChunk), out_(out) {}

void JsonWriter::drain() {
  if (!out_ || !used_) return;
  if (std::fwrite(buf_.data(), 1, used_, out_) != used_) failed_ = true;
  used_ = 0;
}

void JsonWriter::makeRoom(size_t n) {
  drain();
  if (n > buf_.size() - used_) buf_.resize(std::max(2 * buf_.size(), used_ + n));
}

void JsonWriter::spaces(size_t n) {
  static const char blank[] = "                                                                ";
  for (; n > sizeof blank - 1; n -= sizeof blank - 1) put(blank, sizeof blank - 1);
  put(blank, n);
}

void JsonWriter::next() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (depth_ == 0) return;
  if (!first_) put(",\n", 2);
  first_ = false;
  spaces(size_t(4 * depth_));
}

// Qt writes "{\n" or "[\n" even when the container stays empty, and its
// closing bracket on a line of its own at the container's own indent.
void JsonWriter::beginObject() {
  next();
  put("{\n", 2);
  depth_++;
  first_ = true;
}

void JsonWriter::beginArray() {
  next();
  put("[\n", 2);
  depth_++;
  first_ = true;
}

void JsonWriter::close(char bracket) {
  if (!first_) put('\n');
  depth_--;
  spaces(size_t(4 * depth_));
  put(bracket);
  first_ = false;
}

void JsonWriter::endObject() {
  close('}');
}
void JsonWriter::endArray() {
  close(']');
}

void JsonWriter::key(std::string_view k) {
  next();
  put('"');
  put(k.data(), k.size());
  put("\": ", 3);
  afterKey_ = true;
}

void JsonWriter::key(const QString &k) {
  next();
  quoted(k.constData(), k.size());
  put(": ", 2);
  afterKey_ = true;
}

void JsonWriter::quoted(const QChar *c, qsizetype n) {
  bool plain = true;
  for (qsizetype i = 0; i < n && plain; i++)
    plain = c[i].unicode() >= 0x20 && c[i].unicode() < 0x80;
  if (!plain) {
    // Qt's own escaping: ["..."] less its brackets.
    const QByteArray q = QJsonDocument(QJsonArray{QString(c, n)}).toJson(QJsonDocument::Compact);
    put(q.constData() + 1, size_t(q.size() - 2));
    return;
  }
  put('"');
  for (qsizetype i = 0; i < n; i++) {
    const char a = char(c[i].unicode());
    if (a == '"' || a == '\\') put('\\');
    put(a);
  }
  put('"');
}

void JsonWriter::null() {
  next();
  put("null", 4);
}

void JsonWriter::value(bool b) {
  next();
  if (b)
    put("true", 4);
  else
    put("false", 5);
}

void JsonWriter::integer(qint64 v) {
  char s[24];
  const auto r = std::to_chars(s, s + sizeof s, v);
  put(s, size_t(r.ptr - s));
}

void JsonWriter::value(qint64 v) {
  next();
  integer(v);
}

void JsonWriter::value(double d) {
  next();
  if (!std::isfinite(d))
    put("null", 4);
  else if (std::trunc(d) == d && std::fabs(d) <= kMaxWholeDouble)
    integer(qint64(d));  // -0.0 too: "0"
  else
    shortest(d);
}

// The shortest digits that read back as d (std::to_chars and Qt's
// double-conversion agree on them), laid out by layout().
void JsonWriter::shortest(double d) {
  char s[40];
  const auto r = std::to_chars(s, s + sizeof s, d, std::chars_format::scientific);
  const char *p = s;
  const bool negative = *p == '-';
  p += negative;
  const char *e = static_cast<const char *>(std::memchr(p, 'e', size_t(r.ptr - p)));
  char digits[20];
  int n = 0;
  for (const char *q = p; q < e; q++)
    if (*q != '.') digits[n++] = *q;
  int exp = 0;
  std::from_chars(e + 1 + (e[1] == '+'), r.ptr, exp);
  layout(negative, digits, n, exp);
}

// digits[0].digits[1..n) times 10^exp as Qt's 'g' lays it out: in
// scientific notation (an exponent of at least two digits) only when that
// is strictly shorter than the plain decimal form.
void JsonWriter::layout(bool negative, const char *digits, int n, int exp) {
  char s[40];
  put(s, size_t(layoutTo(s, negative, digits, n, exp) - s));
}

// At most 17 digits (a double's shortest), and the plain form only when no
// longer than the scientific one: under 40 characters.
char *JsonWriter::layoutTo(char *p, bool negative, const char *digits, int n, int exp) {
  if (negative) *p++ = '-';
  const int expAbs = exp < 0 ? -exp : exp;
  const int sciLen = n + (n > 1) + 2 + (expAbs >= 100 ? 3 : 2);
  const int plainLen = exp >= 0 ? (n > exp + 1 ? n + 1 : exp + 1) : n - exp + 1;
  if (sciLen < plainLen) {
    *p++ = digits[0];
    if (n > 1) {
      *p++ = '.';
      p = std::copy(digits + 1, digits + n, p);
    }
    *p++ = 'e';
    *p++ = exp < 0 ? '-' : '+';
    if (expAbs >= 100) *p++ = char('0' + expAbs / 100);
    *p++ = char('0' + expAbs / 10 % 10);
    *p++ = char('0' + expAbs % 10);
  } else if (exp >= 0) {
    const int whole = exp + 1;
    p = std::copy(digits, digits + std::min(n, whole), p);
    if (n > whole) {
      *p++ = '.';
      p = std::copy(digits + whole, digits + n, p);
    } else {
      for (int i = n; i < whole; i++) *p++ = '0';
    }
  } else {
    *p++ = '0';
    *p++ = '.';
    for (int i = 1; i < -exp; i++) *p++ = '0';
    p = std::copy(digits, digits + n, p);
  }
  return p;
}

namespace {
// Whether seconds(ns) writes the digits of ns (else value(double)).
bool secondsAsDigits(int64_t ns) {
  constexpr int64_t kExact = 1'000'000'000'000'000;  // 10^15: 15 digits
  return ns > -kExact && ns < kExact && ns % 1'000'000'000 != 0;
}
}  // namespace

// ns / 1e9 is the double nearest to the decimal ns * 10^-9. A decimal of
// at most 15 significant digits is the only one that short reading back as
// that double (doubles are closer than such decimals), so it is the
// shortest form: the digits of ns, its trailing zeros dropped.
char *JsonWriter::secondsTo(char *out, int64_t ns) {
  if (!secondsAsDigits(ns)) return nullptr;
  char digits[20];
  const uint64_t u = ns < 0 ? uint64_t(-ns) : uint64_t(ns);
  const int n = int(std::to_chars(digits, digits + sizeof digits, u).ptr - digits);
  int significant = n;
  while (digits[significant - 1] == '0') significant--;
  return layoutTo(out, ns < 0, digits, significant, n - 1 - 9);
}

void JsonWriter::seconds(int64_t ns) {
  char s[40];
  const char *end = secondsTo(s, ns);
  if (!end) {
    value(double(ns) / 1e9);
    return;
  }
  next();
  put(s, size_t(end - s));
}

void JsonWriter::numbers(std::initializer_list<Number> members) {
  constexpr size_t kMaxKey = 64, kMaxNumber = 40;
  bool plain = true;
  for (const Number &m : members)
    plain = plain && m.key.size() <= kMaxKey && (!m.seconds || secondsAsDigits(m.v));
  if (!plain) {
    beginObject();
    for (const Number &m : members) {
      key(m.key);
      if (m.seconds)
        seconds(m.v);
      else
        value(qint64(m.v));
    }
    endObject();
    return;
  }
  next();
  const size_t outer = size_t(4 * depth_), inner = outer + 4;
  const size_t room = 3 + members.size() * (inner + kMaxKey + 6 + kMaxNumber) + outer;
  if (room > buf_.size() - used_) makeRoom(room);
  char *p = buf_.data() + used_;
  *p++ = '{';
  bool first = true;
  for (const Number &m : members) {
    if (!first) *p++ = ',';
    first = false;
    *p++ = '\n';
    std::memset(p, ' ', inner);
    p += inner;
    *p++ = '"';
    std::memcpy(p, m.key.data(), m.key.size());
    p += m.key.size();
    std::memcpy(p, "\": ", 3);
    p += 3;
    p = m.seconds ? secondsTo(p, m.v) : std::to_chars(p, p + kMaxNumber, m.v).ptr;
  }
  *p++ = '\n';
  std::memset(p, ' ', outer);
  p += outer;
  *p++ = '}';
  used_ = size_t(p - buf_.data());
  first_ = false;
}

void JsonWriter::value(const QString &s) {
  next();
  quoted(s.constData(), s.size());
}

void JsonWriter::value(const QJsonValue &v) {
  next();
  anyValue(v);
}

void JsonWriter::anyValue(const QJsonValue &v) {
  switch (v.type()) {
    case QJsonValue::Bool:
      if (v.toBool())
        put("true", 4);
      else
        put("false", 5);
      return;
    case QJsonValue::Double: {
      // Stored as an integer (QJsonValue(qint64)) or as a double, which Qt
      // writes as it is (a parsed 1e+06 stays one).
      const QCborValue c = QCborValue::fromJsonValue(v);
      if (c.isInteger()) {
        integer(c.toInteger());
      } else if (!std::isfinite(c.toDouble())) {
        put("null", 4);
      } else {
        shortest(c.toDouble());
      }
      return;
    }
    case QJsonValue::String: {
      const QString s = v.toString();
      quoted(s.constData(), s.size());
      return;
    }
    case QJsonValue::Array: {
      afterKey_ = true;  // the bracket where the value goes
      beginArray();
      for (const QJsonValue &e : v.toArray()) value(e);
      endArray();
      return;
    }
    case QJsonValue::Object: {
      afterKey_ = true;
      beginObject();
      const QJsonObject o = v.toObject();
      for (auto it = o.begin(), end = o.end(); it != end; ++it) {
        key(it.key());
        value(it.value());
      }
      endObject();
      return;
    }
    case QJsonValue::Null:
    case QJsonValue::Undefined:
      break;
  }
  put("null", 4);
}

bool JsonWriter::finish() {
  put('\n');
  drain();
  if (out_ && std::fflush(out_) != 0) failed_ = true;
  return !failed_;
}
