// The --json form of threadmon-report (keys: docs/report-json.md).
#ifndef THREADMON_REPORTJSON_H
#define THREADMON_REPORTJSON_H

#include <QJsonObject>

class JsonWriter;
class ThreadFilter;
struct ReportRows;
namespace tmon {
class SessionModel;
}

// One JSON object summarising the whole run of a session.
QJsonObject reportJson(const tmon::SessionModel &m);
// The same from rows gathered beforehand (reportrows.h).
QJsonObject reportJson(const ReportRows &rows);
// The same written as text (--json) straight to out, byte for byte what
// QJsonDocument(reportJson(rows)).toJson() writes, without building it;
// only the threads only matches when it is given.
void writeReportJson(const ReportRows &rows, JsonWriter *out, const ThreadFilter *only = nullptr);

#endif
