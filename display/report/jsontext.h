// indentedJson: QJsonDocument(o).toJson(QJsonDocument::Indented), byte for
// byte, at about twice its speed. Qt's writer makes a QString and a
// QByteArray for every key and every number; a long capture's report has
// 50,000 who-blocked-whom cells of four keys each, and its writing was 7%
// of the report's CPU. Strings other than printable ASCII are escaped by
// Qt itself, so its rules for control characters and UTF-16 hold as they are.
#ifndef THREADMON_JSONTEXT_H
#define THREADMON_JSONTEXT_H

#include <QByteArray>
#include <QJsonObject>

QByteArray indentedJson(const QJsonObject &o);

#endif
