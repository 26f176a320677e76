// CaptureTree: a process tree's capture (docs/format.md, "Process trees"):
// the directory `threadmon record -o OUT` makes when the program forks or
// execs, holding the index (lives: one line per start, fork and end of
// each process) and one ordinary capture per session. It only reads the
// index and names the files; each capture is read by the existing readers
// (CaptureReader, CaptureWindow, the report's streaming), unchanged.
#ifndef THREADMON_CAPTURETREE_H
#define THREADMON_CAPTURETREE_H

#include <QString>
#include <QStringList>
#include <cstdint>
#include <vector>

namespace tmon {

struct TreeProcess {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  QString name;          // the last image's program name
  uint64_t startNs = 0;  // CLOCK_MONOTONIC: fork, or the first image's start
  uint64_t endNs = 0;    // 0: no end seen (still running, or killed)
  bool ended = false;
  QString how;           // "exit", "_exit", "signal" (the launcher saw it), "" unknown
  int status = 0;        // exit status, or the signal when how is "signal"
  uint64_t utimeNs = 0;  // CPU time at the end, from the kernel (getrusage)
  uint64_t stimeNs = 0;
  QStringList captures;  // absolute paths, one per image that had a session, in order
  int depth = 0;         // 0 for the root
};

class CaptureTree {
 public:
  // True when path is a directory holding a tree's index.
  static bool isTree(const QString &path);
  // The capture to read for path: the root process's when path is a tree
  // (or "" when it has none), else path itself.
  static QString mainCapture(const QString &path);
  // Reads path's index. False (error() says why in one line) when it is
  // not a tree or cannot be read; lines it cannot parse are skipped and
  // counted.
  bool open(const QString &path);
  QString error() const { return error_; }
  int skippedLines() const { return skipped_; }
  // Parents before their children, children by start time.
  const std::vector<TreeProcess> &processes() const { return processes_; }
  const TreeProcess *find(uint32_t pid) const;
  uint32_t rootPid() const { return processes_.empty() ? 0 : processes_.front().pid; }
  // The capture to read for pid (its last image's), or "" when it had none.
  QString captureFor(uint32_t pid) const;

 private:
  std::vector<TreeProcess> processes_;
  QString error_;
  int skipped_ = 0;
};

}  // namespace tmon

#endif
