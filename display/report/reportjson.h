// The --json form of threadmon-report (keys: docs/report-json.md).
#ifndef THREADMON_REPORTJSON_H
#define THREADMON_REPORTJSON_H

#include <QJsonObject>

namespace tmon {
class SessionModel;
}

// One JSON object summarising the whole run of a session.
QJsonObject reportJson(const tmon::SessionModel &m);

#endif
