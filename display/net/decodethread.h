// DecodeThread: a live stream's framing checks, CRCs and protobuf unpacking
// on a thread of their own, so that the GUI thread only folds frames into
// the model. Bytes go in with feed() in stream order (from the first, the
// header included); what was decoded comes back on the owner's thread in
// batches: one queued call at a time, so a slow consumer gets fewer, larger
// batches rather than a queue of events. A damaged stream ends in one error
// line after the frames before the damage.
#ifndef THREADMON_NET_DECODETHREAD_H
#define THREADMON_NET_DECODETHREAD_H

#include <QByteArray>
#include <QObject>
#include <QString>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "ownedframe.h"
#include "tmwire.h"

namespace tmnet {

class DecodeThread : public QObject {
 public:
  struct Output {
    tmon::FrameBatch frames;
    std::vector<uint32_t> bytes;  // each frame's payload length
    QString error;                // the stream is damaged (after these frames)
    bool ended = false;           // finish() was called and nothing was cut
  };
  // Sees every checked frame on the decoder thread, before it is handed on.
  using Tap = std::function<void(const uint8_t *payload, uint32_t len, const Threadmon__Frame &)>;
  // `deliver` runs on the thread that made this object, with each batch.
  explicit DecodeThread(std::function<void(Output &)> deliver, Tap tap = Tap(),
                        QObject *parent = nullptr);
  ~DecodeThread() override;
  void feed(const QByteArray &bytes);
  // The input is over: a frame cut short is an error, else `ended`.
  void finish();

 private:
  void run();
  void decode(const QByteArray &bytes);
  void publish();

  std::function<void(Output &)> deliver_;
  Tap tap_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<QByteArray> input_;  // guarded by mutex_
  bool finishing_ = false, stopping_ = false;
  Output out_;           // guarded by mutex_
  bool posted_ = false;  // a delivery is queued (guarded by mutex_)
  // The worker's own.
  tm_decoder decoder_;
  bool failed_ = false;
};

}  // namespace tmnet

#endif
