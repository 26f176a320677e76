#include "summarizer.h"

#include <algorithm>
#include <map>
#include <utility>

#include "capturewindow.h"
#include "runsummary.h"
#include "sessionmodel.h"
#include "summaryrecord.h"
#include "threadmon.pb-c.h"
#include "tmblock.h"

namespace tmon {

namespace {
void applyTo(SessionModel *m, const QByteArray &payload) {
  m->applyPayload(reinterpret_cast<const uint8_t *>(payload.constData()), size_t(payload.size()));
}
}  // namespace

Summarizer::Summarizer(Emit out, int64_t chunkNs)
    : emit_(std::move(out)), chunkNs_(chunkNs), model_(std::make_unique<SessionModel>()) {}

Summarizer::~Summarizer() = default;

void Summarizer::feed(const uint8_t *payload, uint32_t len) {
  if (finished_) return;
  const QByteArray bytes(reinterpret_cast<const char *>(payload), qsizetype(len));
  const uint64_t tick = tm_frame_tick_time(payload, len);
  if (tick && int64_t(tick) > latestTick_) latestTick_ = int64_t(tick);
  if (!start_ && tick) {
    start_ = model_->startNs() ? model_->startNs() : int64_t(tick);
    chunkFrom_ = start_;
  }
  const int64_t chunkEnd = start_ + (chunkFrom_ - start_) / chunkNs_ * chunkNs_ + chunkNs_;
  // The next chunk's model starts a warm-up (and a record's length) before it.
  if (start_ && !warming_ && latestTick_ >= chunkEnd - CaptureWindow::kWarmUpNs - kCloseNs) {
    warming_ = true;
    warmStart_ = latestTick_;
    warmDescriptions_ = descriptions_.size();
  }
  if (warming_) warm_.push_back(bytes);
  if (CaptureWindow::kDescriptionKinds & tm_frame_kind_bit(payload, len))
    descriptions_.push_back(bytes);
  applyTo(model_.get(), bytes);
  if (start_ && latestTick_ >= chunkEnd + kCloseNs) {
    sumChunk(chunkEnd);
    restart();
    chunkFrom_ = chunkEnd;
  }
}

void Summarizer::finish() {
  if (finished_) return;
  finished_ = true;
  model_->markEnded();
  if (start_) sumChunk(std::max(chunkFrom_, model_->latestNs()));
}

void Summarizer::sumChunk(int64_t end) {
  model_->settleNow();
  std::map<size_t, SummaryRecord> buckets;
  RunSummary::foldChunk(
      *model_, start_, chunkFrom_, end, [&](uint32_t tid, size_t k, const StateTimes &st) {
        auto it = buckets.find(k);
        if (it == buckets.end()) {
          const int64_t b0 = start_ + int64_t(k) * RunSummary::kBucketNs;
          it = buckets.emplace(k, SummaryRecord(b0, std::min(end, b0 + RunSummary::kBucketNs)))
                   .first;
        }
        it->second.add(tid, st);
      });
  for (const auto &kv : buckets) emit_(kv.second.pack());
}

void Summarizer::restart() {
  model_ = std::make_unique<SessionModel>();
  for (size_t i = 0; i < warmDescriptions_ && i < descriptions_.size(); i++)
    applyTo(model_.get(), descriptions_[i]);
  if (warming_) model_->knownFrom(warmStart_);
  for (const QByteArray &f : warm_) applyTo(model_.get(), f);
  warm_.clear();
  warming_ = false;
}

}  // namespace tmon
