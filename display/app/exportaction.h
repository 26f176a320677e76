// File > Export: the session on a page written as a Perfetto trace, a
// Chrome JSON trace or a pprof profile, by the same library as
// threadmon export (display/export/): the whole session the page holds, or
// the window its views show (a dragged range, the last 10 s, ...).
#ifndef THREADMON_APP_EXPORTACTION_H
#define THREADMON_APP_EXPORTACTION_H

#include <QString>

class QDialog;
class QWidget;

namespace tmon {
struct ExportFormat;
}
namespace tmui {
class SessionView;
}

struct ExportChoice {
  const tmon::ExportFormat *format = nullptr;
  bool holds = false;           // pprof: hold times instead of waits
  bool selectedWindow = false;  // the views' window, else the whole session
  QString path;
};

// Writes the page's session as chosen (an existing file is replaced: the
// file dialog asked). "" or one line saying why not.
QString exportPage(const tmui::SessionView &page, const ExportChoice &choice);

// The dialog that asks for the format and the span (tests render it);
// *choice is filled when it is accepted.
QDialog *makeExportDialog(QWidget *parent, const tmui::SessionView &page, ExportChoice *choice);

// Asks, then for the file, then writes; the status line or a message box
// says how it went.
void exportPageInteractively(QWidget *parent, tmui::SessionView *page);

#endif
