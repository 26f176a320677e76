#include "decodethread.h"

#include <QMetaObject>

#include "framearena.h"
#include "sourcelines.h"

namespace tmnet {

DecodeThread::DecodeThread(std::function<void(Output &)> deliver, Tap tap, QObject *parent)
    : QObject(parent), deliver_(std::move(deliver)), tap_(std::move(tap)) {
  tm_decoder_init(&decoder_);
  thread_ = std::thread([this] { run(); });
}

DecodeThread::~DecodeThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  tm_decoder_free(&decoder_);
}

void DecodeThread::feed(const QByteArray &bytes) {
  if (bytes.isEmpty()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    input_.push_back(bytes);
  }
  wake_.notify_one();
}

void DecodeThread::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finishing_ = true;
  }
  wake_.notify_one();
}

void DecodeThread::run() {
  for (;;) {
    std::deque<QByteArray> chunks;
    bool finishing = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || finishing_ || !input_.empty(); });
      if (stopping_) return;
      chunks.swap(input_);
      finishing = finishing_ && chunks.empty();
    }
    for (const QByteArray &c : chunks) decode(c);
    if (finishing) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failed_) {
        const size_t pending = tm_decoder_pending(&decoder_);
        if (pending > 0)
          out_.error =
              QStringLiteral("stream cut inside a frame at byte %1 (%2 bytes of it arrived)")
                  .arg(tm_decoder_good_offset(&decoder_))
                  .arg(pending);
        else
          out_.ended = true;
      }
      failed_ = true;  // nothing more is taken
      finishing_ = false;
    }
    publish();
    if (finishing) return;
  }
}

// Frames go into out_ a chunk at a time (one lock per chunk, not per frame).
void DecodeThread::decode(const QByteArray &bytes) {
  if (failed_) return;
  Output local;
  QString error;
  const auto arena = std::make_shared<tmon::FrameArena>();
  if (tm_decoder_feed(&decoder_, bytes.constData(), size_t(bytes.size())) != 0) {
    error = QString::fromUtf8(tm_decoder_error(&decoder_));
  }
  while (error.isEmpty()) {
    const uint8_t *payload = nullptr;
    uint32_t len = 0;
    const tm_decode_status st = tm_decoder_next(&decoder_, &payload, &len);
    if (st == TM_DECODE_NEED_MORE) break;
    if (st == TM_DECODE_ERROR) {
      error = QString::fromUtf8(tm_decoder_error(&decoder_));
      break;
    }
    tmon::OwnedFrame f = tmon::FrameArena::shared(arena, payload, len);
    if (!f) {
      error = QStringLiteral("malformed frame %1 at byte %2 (not a threadmon.Frame)")
                  .arg(decoder_.frames)
                  .arg(tm_decoder_good_offset(&decoder_) - len - TM_FRAME_PREFIX_BYTES);
      break;
    }
    if (f->body_case == THREADMON__FRAME__BODY_HELLO && decoder_.frames > 1) {
      error = QStringLiteral("a second Hello in one stream at frame %1").arg(decoder_.frames);
      break;
    }
    if (tap_) tap_(payload, len, *f);
    tmon::preloadSourceLines(*f);
    local.frames.push_back(std::move(f));
    local.bytes.push_back(len);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (out_.frames.empty()) {
    out_.frames.swap(local.frames);
    out_.bytes.swap(local.bytes);
  } else {
    for (tmon::OwnedFrame &f : local.frames) out_.frames.push_back(std::move(f));
    out_.bytes.insert(out_.bytes.end(), local.bytes.begin(), local.bytes.end());
  }
  if (!error.isEmpty()) {
    out_.error = error;
    failed_ = true;
  }
}

// One queued delivery at a time: what is decoded meanwhile joins the batch.
void DecodeThread::publish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (posted_ || (out_.frames.empty() && out_.error.isEmpty() && !out_.ended)) return;
  posted_ = true;
  QMetaObject::invokeMethod(
      this,
      [this] {
        Output batch;
        {
          std::lock_guard<std::mutex> taking(mutex_);
          std::swap(batch, out_);
          posted_ = false;
        }
        deliver_(batch);
      },
      Qt::QueuedConnection);
}

}  // namespace tmnet
