// --screenshot: renders one view of a capture to a PNG without a screen
// (works with QT_QPA_PLATFORM=offscreen).
#ifndef THREADMON_APP_SCREENSHOT_H
#define THREADMON_APP_SCREENSHOT_H

#include <QImage>
#include <QSize>
#include <QString>

namespace tmui {
class SessionView;
enum class ViewKind;
}  // namespace tmui

// Renders `kind` of `page` at `size`, the replay at `atSeconds` (< 0: the end).
QImage renderView(tmui::SessionView *page, tmui::ViewKind kind, double atSeconds, QSize size);

// Renders the whole session page (toolbar, timeline, docks).
QImage renderPage(tmui::SessionView *page, double atSeconds, QSize size);

// Opens the capture, renders `viewName` (or "window": the whole page), saves. Returns "" or one error line.
QString screenshotCapture(const QString &capture, const QString &viewName, double atSeconds,
                          QSize size, const QString &out);

#endif
