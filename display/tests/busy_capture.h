// A long capture of busy threads, made in seconds a minute: the frames a
// probe writes for `tm-bench-swarm busy N`, simulated (N workers running,
// blocking on 4 shared mutexes, about half of the acquisitions contended,
// holder and releaser named, napping 1 ms every 50 acquisitions; 10 ms
// ticks sampling a tenth of the workers each, the mutexes' counters,
// /proc/stat every 5 ticks), made with synthstream.h's builder and written
// through CaptureWriter (zstd blocks and the index), or as a stream of frames
// without end. For tm-bench-longcap, the long-capture tests and
// tm-bench-display --long-run.
#ifndef THREADMON_TESTS_BUSY_CAPTURE_H
#define THREADMON_TESTS_BUSY_CAPTURE_H

#include <QByteArray>
#include <QString>
#include <cstdint>
#include <memory>

namespace tmon {
class CaptureWriter;
}

namespace busycap {

constexpr uint64_t kStartNs = 1'000'000'000'000;  // CLOCK_MONOTONIC of the simulated start
constexpr uint32_t kFirstWorker = 1002;           // workers' tids from here
constexpr int kMutexes = 4;                       // object ids 1..4

class Generator;

// The session as a probe's stream: header and frames, framed.
class Stream {
 public:
  // lengthNs 0: without end.
  explicit Stream(int threads, uint64_t lengthNs = 0);
  ~Stream();
  // The header, the Hello and the descriptions (threads, mutexes).
  QByteArray start();
  // The next 50 ms (transitions, then its 5 ticks), the ending frames after
  // the last; then nothing.
  QByteArray next();
  double seconds() const;  // of the session made so far

 private:
  std::unique_ptr<Generator> g_;
  QByteArray out_;
};

// Writes the whole session (Hello to Goodbye) to out, which is open; false
// when a write failed (out->error() says why). Deterministic.
bool write(tmon::CaptureWriter *out, int threads, uint64_t lengthNs);
// The same into a new file at path, closed (with its index; with Summary
// records when summaries); false when a write failed.
bool writeFile(const QString &path, int threads, uint64_t lengthNs, bool summaries = false);
// The same session as a file of plain frames (format 1, as a probe writes
// with THREADMON_COMPRESS=0): no blocks, no index.
bool writePlainFile(const QString &path, int threads, uint64_t lengthNs);
// Cuts a closed capture's index off (its offset is in the file's last 12
// bytes): what a writer killed after its last block leaves.
bool dropIndex(const QString &path);

}  // namespace busycap

#endif
