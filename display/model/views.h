// threadmon-display's views by name (views.def), for the display and the
// text report alike: QtCore only.
#ifndef THREADMON_MODEL_VIEWS_H
#define THREADMON_MODEL_VIEWS_H

#include <QString>
#include <QStringList>

namespace tmon {

enum class ViewKind {
#define TM_VIEW(kind, name, title, phrase, cls, place) kind,
#include "views.def"
#undef TM_VIEW
};

enum class ViewPlace { Center, Side, Bottom };

struct ViewInfo {
  ViewKind kind;
  const char *name;
  const char *title;
  const char *phrase;
  ViewPlace place;
};

inline constexpr ViewInfo kViews[] = {
#define TM_VIEW(kind, name, title, phrase, cls, place) \
  {ViewKind::kind, name, title, phrase, ViewPlace::place},
#include "views.def"
#undef TM_VIEW
};
inline constexpr int kViewCount = int(sizeof kViews / sizeof kViews[0]);

const ViewInfo &viewInfo(ViewKind kind);
// "threads", "lwps", ...; false when unknown.
bool parseViewKind(const QString &name, ViewKind *out);
QString viewKindName(ViewKind kind);
// Every view's name, in views.def order ("timeline, threads, ...").
QStringList viewNames();

}  // namespace tmon

#endif
