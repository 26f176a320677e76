// ReadAhead: the checking and unpacking half of FrameDecoder on a thread of
// its own. It reads a stream's chunks, checks its frames (zstd blocks, CRC)
// and unpacks them (columnframe.h, protobuf-c) into batches, each in an arena of its own,
// while the thread that made it applies them: a quarter of the CPU of a
// capture window's read, done on the second core (docs/benchmarks.md,
// "Seeking on two cores"). A few batches are in flight at most, their
// arenas reused.
#ifndef THREADMON_READAHEAD_H
#define THREADMON_READAHEAD_H

#include <QByteArray>
#include <QString>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "framearena.h"
#include "tmwire.h"

namespace tmon {

class ReadAhead {
 public:
  struct Batch {
    FrameArena arena;
    struct Frame {
      Threadmon__Frame *frame;
      uint64_t read;  // the decoder's frames read once it was
      uint64_t goodOffset;  // and the stream offset past it
    };
    std::vector<Frame> frames;
    // Set on the last batch: the stream is damaged after its frames.
    QString error;
    bool last = false;
  };

  // Starts the thread on dec, which it alone uses until finish(); next()
  // gives the stream's next chunk, empty at its end.
  ReadAhead(tm_decoder *dec, std::function<QByteArray()> next);
  // Stops the thread (a batch not taken is dropped) and waits for it.
  ~ReadAhead();
  ReadAhead(const ReadAhead &) = delete;
  ReadAhead &operator=(const ReadAhead &) = delete;

  // The next batch in stream order (waits for it); give it back when its
  // frames are applied. After the one marked last there are no more.
  Batch *take();
  void giveBack(Batch *b);
  // No more batches are wanted: the thread stops and is joined.
  void finish();

 private:
  void run();
  Batch *freeBatch();  // nullptr once finishing
  void hand(Batch *b);

  tm_decoder *dec_;
  std::function<QByteArray()> next_;
  std::vector<std::unique_ptr<Batch>> batches_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch *> free_, full_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tmon

#endif
