// The terminal form of threadmon-report, rendered from the same JSON object
// as --json so that both always show the same numbers.
#ifndef THREADMON_REPORTTEXT_H
#define THREADMON_REPORTTEXT_H

#include <QJsonObject>
#include <QString>

QString reportText(const QJsonObject &report, int maxSyncObjects = 10);

#endif
