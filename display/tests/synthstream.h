// The one builder of synthetic threadmon streams for the display's tests and
// benchmarks. Each call adds one frame, made with protobuf-c as the probe's
// encoder makes it, so that the model, the net layer and the views read what a
// probe would send, about a program whose truth the test knows. The builder
// keeps the frames' payloads (stream(), applyTo(), writeFile()), or, for
// streams of millions of frames, hands each to a sink as it is made (a model,
// a CaptureWriter). The canned streams made with it: synthscenarios.h,
// busy_capture.h.
#ifndef THREADMON_TESTS_SYNTHSTREAM_H
#define THREADMON_TESTS_SYNTHSTREAM_H

#include <QByteArray>
#include <QString>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "threadmon.pb-c.h"

namespace tmon {
class SessionModel;
}

namespace tmtest {

// Times are the wire's uint64 nanoseconds (CLOCK_MONOTONIC) held in an
// int64; kAt2To63 is 2^63 on the wire, which no int64 can say (bad input).
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kT0 = 5'000'000'000;  // session start
constexpr int64_t kAt2To63 = INT64_MIN;

// The stream header (16 bytes); another formatMajor, for a reader to refuse.
QByteArray header(uint16_t formatMajor = 1);
// One payload framed: length, CRC-32C, bytes.
QByteArray framed(const QByteArray &payload);

// A Hello; the defaults are those of StreamBuilder::hello(true).
struct Hello {
  uint32_t protocolVersion = 1;
  const char *probeVersion = "";
  uint32_t pid = 4242, ppid = 1, probeTid = 4243;
  const char *exe = "/usr/bin/workload";
  std::vector<const char *> argv{"workload", "--threads=2"};
  const char *host = "", *kernel = "";
  uint32_t cpuCount = 2;
  int64_t tickNs = 10 * kMs;
  std::vector<Threadmon__Source> sources{
      THREADMON__SOURCE__SOURCE_INTERPOSE, THREADMON__SOURCE__SOURCE_PROC_TASK,
      THREADMON__SOURCE__SOURCE_PROC_STAT, THREADMON__SOURCE__SOURCE_PERF_SWITCH};
  QByteArray token;
  int64_t startNs = kT0;
  uint64_t startRealtimeNs = 0, sessionId = 0;
};

// One entry of a Transitions batch, at its absolute time.
struct Transition {
  int64_t t;
  uint32_t tid;
  Threadmon__ThreadState state;
  uint32_t object = 0, holder = 0, releaser = 0;
};
// One entry of a CpuSwitches batch.
struct Switch {
  int64_t t;
  uint32_t tid, cpu;
  Threadmon__SwitchKind kind;
};

// A tick's samples: cumulative counters, as the probe reads them.
struct Lwp {
  uint32_t tid;
  uint64_t user, system, oncpu, runqueue;
  uint64_t vol = 0, invol = 0, minflt = 0, majflt = 0;
  int cpu = 0;
  char kstate = 'S';
  uint64_t futex = 0;   // LwpSample.futex_addr
  uint32_t asleep = 0;  // LwpSample.asleep_syscall (syscall number + 1)
  int64_t readNs = 0;   // LwpSample.read_ns (0: not sent, as in older captures)
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
  uint64_t waitSamples = 0, holdSamples = 0;
};
struct Site {
  uint32_t object, stack;
  uint64_t contentions, waitNs;
};
// A whole Tick; its ProbeStats.events_folded is the sum of the LWPs' foldedChanges.
struct Tick {
  int64_t t = 0;
  std::vector<Lwp> lwps;
  std::vector<Cpu> cpus;
  std::vector<Sync> sync;
  std::vector<Site> sites;
  uint64_t framesDropped = 0, samplerCpuNs = 0;
  uint32_t threadsTracked = 0;
};
// A Stack's CodeLocation.
struct Location {
  const char *modulePath;
  uint64_t address;
};

class StreamBuilder {
 public:
  // Takes each frame as it is made; false: a write failed, drop the rest.
  using Sink = std::function<bool(Threadmon__Frame &)>;
  StreamBuilder() = default;  // keeps every frame's payload
  explicit StreamBuilder(Sink sink) : sink_(std::move(sink)) {}
  // False once the sink refused a frame (the later ones went nowhere).
  bool ok() const { return ok_; }

  void hello(const Hello &h);
  // The probe's Hello: its sources, without perf_switch unless perfSwitch
  // (and as setSources() and setOutside() say), the exe setExe() gave.
  void hello(bool perfSwitch, uint32_t cpuCount = 2, uint32_t version = 1);
  // Sets Hello.exe for the following hello(bool) (default /usr/bin/workload).
  void setExe(const char *exe) { exe_ = exe; }
  // Sets Hello.sources for the following hello(bool), in place of the probe's.
  void setSources(std::vector<Threadmon__Source> sources) { sources_ = std::move(sources); }
  // A session read from outside (threadmon-attach): no interpose source in
  // hello(bool)'s Hello, and its Goodbye says it detached.
  void setOutside(bool outside) { outside_ = outside; }

  void threadStart(uint32_t tid, int64_t t, const char *name, const char *routine,
                   bool probe = false, bool isMain = false, uint32_t creator = 0);
  void threadEnd(uint32_t tid, int64_t t, uint64_t oncpuNs = 0, uint64_t yields = 0);
  // A ThreadAttr (affinity: 64 CPUs a word, empty = all).
  void threadAttr(uint32_t tid, int64_t t, const char *name, int policy, int nice,
                  std::vector<uint64_t> affinity = {});
  // madeAt: SyncObject.made_at, the initialiser's call site as a frame.
  void syncObject(uint32_t id, Threadmon__SyncKind kind, uint64_t address, const char *module,
                  const char *symbol, const char *callSite = nullptr, const char *madeAt = nullptr,
                  int64_t firstSeen = 0);
  void stack(uint32_t id, const std::vector<const char *> &frames,
             const std::vector<Location> &locations = {});

  // State changes: one, or a batch at base (an empty batch adds nothing).
  void transition(uint32_t tid, int64_t t, Threadmon__ThreadState state, uint32_t object = 0,
                  uint32_t holder = 0, uint32_t releaser = 0);
  // releasersShort: the releaser column one entry short (a ragged batch,
  // whose last entry reads releaser 0).
  void transitions(int64_t base, const std::vector<Transition> &batch, bool releasersShort = false);
  // Switch records. lost: CpuSwitches.lost; stopped: the batch is the probe's last.
  void cpuSwitch(uint32_t tid, int64_t t, uint32_t cpu, Threadmon__SwitchKind kind,
                 uint64_t lost = 0, bool stopped = false);
  void cpuSwitches(int64_t base, const std::vector<Switch> &batch, uint64_t lost = 0,
                   bool stopped = false);
  // User threads (M:N): a UserThread, and one UserSwitches entry on LWP tid.
  void userThread(uint32_t id, int64_t t, uint32_t creator, const char *function);
  void userSwitch(uint32_t tid, int64_t t, uint32_t from, uint32_t to,
                  Threadmon__UserSwitchKind kind = THREADMON__USER_SWITCH_KIND__USER_SWITCH);

  void tick(const Tick &tick);
  void tick(int64_t t, const std::vector<Lwp> &lwps, const std::vector<Cpu> &cpus = {},
            const std::vector<Sync> &sync = {}, uint64_t framesDropped = 0,
            const std::vector<Site> &sites = {});
  void notice(int64_t t, const char *text);
  // An Exec: the process, watched from outside, now runs exe with argv.
  void exec(int64_t t, const char *exe, std::vector<const char *> argv);
  void goodbye(int64_t t, int exitStatus, uint64_t eventsDropped = 0);

  // Any other frame, as given: what the calls above cannot say (bad input).
  void frame(Threadmon__Frame &f);
  void rawPayload(const std::string &bytes) { frames_.push_back(bytes); }

  // What was kept (nothing with a sink).
  const std::vector<std::string> &frames() const { return frames_; }
  // Header + every frame, as a probe would send it.
  QByteArray stream() const;
  // Offsets in stream() where each frame's prefix starts.
  std::vector<uint64_t> frameOffsets() const;
  void applyTo(tmon::SessionModel *model) const;
  bool writeFile(const QString &path) const;

 private:
  Sink sink_;
  bool ok_ = true;
  std::vector<std::string> frames_;
  uint64_t seq_ = 0;
  const char *exe_ = "/usr/bin/workload";
  std::vector<Threadmon__Source> sources_;
  bool outside_ = false;
};

// Sinks: each frame applied to model, or framed and appended to out, as it is made.
StreamBuilder::Sink intoModel(tmon::SessionModel *model);
StreamBuilder::Sink intoBytes(QByteArray *out);

}  // namespace tmtest

#endif
