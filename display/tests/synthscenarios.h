// Canned synthetic streams, made with the one builder (synthstream.h), for
// the display's tests and benchmarks: a small deterministic workload
// (workers contending on a mutex, waiting on a condition variable, sleeping,
// running on two CPUs), a deadlock, and user threads (M:N) on their LWPs.
#ifndef THREADMON_TESTS_SYNTHSCENARIOS_H
#define THREADMON_TESTS_SYNTHSCENARIOS_H

#include <QByteArray>
#include <cstdint>

#include "synthstream.h"

namespace synth {

struct Workload {
  int workers = 6;       // threads besides main and the probe thread
  double seconds = 2.0;  // run length
  QByteArray token;      // put in the Hello
  uint32_t protocolVersion = 1;
  uint32_t pid = 4242;
  bool goodbye = true;     // end cleanly
  bool contention = true;  // false: workers only run and sleep
  QByteArray notice;       // non-empty: the probe says this half-way through
  // Scale: this many more mutexes (ids 4, 5, ...) in 16 modules, each wait
  // on one of them held by a worker picked at random, so the who-blocks-whom
  // matrix has cells everywhere (the display-at-scale test and benchmark).
  int extraObjects = 0;
};

// The workload's Hello frame, framed.
QByteArray helloFrame(uint32_t pid, const QByteArray &token, uint32_t protocolVersion = 1);
// A Notice frame (what the probe tells the user), framed.
QByteArray noticeFrame(uint64_t timeNs, const QByteArray &text);
// Header and every frame of the workload.
QByteArray stream(const Workload &w);

// What stream(w) describes, for tests to check against.
int threadCount(const Workload &w);  // workers + main + probe
constexpr int kObjectCount = 3;      // a mutex, a condvar, an internal lock (+ extraObjects)
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

// Thread 101 of the model tests' switch scenario ([0,20) on CPU, [20,40)
// runnable, [40,50) on CPU, [50,80) blocked on mutex 7, [80,100) on CPU;
// session to 120 ms) as the LWP of two user threads made at 0: u1 on it in
// [10,30) and [60,90), then done; u2 in [30,60), never done.
tmtest::StreamBuilder userThreadScenario();

// M:N findings. 6 user threads on LWPs 101 and 102 for 600 ms, each LWP
// running its three (u1-u3, u4-u6) in turn, 10 ms at a time, always on a
// CPU: each is dispatchable 2/3 of its life. cpus: the Hello's CPU count.
tmtest::StreamBuilder userSharingScenario(uint32_t cpus);
// 4 user threads on LWPs 101 and 102 for 200 ms, every 100 us: a user
// thread runs 10 us (u1, u2 in turn on 101; u3, u4 on 102), then its LWP
// blocks 90 us on cond 9 in its own context: a fine-grained handoff.
tmtest::StreamBuilder userHandoffScenario();

}  // namespace synth

#endif
