#include "readahead.h"

#include "framedecoder.h"

namespace tmon {

namespace {
// 32 frames of 100 busy threads are about half a MiB unpacked: enough to
// make a hand-over rare, few enough that the applying thread starts soon.
constexpr size_t kFramesPerBatch = 32;
constexpr size_t kBatches = 4;
}  // namespace

ReadAhead::ReadAhead(tm_decoder *dec, std::function<QByteArray()> next)
    : dec_(dec), next_(std::move(next)) {
  for (size_t i = 0; i < kBatches; i++) {
    batches_.push_back(std::make_unique<Batch>());
    free_.push_back(batches_.back().get());
  }
  thread_ = std::thread([this] { run(); });
}

ReadAhead::~ReadAhead() { finish(); }

void ReadAhead::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

ReadAhead::Batch *ReadAhead::take() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !full_.empty(); });
  Batch *b = full_.front();
  full_.pop_front();
  return b;
}

void ReadAhead::giveBack(Batch *b) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(b);
  }
  changed_.notify_all();
}

ReadAhead::Batch *ReadAhead::freeBatch() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return stopping_ || !free_.empty(); });
  if (stopping_) return nullptr;
  Batch *b = free_.front();
  free_.pop_front();
  lock.unlock();
  b->arena.rewind();
  b->frames.clear();
  return b;
}

void ReadAhead::hand(Batch *b) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    full_.push_back(b);
  }
  changed_.notify_all();
}

// What FrameDecoder::feed does with a chunk, but for applying the frames.
void ReadAhead::run() {
  Batch *b = freeBatch();
  if (!b) return;
  for (;;) {
    const QByteArray chunk = next_();
    if (chunk.isEmpty()) break;
    // The chunk's whole records are read in place (copying each chunk into
    // the decoder was a pass over the capture's bytes); what is left of it
    // is copied before it goes, however the loop below ends.
    if (tm_decoder_lend(dec_, chunk.constData(), size_t(chunk.size())) != 0) {
      b->error = QString::fromUtf8(tm_decoder_error(dec_));
      break;
    }
    struct Keep {
      tm_decoder *dec;
      ~Keep() { tm_decoder_keep(dec); }
    } keep{dec_};
    for (;;) {
      const uint8_t *payload = nullptr;
      uint32_t n = 0;
      const uint64_t frameOffset = tm_decoder_good_offset(dec_);
      const tm_decode_status st = tm_decoder_next(dec_, &payload, &n);
      if (st == TM_DECODE_NEED_MORE) break;
      if (st == TM_DECODE_ERROR) {
        b->error = QString::fromUtf8(tm_decoder_error(dec_));
        break;
      }
      Threadmon__Frame *f = b->arena.unpack(payload, n);
      if (!f) {
        b->error = FrameDecoder::malformedFrame(frameOffset, dec_->frames - 1);
        break;
      }
      b->frames.push_back({f, dec_->frames, tm_decoder_good_offset(dec_)});
      if (b->frames.size() == kFramesPerBatch) {
        hand(b);
        if (!(b = freeBatch())) return;
      }
    }
    if (!b->error.isEmpty()) break;
  }
  b->last = true;
  hand(b);
}

}  // namespace tmon
