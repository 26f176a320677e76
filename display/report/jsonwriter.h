// JsonWriter: JSON written as it is made, byte for byte what
// QJsonDocument::toJson(QJsonDocument::Indented) writes for the same values,
// without building QJsonObjects first. A long capture's report holds 50,000
// who-blocked-whom cells; building them as Qt objects and writing those was
// 15% of the report's CPU, and held the whole text in memory at the end.
//
// The caller writes an object's keys in sorted order, as QJsonObject keeps
// them (reportjson.cpp sorts each object's members before writing them).
// Numbers follow Qt's rules: a double that is a whole number up to 2^53 is
// written as an integer (QJsonValue(double) stores it as one), other doubles
// as QByteArray::number(d, 'g', QLocale::FloatingPointShortest), non-finite
// ones as null. Strings other than printable ASCII are escaped by Qt itself,
// so its rules for control characters and UTF-16 hold as they are.
#ifndef THREADMON_JSONWRITER_H
#define THREADMON_JSONWRITER_H

#include <QByteArray>
#include <QJsonValue>
#include <QString>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <vector>

class JsonWriter {
 public:
  // Written to out a chunk at a time; without out, kept for text().
  explicit JsonWriter(std::FILE *out = nullptr);
  JsonWriter(const JsonWriter &) = delete;
  JsonWriter &operator=(const JsonWriter &) = delete;

  void beginObject();
  void endObject();
  void beginArray();
  void endArray();
  // A member's key; the value follows. A string_view key is printable
  // ASCII with no quote nor backslash (a literal).
  void key(std::string_view k);
  void key(const char *k) { key(std::string_view(k)); }
  void key(const QString &k);

  void null();
  void value(bool b);
  void value(int v) { value(qint64(v)); }
  void value(qint64 v);
  // As QJsonValue(d) then toJson: whole numbers up to 2^53 as integers.
  void value(double d);
  // value(double(ns) / 1e9), without searching for its shortest digits.
  void seconds(int64_t ns);
  void value(const QString &s);
  void value(const char *utf8) { value(QString::fromUtf8(utf8)); }
  // Any Qt value (a finding's evidence, a parsed report), as Qt writes it.
  void value(const QJsonValue &v);

  // An object of whole numbers, as beginObject(), key() and value(qint64)
  // (or seconds(), for a member marked so) then endObject() write it, its
  // room made once: a long capture's report holds 50,000 who-blocked-whom
  // cells, and member by member each took 1,200 instructions. Keys as
  // key(string_view) takes them, in sorted order.
  struct Number {
    std::string_view key;
    int64_t v = 0;
    bool seconds = false;  // v is ns, written as seconds(v)
  };
  void numbers(std::initializer_list<Number> members);

  // The newline after the document, and what is left written out; false
  // when writing failed (a full disk, a closed pipe).
  bool finish();
  // What was written, when there is no out.
  QByteArray text() const { return QByteArray(buf_.data(), qsizetype(used_)); }

 private:
  // The buffer, written out (or grown, without out) when full: a
  // report's text is megabytes of short pieces, a std::string's append
  // per piece was a third of the writer's cost.
  void put(const char *s, size_t n) {
    if (n > buf_.size() - used_) makeRoom(n);
    std::memcpy(buf_.data() + used_, s, n);
    used_ += n;
  }
  void put(char c) {
    if (used_ == buf_.size()) makeRoom(1);
    buf_[used_++] = c;
  }
  void spaces(size_t n);
  void makeRoom(size_t n);
  void next();  // before a key or a value: its separator and indent
  void close(char bracket);
  void quoted(const QChar *c, qsizetype n);
  void integer(qint64 v);
  void shortest(double d);  // as QByteArray::number(d, 'g', FloatingPointShortest)
  void layout(bool negative, const char *digits, int n, int exp);
  // layout() into out (room for 40), returning its end.
  static char *layoutTo(char *out, bool negative, const char *digits, int n, int exp);
  // seconds(ns) into out (room for 40), or nullptr when seconds() takes
  // value(double) for it.
  static char *secondsTo(char *out, int64_t ns);
  void anyValue(const QJsonValue &v);
  void drain();  // the buffer to out

  std::vector<char> buf_;
  size_t used_ = 0;
  std::FILE *out_;
  int depth_ = 0;
  bool first_ = true;      // no member yet in the open container
  bool afterKey_ = false;  // a key written, its value next
  bool failed_ = false;
};

#endif
