#include "views.h"

namespace tmon {

const ViewInfo &viewInfo(ViewKind kind) { return kViews[int(kind)]; }

bool parseViewKind(const QString &name, ViewKind *out) {
  for (const ViewInfo &v : kViews)
    if (name == QLatin1String(v.name)) {
      *out = v.kind;
      return true;
    }
  return false;
}

QString viewKindName(ViewKind kind) { return QString::fromLatin1(viewInfo(kind).name); }

QStringList viewNames() {
  QStringList names;
  for (const ViewInfo &v : kViews) names << QString::fromLatin1(v.name);
  return names;
}

}  // namespace tmon
