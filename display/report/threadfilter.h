// --thread PATTERN: which threads a report shows. A pattern with * ? or [
// is a glob (fnmatch) over the whole name or tid; otherwise it matches any
// thread whose name contains it or whose tid is it. Several patterns: any
// of them.
#ifndef THREADMON_THREADFILTER_H
#define THREADMON_THREADFILTER_H

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <cstdint>

class ThreadFilter {
 public:
  ThreadFilter() = default;
  explicit ThreadFilter(const QStringList &patterns);
  bool active() const { return !globs_.isEmpty() || !words_.isEmpty(); }
  bool matches(uint32_t tid, const QString &name) const;

 private:
  QList<QByteArray> globs_;  // UTF-8, for fnmatch
  QStringList words_;
};

#endif
