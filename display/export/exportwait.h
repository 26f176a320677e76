// What a trace format is given of each wait (TimelineSink::wait): the
// wait's record and its sync object's names, made once per object.
#ifndef THREADMON_EXPORTWAIT_H
#define THREADMON_EXPORTWAIT_H

#include <QByteArray>
#include <QString>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "modeltypes.h"

namespace tmon {

// A sync object's names as its waits carry them: made once per object (a
// million waits each converting or copying its names was a tenth of a
// Perfetto export), again only when a later window names it otherwise.
struct ExportObject {
  uint32_t id = 0;
  uint32_t index = 0;  // 0, 1, 2 ... in the order made: a sink's own tables
  QString name;        // "mutex mutex_hold!big_lock"
  QString callSite;    // where it was contended first, "" when unknown
  QByteArray nameUtf8, callSiteUtf8;
  // A format's own text for it (Chrome: its names as a wait's arguments),
  // made at its first wait: one load, where a table by index took a bounds
  // check and a test.
  mutable const void *formatText = nullptr;
};

// Its fields up to object laid out as WaitRecord's, so that the walk
// copies a record whole (field by field, a sixth of the walk's
// instructions).
struct ExportWait {
  int64_t start = 0, end = 0;
  uint32_t waiter = 0, objectId = 0, holder = 0, releaser = 0;
  FinalState state = FinalState::BlockedMutex;
  bool open = false;                     // still blocked where the export ends
  uint32_t count = 1;                    // (WaitRecord's: always 1 here)
  const ExportObject *object = nullptr;  // the sink's, for the whole export
};
static_assert(offsetof(ExportWait, start) == offsetof(WaitRecord, start) &&
                  offsetof(ExportWait, end) == offsetof(WaitRecord, end) &&
                  offsetof(ExportWait, waiter) == offsetof(WaitRecord, waiter) &&
                  offsetof(ExportWait, objectId) == offsetof(WaitRecord, object) &&
                  offsetof(ExportWait, holder) == offsetof(WaitRecord, holder) &&
                  offsetof(ExportWait, releaser) == offsetof(WaitRecord, releaser) &&
                  offsetof(ExportWait, state) == offsetof(WaitRecord, state) &&
                  offsetof(ExportWait, open) == offsetof(WaitRecord, open) &&
                  offsetof(ExportWait, count) == offsetof(WaitRecord, count) &&
                  offsetof(ExportWait, object) == sizeof(WaitRecord),
              "ExportWait starts as WaitRecord");
// w's record: its fields up to object.
inline WaitRecord recordOf(const ExportWait &w) {
  WaitRecord r;
  std::memcpy(static_cast<void *>(&r), &w, sizeof r);
  return r;
}

}  // namespace tmon

#endif
