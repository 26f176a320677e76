// Short labels the views share: durations, threads by name and tid, sync
// objects by symbol or address.
#ifndef THREADMON_UI_NAMES_H
#define THREADMON_UI_NAMES_H

#include <QString>
#include <QStringList>
#include <cstdint>

namespace tmon {
class SessionModel;
}

namespace tmui {

// "0", "12.3 us", "4.5 ms", "1.23 s".
QString formatNs(uint64_t ns);
// "worker-1 (1234)"; "unknown" for tid 0.
QString threadLabel(const tmon::SessionModel &model, uint32_t tid);
// The object's symbol, else its address; "object N" when unknown.
QString objectLabel(const tmon::SessionModel &model, uint32_t id);
// Seconds since the session start, "1.23 s".
QString sessionTime(const tmon::SessionModel &model, int64_t t);
// The probe's notices for the banner: a notice repeated with other numbers
// ("paused for 1 s", "… 2 s") is shown once, its latest, with how many times.
QStringList collapseNotices(const QStringList &notices);

}  // namespace tmui

#endif
