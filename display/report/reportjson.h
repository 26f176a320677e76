// The --json form of threadmon-report (keys: docs/report-json.md).
#ifndef THREADMON_REPORTJSON_H
#define THREADMON_REPORTJSON_H

#include <QJsonObject>

struct ReportRows;
namespace tmon {
class SessionModel;
}

// One JSON object summarising the whole run of a session.
QJsonObject reportJson(const tmon::SessionModel &m);
// The same from rows gathered beforehand (reportrows.h).
QJsonObject reportJson(const ReportRows &rows);

#endif
