// StreamBuilder: builds threadmon streams whose truth the tests know, frame
// by frame with protobuf-c, for the model and report tests.
#ifndef THREADMON_TEST_MODEL_STREAM_H
#define THREADMON_TEST_MODEL_STREAM_H

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "threadmon.pb-c.h"

namespace tmon {
class SessionModel;
}

namespace tmtest {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 5'000'000'000;  // session start, monotonic ns

struct Lwp {
  uint32_t tid;
  uint64_t user, system, oncpu, runqueue;
  uint64_t vol = 0, invol = 0, minflt = 0, majflt = 0;
  int cpu = 0;
  char kstate = 'S';
  uint64_t futex = 0;  // LwpSample.futex_addr
  uint32_t asleep = 0; // LwpSample.asleep_syscall (syscall number + 1)
  int64_t readNs = 0;  // LwpSample.read_ns (0: not sent, as in older captures)
  Threadmon__AsleepKind asleepKind = THREADMON__ASLEEP_KIND__ASLEEP_OTHER;
  std::vector<uint64_t> folded{};  // LwpSample.folded_ns (by ThreadState)
  uint64_t foldedChanges = 0;
};
struct Cpu {
  uint32_t cpu;
  uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};
struct Sync {
  uint32_t id;
  uint64_t acquisitions, contentions, waitNs, maxWaitNs, holdNs;
  uint64_t waitSamples = 0;
};
struct Site {
  uint32_t object, stack;
  uint64_t contentions, waitNs;
};

class StreamBuilder {
 public:
  void hello(bool perfSwitch, uint32_t cpuCount = 2, uint32_t version = 1);
  void threadStart(uint32_t tid, int64_t t, const char *name, const char *routine,
                   bool probe = false, bool isMain = false);
  void threadEnd(uint32_t tid, int64_t t, uint64_t oncpuNs = 0);
  // A ThreadAttr (affinity: 64 CPUs a word, empty = all).
  void threadAttr(uint32_t tid, int64_t t, const char *name, int policy, int nice,
                  std::vector<uint64_t> affinity = {});
  void transition(uint32_t tid, int64_t t, Threadmon__ThreadState state, uint32_t object = 0,
                  uint32_t holder = 0, uint32_t releaser = 0);
  void stack(uint32_t id, const std::vector<const char *> &frames);
  // lost: CpuSwitches.lost; stopped: the batch is the probe's last.
  void cpuSwitch(uint32_t tid, int64_t t, uint32_t cpu, Threadmon__SwitchKind kind,
                 uint64_t lost = 0, bool stopped = false);
  void tick(int64_t t, const std::vector<Lwp> &lwps, const std::vector<Cpu> &cpus = {},
            const std::vector<Sync> &sync = {}, uint64_t framesDropped = 0,
            const std::vector<Site> &sites = {});
  // madeAt: SyncObject.made_at, the initialiser's call site as a frame.
  void syncObject(uint32_t id, Threadmon__SyncKind kind, uint64_t address, const char *module,
                  const char *symbol, const char *callSite, const char *madeAt = nullptr);
  // Sets Hello.exe for the following hello() (default /usr/bin/workload).
  void setExe(const char *exe) { exe_ = exe; }
  // Sets Hello.sources for the following hello(), in place of the probe's
  // (interpose, proc_task, proc_stat, perf_switch when asked).
  void setSources(std::vector<Threadmon__Source> sources) { sources_ = std::move(sources); }
  // A session read from outside (threadmon-attach): no interpose source in
  // the Hello, and its Goodbye says it detached.
  void setOutside(bool outside) { outside_ = outside; }
  void goodbye(int64_t t, int exitStatus, uint64_t eventsDropped = 0);
  // User threads (M:N): a UserThread, and one UserSwitches entry on LWP tid.
  void userThread(uint32_t id, int64_t t, uint32_t creator, const char *function);
  void userSwitch(uint32_t tid, int64_t t, uint32_t from, uint32_t to,
                  Threadmon__UserSwitchKind kind = THREADMON__USER_SWITCH_KIND__USER_SWITCH);
  void rawPayload(const std::string &bytes) { frames_.push_back(bytes); }

  const std::vector<std::string> &frames() const { return frames_; }
  // Header + every frame, as a probe would send it.
  QByteArray stream() const;
  // Offsets in stream() where each frame's prefix starts.
  std::vector<uint64_t> frameOffsets() const;
  void applyTo(tmon::SessionModel *model) const;
  bool writeFile(const QString &path) const;

 private:
  void add(const Threadmon__Frame &f);
  std::vector<std::string> frames_;
  const char *exe_ = "/usr/bin/workload";
  std::vector<Threadmon__Source> sources_;
  bool outside_ = false;
};

// Thread 101 of the model tests' switch scenario ([0,20) on CPU, [20,40)
// runnable, [40,50) on CPU, [50,80) blocked on mutex 7, [80,100) on CPU;
// session to 120 ms) as the LWP of two user threads made at 0: u1 on it in
// [10,30) and [60,90), then done; u2 in [30,60), never done.
StreamBuilder userThreadScenario();

// M:N findings. 6 user threads on LWPs 101 and 102 for 600 ms, each LWP
// running its three (u1-u3, u4-u6) in turn, 10 ms at a time, always on a
// CPU: each is dispatchable 2/3 of its life. cpus: the Hello's CPU count.
StreamBuilder userSharingScenario(uint32_t cpus);
// 4 user threads on LWPs 101 and 102 for 200 ms, every 100 us: a user
// thread runs 10 us (u1, u2 in turn on 101; u3, u4 on 102), then its LWP
// blocks 90 us on cond 9 in its own context: a fine-grained handoff.
StreamBuilder userHandoffScenario();

// $TMPDIR pointed at a fresh directory while this lives (then restored),
// to see what a display keeps there: filesOpenInside() counts the files
// in it this process holds open, named or not.
class ScratchTmpDir {
 public:
  ScratchTmpDir();
  ~ScratchTmpDir();
  QString path() const { return path_; }
  int filesOpenInside() const;

 private:
  QByteArray old_;
  bool hadOld_;
  QString path_;
};

}  // namespace tmtest

#endif
