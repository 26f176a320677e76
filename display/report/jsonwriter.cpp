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
  if (negative) put('-');
  const int expAbs = exp < 0 ? -exp : exp;
  const int sciLen = n + (n > 1) + 2 + (expAbs >= 100 ? 3 : 2);
  const int plainLen = exp >= 0 ? (n > exp + 1 ? n + 1 : exp + 1) : n - exp + 1;
  if (sciLen < plainLen) {
    put(digits[0]);
    if (n > 1) {
      put('.');
      put(digits + 1, size_t(n - 1));
    }
    put(exp < 0 ? "e-" : "e+", 2);
    if (expAbs >= 100) put(char('0' + expAbs / 100));
    put(char('0' + expAbs / 10 % 10));
    put(char('0' + expAbs % 10));
  } else if (exp >= 0) {
    const int whole = exp + 1;
    put(digits, size_t(std::min(n, whole)));
    if (n > whole) {
      put('.');
      put(digits + whole, size_t(n - whole));
    } else {
      for (int i = n; i < whole; i++) put('0');
    }
  } else {
    put("0.", 2);
    for (int i = 1; i < -exp; i++) put('0');
    put(digits, size_t(n));
  }
}

// ns / 1e9 is the double nearest to the decimal ns * 10^-9. A decimal of
// at most 15 significant digits is the only one that short reading back as
// that double (doubles are closer than such decimals), so it is the
// shortest form: the digits of ns, its trailing zeros dropped.
void JsonWriter::seconds(int64_t ns) {
  constexpr int64_t kExact = 1'000'000'000'000'000;  // 10^15: 15 digits
  if (ns <= -kExact || ns >= kExact || ns % 1'000'000'000 == 0) {
    value(double(ns) / 1e9);
    return;
  }
  next();
  char digits[20];
  const uint64_t u = ns < 0 ? uint64_t(-ns) : uint64_t(ns);
  const int n = int(std::to_chars(digits, digits + sizeof digits, u).ptr - digits);
  int significant = n;
  while (digits[significant - 1] == '0') significant--;
  layout(ns < 0, digits, significant, n - 1 - 9);
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
