// --screenshot: renders one view of a capture to a PNG without a screen
// (works with QT_QPA_PLATFORM=offscreen).
#ifndef THREADMON_APP_SCREENSHOT_H
#define THREADMON_APP_SCREENSHOT_H

#include <QImage>
#include <QSize>
#include <QString>

#include "views.h"

namespace tmui {
class SessionView;
}  // namespace tmui

// Renders `kind` of `page` at `size`, the replay at `atSeconds` (< 0: the end).
QImage renderView(tmui::SessionView *page, tmon::ViewKind kind, double atSeconds, QSize size);

// Renders the whole session page (toolbar, timeline, docks).
QImage renderPage(tmui::SessionView *page, double atSeconds, QSize size);

// Drops the offscreen platform's harmless warnings (no XDG_RUNTIME_DIR, no
// window size hints) so --screenshot prints only real problems.
void installScreenshotMessageFilter();

// Opens the capture, renders `viewName` (or "window": the whole page), saves. Returns "" or one error line.
// `object` (symbol prefix or id, may be empty) is selected in the sync view first.
QString screenshotCapture(const QString &capture, const QString &viewName, double atSeconds,
                          QSize size, const QString &out, const QString &object = QString());

// Selects the sync object named `object` (symbol prefix or id); false when none matches.
bool selectSyncObject(tmui::SessionView *page, const QString &object);

#endif
