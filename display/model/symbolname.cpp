#include "symbolname.h"

#include "demangle.h"

namespace tmon {

namespace {

// Takes a trailing " (inside)" whose inside holds no parenthesis: the
// probe's location, not part of a demangled signature.
QString takeLocation(QString &s) {
  if (!s.endsWith(u')')) return QString();
  const qsizetype open = s.lastIndexOf(QLatin1String(" ("));
  if (open < 0) return QString();
  QString inside = s.mid(open + 2, s.size() - open - 3);
  if (inside.isEmpty() || inside.contains(u'(') || inside.contains(u')')) return QString();
  s.truncate(open);
  return inside;
}

// Takes a trailing "+0x<hex>"; returns the "0x<hex>" part.
QString takeOffset(QString &s) {
  const qsizetype plus = s.lastIndexOf(QLatin1String("+0x"));
  if (plus < 0 || plus + 3 == s.size()) return QString();
  for (qsizetype i = plus + 3; i < s.size(); i++)
    if (!isxdigit(s[i].unicode() < 128 ? int(s[i].unicode()) : 0)) return QString();
  QString off = s.mid(plus + 1);
  s.truncate(plus);
  return off;
}

// "std::thread::_State_impl<std::thread::_Invoker<std::tuple<F, A...> > >
// ::_M_run()" -> "F": the probe names a std::thread's state when its
// callable is a lambda or a functor, whose type is the readable part. A
// function pointer type ("void (*)(int)") names nothing: left whole.
QString threadCallable(const QString &function) {
  static const QLatin1String prefix("std::thread::_State_impl<std::thread::_Invoker<std::tuple<");
  if (!function.startsWith(prefix) || !function.endsWith(QLatin1String("::_M_run()")))
    return function;
  int depth = 0;
  for (qsizetype i = prefix.size(); i < function.size(); i++) {
    const QChar c = function[i];
    if (c == u'<' || c == u'(' || c == u'{' || c == u'[') depth++;
    if (c == u'>' || c == u')' || c == u'}' || c == u']') depth--;
    if (depth < 0 || (depth == 0 && c == u',')) {
      const QString callable = function.mid(prefix.size(), i - prefix.size()).trimmed();
      return callable.isEmpty() || callable.contains(QLatin1String("(*)")) ? function : callable;
    }
  }
  return function;
}

}  // namespace

QString FrameParts::text() const {
  QString s = module;
  if (!function.isEmpty()) s += u'!' + function;
  if (!offset.isEmpty()) s += u'+' + offset;
  if (!location.isEmpty()) s += QLatin1String(" (") + location + u')';
  return s;
}

FrameParts splitFrame(const QString &frame) {
  FrameParts p;
  QString s = frame;
  p.location = takeLocation(s);
  p.offset = takeOffset(s);
  const qsizetype bang = s.indexOf(u'!');
  if (bang < 0) {
    p.module = s;
  } else {
    p.module = s.left(bang);
    p.function = s.mid(bang + 1);
  }
  return p;
}

QString readableFrame(const QString &probeFrame) {
  FrameParts p = splitFrame(probeFrame);
  if (p.function.isEmpty()) return probeFrame;
  p.function = threadCallable(demangle(p.function));
  return p.text();
}

SymbolParts splitSymbol(const QString &probeSymbol) {
  SymbolParts p;
  QString s = probeSymbol;
  p.file = takeLocation(s);
  const QString off = takeOffset(s);
  p.offset = off.isEmpty() ? 0 : off.mid(2).toULongLong(nullptr, 16);
  p.raw = s;
  p.name = demangle(s);
  return p;
}

}  // namespace tmon
