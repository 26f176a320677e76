// The report of a process tree's capture (model/capturetree.h): the
// processes (which started which, how each ended, its lifetime and CPU),
// then the report of each process that had a session, or of the one --pid
// names. Each capture is reported by this same program run on that file,
// so every option (--json, --stream, --check, --thread, ...) means what it
// means for one capture.
#ifndef THREADMON_REPORTTREE_H
#define THREADMON_REPORTTREE_H

#include <QString>
#include <QStringList>
#include <cstdint>

// args: the command line after the program name, without --pid; pid 0:
// every process with a capture. Returns the exit status (the worst of the
// processes' reports).
int reportTree(const QString &path, uint32_t pid, bool json, const QStringList &args);

#endif
