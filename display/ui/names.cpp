#include "names.h"

#include "sessionmodel.h"

#include <QRegularExpression>

namespace tmui {

QString formatNs(uint64_t ns) {
  if (ns == 0) return QStringLiteral("0");
  if (ns < 1000000) return QStringLiteral("%1 µs").arg(double(ns) / 1e3, 0, 'f', 1);
  if (ns < 1000000000) return QStringLiteral("%1 ms").arg(double(ns) / 1e6, 0, 'f', 1);
  return QStringLiteral("%1 s").arg(double(ns) / 1e9, 0, 'f', 2);
}

QString threadLabel(const tmon::SessionModel &model, uint32_t tid) {
  if (tid == 0) return QObject::tr("unknown");
  const int i = model.indexOfTid(tid);
  if (i < 0 || model.thread(i).name.isEmpty()) return QStringLiteral("tid %1").arg(tid);
  return QStringLiteral("%1 (%2)").arg(model.thread(i).name).arg(tid);
}

QString objectLabel(const tmon::SessionModel &model, uint32_t id) {
  const int i = model.indexOfSyncObject(id);
  if (i < 0) return QObject::tr("object %1").arg(id);
  return model.syncObject(i).name();
}

QString sessionTime(const tmon::SessionModel &model, int64_t t) {
  return QStringLiteral("%1 s").arg(double(t - model.startNs()) / 1e9, 0, 'f', 2);
}


QStringList collapseNotices(const QStringList &notices) {
  // Same kind: the same words before the first ':' once numbers are masked.
  static const QRegularExpression number(QStringLiteral("[0-9]+([.,][0-9]+)?"));
  QStringList kinds, latest;
  QList<int> counts;
  for (const QString &n : notices) {
    QString kind = n.section(QLatin1Char(':'), 0, 0);
    kind.replace(number, QStringLiteral("#"));
    const int at = kinds.indexOf(kind);
    int count = 1;
    if (at >= 0) {
      count = counts[at] + 1;
      kinds.removeAt(at), latest.removeAt(at), counts.removeAt(at);
    }
    kinds << kind, latest << n, counts << count;
  }
  for (int i = 0; i < latest.size(); ++i)
    if (counts[i] > 1) latest[i] += QObject::tr(" (%1 times)").arg(counts[i]);
  return latest;
}

}  // namespace tmui
