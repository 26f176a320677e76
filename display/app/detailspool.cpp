#include "detailspool.h"

#include <sys/stat.h>
#include <unistd.h>

#include <QDir>

DetailSpool::DetailSpool()
    : temp_(QDir::tempPath() + QStringLiteral("/threadmon-detail-XXXXXX.tmcap")) {
  // The writer writes through the file's descriptor; then the name goes, so that a
  // display killed by a signal leaves nothing in $TMPDIR, and readers open
  // it through the temporary file's descriptor, which keeps it.
  if (!temp_.open()) {
    error_ = QStringLiteral("no temporary file for the spool: %1").arg(temp_.errorString());
    return;
  }
  // Level 1: a third less of the decoder thread's compressing than level 3
  // for blocks about 5% larger (1,000 threads sampled every tick: 148
  // against 221 ms of CPU for 29 MB of frames); the spool is read back only
  // for windows older than the model holds, and removed at the end.
  writer_.setLevel(1);
  // Through the descriptor QTemporaryFile made exclusively: its name is
  // never opened again.
  if (!writer_.openDescriptor(temp_.handle(), temp_.fileName())) {
    error_ = writer_.error();
    return;
  }
  ::unlink(QFile::encodeName(temp_.fileName()).constData());
  path_ = QStringLiteral("/proc/self/fd/%1").arg(temp_.handle());
}

void DetailSpool::take(const uint8_t *payload, uint32_t len) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (writer_.isOpen()) writer_.writeFrame(payload, len);
}

uint64_t DetailSpool::bytesWritten() {
  std::lock_guard<std::mutex> lock(mutex_);
  struct stat st;
  return writer_.isOpen() && fstat(temp_.handle(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

tmon::CaptureLoadResult DetailSpool::load(int64_t t0, int64_t t1, tmon::SessionModel *model) {
  std::lock_guard<std::mutex> loading(loadMutex_);
  tmon::CaptureLoadResult res;
  if (!window_ || window_->lastNs() < t1) {
    std::lock_guard<std::mutex> lock(mutex_);
    writer_.flush();
    auto w = std::make_unique<tmon::CaptureWindow>();
    if (!w->open(path_)) {
      res.status = tmon::CaptureLoadResult::Unreadable;
      res.message = w->error();
      return res;
    }
    window_ = std::move(w);
  }
  return window_->load(t0, t1, model);
}

QString DetailSpool::startRecording(const QString &path) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!writer_.isOpen()) return QStringLiteral("no spool file: cannot record this session");
  return writer_.startCopy(path);
}

void DetailSpool::stopRecording() {
  std::lock_guard<std::mutex> lock(mutex_);
  writer_.stopCopy();
}

bool DetailSpool::recording() {
  std::lock_guard<std::mutex> lock(mutex_);
  return writer_.copying();
}

QString DetailSpool::recordingPath() {
  std::lock_guard<std::mutex> lock(mutex_);
  return writer_.copying() ? writer_.copyPath() : QString();
}

void DetailSpool::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (writer_.isOpen()) writer_.flush();
}
