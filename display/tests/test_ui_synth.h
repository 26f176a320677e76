// Synthetic threadmon streams for the display tests: real frames built with
// protobuf-c and framed with tmwire, describing a small deterministic
// workload (workers contending on a mutex, waiting on a condition variable,
// sleeping, running on two CPUs).
#ifndef THREADMON_TESTS_SYNTH_H
#define THREADMON_TESTS_SYNTH_H

#include <QByteArray>
#include <cstdint>

namespace synth {

struct Workload {
  int workers = 6;             // threads besides main and the probe thread
  double seconds = 2.0;        // run length
  QByteArray token;            // put in the Hello
  uint32_t protocolVersion = 1;
  uint32_t pid = 4242;
  bool goodbye = true;         // end cleanly
  bool contention = true;      // false: workers only run and sleep
  QByteArray notice;           // non-empty: the probe says this half-way through
  // Scale: this many more mutexes (ids 4, 5, ...) in 16 modules, each wait
  // on one of them held by a worker picked at random, so the who-blocks-whom
  // matrix has cells everywhere (the display-at-scale test and benchmark).
  int extraObjects = 0;
};

// The stream header (16 bytes).
QByteArray header(uint16_t formatMajor = 1);
// One framed payload: length, CRC-32C, bytes.
QByteArray framed(const QByteArray &payload);
// A Hello frame, framed.
QByteArray helloFrame(uint32_t pid, const QByteArray &token, uint32_t protocolVersion = 1);
// A Notice frame (what the probe tells the user), framed.
QByteArray noticeFrame(uint64_t timeNs, const QByteArray &text);
// Header and every frame of the workload.
QByteArray stream(const Workload &w);

// What stream(w) describes, for tests to check against.
int threadCount(const Workload &w);      // workers + main + probe
constexpr int kObjectCount = 3;          // a mutex, a condvar, an internal lock (+ extraObjects)
constexpr int kCpuCount = 2;
constexpr uint32_t kMutexObject = 1, kInternalObject = 3;
constexpr int kMutexCallSites = 2;

// Two threads that deadlock on two mutexes 0.3 s in: "left" holds lock_a and
// waits for lock_b, "right" holds lock_b and waits for lock_a. With
// `resolves`, right's timed lock gives up at 1.0 s and the cycle breaks.
// *formedAt: the stream offset once the cycle has lasted long enough to be confirmed (100 ms).
struct Deadlock {
  QByteArray bytes;
  int formedAt = 0;
  uint32_t left = 0, right = 0, lockA = 0, lockB = 0;
};
Deadlock deadlockStream(bool resolves);

}  // namespace synth

#endif
