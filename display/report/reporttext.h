// The terminal form of threadmon-report, rendered from the same JSON object
// as --json so that both always show the same numbers.
#ifndef THREADMON_REPORTTEXT_H
#define THREADMON_REPORTTEXT_H

#include <QJsonObject>
#include <QString>

#include "threadfilter.h"

struct TextOptions {
  // Rows per table (threads, LWPs, CPUs, sync objects); 0 = all. A line
  // under a cut table says how many more there are.
  int top = 30;
  ThreadFilter threads;  // --thread: the thread and LWP tables show these
};

QString reportText(const QJsonObject &report, const TextOptions &options = TextOptions());

#endif
