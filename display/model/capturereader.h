// CaptureReader: loads a .tmcap file into a SessionModel. A truncated or
// damaged file loads up to the damage; the result says where it stopped.
#ifndef THREADMON_CAPTUREREADER_H
#define THREADMON_CAPTUREREADER_H

#include <QString>

#include <cstdint>

namespace tmon {

class SessionModel;

struct CaptureLoadResult {
  enum Status {
    Complete,    // every byte decoded
    Damaged,     // truncated or corrupt: loaded up to the damage
    Unreadable,  // cannot open, not a capture, unsupported version: nothing loaded
  };
  Status status = Unreadable;
  uint64_t frames = 0;      // frames applied
  uint64_t goodBytes = 0;   // offset just past the last whole frame
  QString message;          // one line, empty when Complete
};

class CaptureReader {
 public:
  // Reads path into model (which should be fresh) and marks it ended.
  static CaptureLoadResult load(const QString &path, SessionModel *model);
};

}  // namespace tmon

#endif
