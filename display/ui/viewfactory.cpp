#include "viewfactory.h"

#include "chartsview.h"
#include "cpusview.h"
#include "findingsview.h"
#include "lwpsview.h"
#include "mappingview.h"
#include "matrixview.h"
#include "syncview.h"
#include "threadsview.h"
#include "timelineview.h"
#include "userthreadsview.h"

namespace tmui {

ModelView *makeView(tmon::ViewKind kind, tmon::SessionModel *model, ViewWindow *window) {
  switch (kind) {
#define TM_VIEW(kind, name, title, phrase, cls, place) \
  case tmon::ViewKind::kind: return new cls(model, window);
#include "views.def"
#undef TM_VIEW
  }
  return nullptr;
}

}  // namespace tmui
