// Summarizer: a capture writer's source of Summary records (docs/format.md,
// "Summaries"). It takes the frames as they are written and gives, a chunk
// behind them, every thread's final states per second of the session, as a
// reader loading the whole capture would derive them: each chunk is folded
// by a SessionModel of its own, started as CaptureWindow starts a window
// (the descriptions, then a warm-up before it), so its memory is one
// chunk's model and the warm-up's frames, whatever the capture's length.
#ifndef THREADMON_SUMMARIZER_H
#define THREADMON_SUMMARIZER_H

#include <QByteArray>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace tmon {

class SessionModel;

class Summarizer {
 public:
  // Under 30 s: a model holding more thins its older counter samples
  // (CounterSeries::kRecentNs), which a capture's reader does not.
  static constexpr int64_t kChunkNs = 10'000'000'000;
  // Frames past a chunk's end fed before it is summed: the ticks that close
  // its last spans (a reader loads one record past a window).
  static constexpr int64_t kCloseNs = 100'000'000;

  // out gets each Summary frame's payload, in time order.
  using Emit = std::function<void(const std::vector<uint8_t> &payload)>;
  explicit Summarizer(Emit out, int64_t chunkNs = kChunkNs);
  ~Summarizer();
  Summarizer(const Summarizer &) = delete;
  Summarizer &operator=(const Summarizer &) = delete;

  void feed(const uint8_t *payload, uint32_t len);
  // The session is over (the writer closes): sums the rest.
  void finish();

 private:
  void restart();
  void sumChunk(int64_t end);

  Emit emit_;
  int64_t chunkNs_;
  std::unique_ptr<SessionModel> model_;
  std::vector<QByteArray> descriptions_;  // before the warm-up's frames
  std::vector<QByteArray> warm_;          // frames since the next chunk's warm-up
  size_t warmDescriptions_ = 0;           // descriptions_ when warm_ began
  bool warming_ = false;
  int64_t warmStart_ = 0;
  int64_t start_ = 0;      // the session's start: buckets count from it
  int64_t chunkFrom_ = 0;  // what the model has not summed yet
  int64_t latestTick_ = 0;
  bool finished_ = false;
};

}  // namespace tmon

#endif
