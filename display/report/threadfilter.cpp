#include "threadfilter.h"

#include <fnmatch.h>

ThreadFilter::ThreadFilter(const QStringList &patterns) {
  for (const QString &p : patterns) {
    if (p.contains(u'*') || p.contains(u'?') || p.contains(u'['))
      globs_ << p.toUtf8();
    else
      words_ << p;
  }
}

bool ThreadFilter::matches(uint32_t tid, const QString &name) const {
  if (!active()) return true;
  const QString id = QString::number(tid);
  for (const QString &w : words_)
    if (w == id || name.contains(w)) return true;
  const QByteArray n = name.toUtf8(), i = id.toUtf8();
  for (const QByteArray &g : globs_)
    if (fnmatch(g.constData(), n.constData(), 0) == 0 || fnmatch(g.constData(), i.constData(), 0) == 0)
      return true;
  return false;
}
