#include "framedecoder.h"

#include "sessionmodel.h"
#include "tmwire.h"
#include "framearena.h"
#include "readahead.h"

namespace tmon {

struct FrameDecoder::Impl {
  tm_decoder dec;
  FrameArena arena;  // rewound per frame: the model copies what it keeps of each
};

FrameDecoder::FrameDecoder(SessionModel *model) : d_(new Impl), model_(model) {
  tm_decoder_init(&d_->dec);
}

FrameDecoder::~FrameDecoder() { tm_decoder_free(&d_->dec); }

void FrameDecoder::setFrameHook(std::function<void(const uint8_t *, uint32_t)> hook) {
  hook_ = std::move(hook);
}

void FrameDecoder::fail(const QString &message) {
  failed_ = true;
  error_ = message;
  if (model_) model_->setError(message);
}

bool FrameDecoder::feed(const void *data, size_t len) {
  if (failed_) return false;
  if (tm_decoder_feed(&d_->dec, data, len) != 0) {
    fail(QString::fromUtf8(tm_decoder_error(&d_->dec)));
    return false;
  }
  for (;;) {
    const uint8_t *payload = nullptr;
    uint32_t n = 0;
    uint64_t frameOffset = tm_decoder_good_offset(&d_->dec);
    tm_decode_status st = tm_decoder_next(&d_->dec, &payload, &n);
    if (st == TM_DECODE_NEED_MORE) return true;
    if (st == TM_DECODE_ERROR) {
      fail(QString::fromUtf8(tm_decoder_error(&d_->dec)));
      return false;
    }
    d_->arena.rewind();
    Threadmon__Frame *f = d_->arena.unpack(payload, n);
    if (!f) {
      fail(malformedFrame(frameOffset, framesRead() - 1));
      return false;
    }
    if (hook_) hook_(payload, n);
    if (model_) model_->apply(*f);
    if (model_ && model_->hasError()) {
      failed_ = true;
      error_ = model_->errorText();
      return false;
    }
  }
}

bool FrameDecoder::feedAhead(const std::function<QByteArray()> &next) {
  if (failed_) return false;
  ReadAhead ahead(&d_->dec, next);
  for (bool last = false; !last && !failed_;) {
    ReadAhead::Batch *b = ahead.take();
    for (const ReadAhead::Batch::Frame &f : b->frames) {
      if (model_) model_->apply(*f.frame);
      if (model_ && model_->hasError()) {
        failed_ = true;
        error_ = model_->errorText();
        stoppedAhead_ = true;
        framesApplied_ = f.read;
        appliedOffset_ = f.goodOffset;
        break;
      }
    }
    if (!failed_ && !b->error.isEmpty()) fail(b->error);
    last = b->last;
    ahead.giveBack(b);
  }
  ahead.finish();
  return !failed_;
}

QString FrameDecoder::malformedFrame(uint64_t offset, uint64_t framesBefore) {
  return QStringLiteral("malformed protobuf frame at byte %1 (after %2 frames)")
      .arg(offset)
      .arg(framesBefore);
}

uint64_t FrameDecoder::framesRead() const {
  return stoppedAhead_ ? framesApplied_ : d_->dec.frames;
}
uint64_t FrameDecoder::goodOffset() const {
  return stoppedAhead_ ? appliedOffset_ : tm_decoder_good_offset(&d_->dec);
}
size_t FrameDecoder::pendingBytes() const { return tm_decoder_pending(&d_->dec); }
bool FrameDecoder::headerSeen() const { return d_->dec.header_done != 0; }

}  // namespace tmon
