// Makes each view of views.def from its class there.
#ifndef THREADMON_UI_VIEWFACTORY_H
#define THREADMON_UI_VIEWFACTORY_H

#include "views.h"

namespace tmon {
class SessionModel;
}

namespace tmui {

class ModelView;
class ViewWindow;

ModelView *makeView(tmon::ViewKind kind, tmon::SessionModel *model, ViewWindow *window);

}  // namespace tmui

#endif
