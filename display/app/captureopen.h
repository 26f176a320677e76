// Opening a .tmcap as a replay session page, for the window, drag-and-drop
// and --screenshot alike.
#ifndef THREADMON_APP_CAPTUREOPEN_H
#define THREADMON_APP_CAPTUREOPEN_H

#include <QString>

namespace tmui {
class SessionView;
}

// Returns the page (damaged captures included, with a notice saying where
// they stop), or nullptr with *error set when nothing could be read.
tmui::SessionView *openCapture(const QString &path, QString *error);

#endif
