// CaptureWriter: records a session as a .tmcap file: the stream header, then
// the frames exactly as received (re-prefixed with length and CRC-32C),
// gathered into zstd blocks (format 2) and ended by the index, like a
// probe's capture (docs/format.md). With summaries on, a Summarizer folds
// the frames as they go and its Summary frames are written in records of
// their own ("Summaries" there), so a reader draws the whole run without
// the detail.
#ifndef THREADMON_CAPTUREWRITER_H
#define THREADMON_CAPTUREWRITER_H

#include <QFile>
#include <QString>

#include <cstdint>
#include <memory>
#include <vector>

#include "threadmon.pb-c.h"
#include "tmblock.h"

namespace tmon {

class CaptureWriter {
 public:
  CaptureWriter();
  ~CaptureWriter();
  CaptureWriter(const CaptureWriter &) = delete;
  CaptureWriter &operator=(const CaptureWriter &) = delete;

  // Writes the header into a new file at path (tmcreate.h: never through a link or into a file
  // someone else put there), replacing what had the name.
  bool open(const QString &path);
  // The same into an open, empty file (its descriptor is duplicated).
  bool openDescriptor(int fd, const QString &name);
  // Before open(): whether to write Summary records. They cost a second
  // fold of every frame (about as much CPU as a reader's load).
  void setSummaries(bool on) { summaries_ = on; }
  // Before open(): the blocks' zstd level (default 3, as the probe writes).
  void setLevel(int level) { blocks_.level = level; }
  bool writeFrame(const uint8_t *payload, uint32_t len);
  bool writeFrame(const Threadmon__Frame &frame);
  // Writes what is gathered as a block now (a live recording calls it on a
  // timer, so that a display killed loses little); frames are otherwise
  // written every 64 KiB and at close.
  bool flush();
  // Flushes, writes the index, closes.
  bool close();
  bool isOpen() const { return file_.isOpen(); }
  // A second capture at path (tmcreate.h) that gets the blocks written so
  // far, byte for byte, then every block after, and ends with its own index
  // at stopCopy() or close(): a live session's recording from its spool,
  // with no second copy of the stream kept. "" or one line saying why not.
  QString startCopy(const QString &path);
  bool stopCopy();
  bool copying() const { return copy_.isOpen(); }
  QString copyPath() const { return copy_.fileName(); }
  QString error() const { return error_; }
  uint64_t framesWritten() const { return frames_; }

 private:
  bool fail(const QString &what);
  bool writeRecord(const uint8_t *p, size_t len, tm_index_entry meta);
  bool writeFrames(const std::vector<uint8_t> &frames, uint64_t first, uint64_t last);
  bool writeSummaries();
  QFile file_;
  QFile copy_;  // startCopy: the same bytes as file_ from its start
  QString error_;
  uint64_t frames_ = 0;
  std::vector<uint8_t> batch_;
  uint64_t firstTick_ = 0, lastTick_ = 0;  // tick times in the batch
  tm_block_writer blocks_;
  tm_index index_;
  bool summaries_ = false;
  std::unique_ptr<class Summarizer> summarizer_;
  std::vector<uint8_t> summaryFrames_;  // framed, waiting for their record
};

}  // namespace tmon

#endif
