// $TMPDIR pointed at a fresh directory while a ScratchTmpDir lives (then
// restored), to see what a display keeps there.
#ifndef THREADMON_TESTS_SCRATCHTMPDIR_H
#define THREADMON_TESTS_SCRATCHTMPDIR_H

#include <unistd.h>

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>
#include <cstdlib>
#include <set>

namespace tmtest {

class ScratchTmpDir {
 public:
  ScratchTmpDir() : old_(qgetenv("TMPDIR")), hadOld_(qEnvironmentVariableIsSet("TMPDIR")) {
    path_ = QDir::temp().filePath(QStringLiteral("tm-scratch-XXXXXX"));
    QByteArray name = QFile::encodeName(path_);
    if (mkdtemp(name.data())) path_ = QFile::decodeName(name);
    qputenv("TMPDIR", name);
  }
  ~ScratchTmpDir() {
    if (hadOld_)
      qputenv("TMPDIR", old_);
    else
      qunsetenv("TMPDIR");
    QDir(path_).removeRecursively();
  }
  QString path() const { return path_; }

  // The files in it this process holds open, named or not. readlink: a file
  // whose name went (or never had one: O_TMPFILE) reads "PATH (deleted)";
  // two descriptors on one file are one file.
  int filesOpenInside() const {
    std::set<QByteArray> files;
    const QByteArray inside = QFile::encodeName(path_) + '/';
    for (int fd = 0; fd < 4096; fd++) {
      char target[4096];
      const QByteArray link = "/proc/self/fd/" + QByteArray::number(fd);
      const ssize_t len = readlink(link.constData(), target, sizeof target - 1);
      if (len > 0 && QByteArray(target, int(len)).startsWith(inside))
        files.insert(QByteArray(target, int(len)));
    }
    return int(files.size());
  }

 private:
  QByteArray old_;
  bool hadOld_;
  QString path_;
};

}  // namespace tmtest

#endif
