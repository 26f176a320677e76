#include "jsontext.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QVariant>

#include <charconv>
#include <cmath>
#include <string>

namespace {

void indent(std::string *out, int level) {
  out->append(size_t(4 * level), ' ');
}

void quoted(std::string *out, const QString &s) {
  const QChar *c = s.constData();
  const qsizetype n = s.size();
  bool plain = true;
  for (qsizetype i = 0; i < n && plain; i++)
    plain = c[i].unicode() >= 0x20 && c[i].unicode() < 0x80;
  if (!plain) {
    // Qt's own escaping: ["..."] less its brackets.
    const QByteArray q = QJsonDocument(QJsonArray{s}).toJson(QJsonDocument::Compact);
    out->append(q.constData() + 1, size_t(q.size() - 2));
    return;
  }
  out->push_back('"');
  for (qsizetype i = 0; i < n; i++) {
    const char a = char(c[i].unicode());
    if (a == '"' || a == '\\') out->push_back('\\');
    out->push_back(a);
  }
  out->push_back('"');
}

void value(std::string *out, const QJsonValue &v, int level);

// A container's members as Qt writes them: one per line at level, "[\n"
// or "{\n" before and the closing bracket at level - 1 after, even when
// empty.
void array(std::string *out, const QJsonArray &a, int level) {
  out->append("[\n");
  for (qsizetype i = 0; i < a.size(); i++) {
    indent(out, level);
    value(out, a.at(i), level);
    out->append(i + 1 < a.size() ? ",\n" : "\n");
  }
  indent(out, level - 1);
  out->push_back(']');
}

void object(std::string *out, const QJsonObject &o, int level) {
  out->append("{\n");
  for (auto it = o.begin(), end = o.end(); it != end;) {
    indent(out, level);
    quoted(out, it.key());
    out->append(": ");
    value(out, it.value(), level);
    out->append(++it != end ? ",\n" : "\n");
  }
  indent(out, level - 1);
  out->push_back('}');
}

void value(std::string *out, const QJsonValue &v, int level) {
  switch (v.type()) {
    case QJsonValue::Bool:
      out->append(v.toBool() ? "true" : "false");
      return;
    case QJsonValue::Double: {
      // Stored as an integer (QJsonValue(qint64)) or a double: Qt writes
      // them differently (1000000 against 1e+06), and only the variant says.
      const QVariant n = v.toVariant();
      if (n.typeId() == QMetaType::LongLong) {
        char buf[24];
        const auto r = std::to_chars(buf, buf + sizeof buf, n.toLongLong());
        out->append(buf, size_t(r.ptr - buf));
        return;
      }
      const double d = v.toDouble();
      if (!std::isfinite(d)) {
        out->append("null");
        return;
      }
      const QByteArray s = QByteArray::number(d, 'g', QLocale::FloatingPointShortest);
      out->append(s.constData(), size_t(s.size()));
      return;
    }
    case QJsonValue::String:
      quoted(out, v.toString());
      return;
    case QJsonValue::Array:
      array(out, v.toArray(), level + 1);
      return;
    case QJsonValue::Object:
      object(out, v.toObject(), level + 1);
      return;
    case QJsonValue::Null:
    case QJsonValue::Undefined:
      break;
  }
  out->append("null");
}

}  // namespace

QByteArray indentedJson(const QJsonObject &o) {
  std::string out;
  out.reserve(1 << 16);
  object(&out, o, 1);
  out.push_back('\n');
  return QByteArray(out.data(), qsizetype(out.size()));
}
