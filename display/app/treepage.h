// The processes of a process tree's capture (model/capturetree.h), as the
// display's first tab for it: which process started which, how each ended,
// its lifetime and CPU; a process with a session of its own opens in a tab
// of its own on a double click (or Enter).
#ifndef THREADMON_TREEPAGE_H
#define THREADMON_TREEPAGE_H

#include <QString>
#include <QWidget>
#include <functional>

namespace tmon {
class CaptureTree;
}

// open(capture) is called with the capture file of the process picked.
QWidget *makeTreePage(const tmon::CaptureTree &tree, const QString &path,
                      std::function<void(const QString &)> open);

#endif
