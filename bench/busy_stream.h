// An endless stream of N busy threads, made a tick at a time (never held
// whole): each thread every 10 ms runs, takes one of 4 mutexes (waiting for
// it one tick in four), naps 1 ms and runs again, as `tm-bench-swarm busy`
// does, with the frames a probe sends for that (Transitions, CpuSwitches,
// a Tick with every thread's LwpSample, the CPUs and the mutexes).
// tm-bench-display --long-run feeds hours of it.
#ifndef THREADMON_BENCH_BUSY_STREAM_H
#define THREADMON_BENCH_BUSY_STREAM_H

#include <QByteArray>
#include <cstdint>
#include <vector>

namespace busy {

class Stream {
 public:
  explicit Stream(int threads);
  // The header, the Hello and the descriptions (threads, mutexes).
  QByteArray start();
  // The frames of the next tick.
  QByteArray nextTick();
  double seconds() const { return double(tick_) * 0.01; }

 private:
  struct Thread {
    uint64_t oncpu = 0, runq = 0, vol = 0, invol = 0, minflt = 0, acq = 0;
  };
  int threads_;
  uint64_t tick_ = 0;
  uint32_t rng_ = 12345;
  std::vector<Thread> t_;
  uint64_t mutexAcq_[4] = {}, mutexCont_[4] = {}, mutexWait_[4] = {};
  uint64_t cpuBusy_[2] = {};
  uint32_t next(uint32_t n);
};

}  // namespace busy

#endif
