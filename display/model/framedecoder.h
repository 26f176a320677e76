// FrameDecoder: raw stream bytes (socket or file) -> checked frames -> model.
// A damaged stream (bad magic, wrong version, oversized or corrupt frame,
// malformed protobuf) puts the model into its error state with one line
// saying where it stopped; what was decoded before stays in the model.
#ifndef THREADMON_FRAMEDECODER_H
#define THREADMON_FRAMEDECODER_H

#include <QByteArray>
#include <QString>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace tmon {

class SessionModel;

class FrameDecoder {
 public:
  explicit FrameDecoder(SessionModel *model);
  ~FrameDecoder();
  FrameDecoder(const FrameDecoder &) = delete;
  FrameDecoder &operator=(const FrameDecoder &) = delete;

  // Called with every checked frame payload before it is applied (e.g. a
  // CaptureWriter recording the session exactly as received).
  void setFrameHook(std::function<void(const uint8_t *payload, uint32_t len)> hook);

  // Returns false once the stream is damaged (further bytes are ignored).
  bool feed(const void *data, size_t len);
  // The same for the rest of the stream, next() giving its chunks (empty
  // at its end), on two threads: next() is called and the frames checked
  // and unpacked on a thread of its own (ReadAhead) while this one applies
  // them. No frame hook is called. The model, counters and error end as
  // feed() of every chunk would leave them.
  bool feedAhead(const std::function<QByteArray()> &next);

  bool failed() const { return failed_; }
  QString error() const { return error_; }
  uint64_t framesRead() const;
  uint64_t goodOffset() const;     // stream offset just past the last whole frame
  size_t pendingBytes() const;     // bytes of an incomplete frame at the end
  bool headerSeen() const;

  // The error of a frame that is no protobuf Frame.
  static QString malformedFrame(uint64_t offset, uint64_t framesBefore);

 private:
  void fail(const QString &message);
  struct Impl;
  std::unique_ptr<Impl> d_;
  SessionModel *model_;
  std::function<void(const uint8_t *, uint32_t)> hook_;
  bool failed_ = false;
  QString error_;
  // Where the model stopped the stream while the read-ahead went on.
  bool stoppedAhead_ = false;
  uint64_t framesApplied_ = 0, appliedOffset_ = 0;
};

}  // namespace tmon

#endif
