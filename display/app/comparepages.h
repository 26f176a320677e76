// File > Compare with: what changed between the session on another tab
// (before) and the one shown (after), in the words of threadmon diff
// (display/export/capturediff.cpp).
#ifndef THREADMON_APP_COMPAREPAGES_H
#define THREADMON_APP_COMPAREPAGES_H

#include <QString>

class QDialog;
class QTabWidget;
class QWidget;

namespace tmui {
class SessionView;
}

// The diff of two pages' whole sessions, as text.
QString comparePages(const tmui::SessionView &before, const tmui::SessionView &after);
// A dialog showing it (tests render it).
QDialog *makeCompareDialog(QWidget *parent, const QString &beforeTitle, const QString &afterTitle,
                           const QString &text);
// Asks which other tab is "before" (the current one is "after") and shows
// the comparison; says so when fewer than two sessions are open.
void compareInteractively(QWidget *parent, QTabWidget *tabs);

#endif
