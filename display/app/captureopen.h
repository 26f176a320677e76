// Opening a .tmcap as a replay session page, for the window, drag-and-drop
// and --screenshot alike.
#ifndef THREADMON_APP_CAPTUREOPEN_H
#define THREADMON_APP_CAPTUREOPEN_H

#include <QString>

#include <cstdint>

namespace tmui {
class SessionView;
}

// Returns the page (damaged captures included, with a notice saying where
// they stop), or nullptr with *error set when nothing could be read.
// A capture over kWindowedCaptureBytes is not read whole: the page shows
// kCaptureWindowNs of it through its index (CaptureWindow), ending at
// atSeconds after its start (from its start when negative), and says so.
constexpr qint64 kWindowedCaptureBytes = 64 << 20;
constexpr int64_t kCaptureWindowNs = 10'000'000'000;
tmui::SessionView *openCapture(const QString &path, QString *error, double atSeconds = -1);

#endif
