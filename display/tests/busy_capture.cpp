#include "busy_capture.h"

#include <unistd.h>

#include <QByteArray>
#include <QFile>
#include <algorithm>
#include <random>
#include <vector>

#include "capturewriter.h"
#include "synthstream.h"
#include "tmblock.h"
#include "tmcreate.h"
#include "tmwire.h"

namespace busycap {

namespace {

constexpr uint64_t kStart = kStartNs;
constexpr uint64_t kTick = 10'000'000;
constexpr uint64_t kBatch = 50'000'000;  // the probe's transition batches
constexpr uint32_t kMainTid = 1000, kProbeTid = 1001;
constexpr size_t kMaxPerFrame = 2048;  // transitions per frame
constexpr size_t kReadEvery = 10;      // ticks between two samples of a worker

// A worker's counters as a reading at a tick gives them.
struct Reading {
  uint64_t oncpu = 0, runqueue = 0, vol = 0, invol = 0;
  bool running = false;
};

struct Worker {
  uint32_t tid = 0;
  uint64_t next = 0;  // time of its next state change
  Threadmon__ThreadState state = THREADMON__THREAD_STATE__STATE_RUNNING;
  uint32_t object = 0, holder = 0;
  int acquisitions = 0;
  uint64_t changedAt = 0;
  // Cumulative counters, as /proc and schedstat would give them.
  uint64_t running = 0, oncpu = 0, runqueue = 0, vol = 0, invol = 0;
  // At each tick of the batch: a batch's changes are made before its ticks,
  // and a counter read at a tick cannot hold the time after it.
  std::vector<Reading> atTicks;
};

struct MutexStats {
  uint64_t acq = 0, cont = 0, waitNs = 0, maxWait = 0, holdNs = 0;
};

}  // namespace

// The session, a 50 ms batch at a time, each frame made by b_.
class Generator {
 public:
  Generator(int threads, uint64_t lengthNs, tmtest::StreamBuilder::Sink sink)
      : end_(lengthNs ? kStart + lengthNs : UINT64_MAX), rng_(42), b_(std::move(sink)) {
    for (int i = 0; i < threads; i++) {
      Worker w;
      w.tid = kFirstWorker + uint32_t(i);
      w.changedAt = kStart;
      w.next = kStart + runNs();
      workers_.push_back(w);
    }
  }

  bool begin() {
    hello();
    descriptions();
    return b_.ok();
  }
  // The next batch; false when a write failed. *over once the session ended.
  bool next(bool *over) {
    *over = batch_ >= end_;
    if (*over) return true;
    const uint64_t b = batch_, e = end_ - b > kBatch ? b + kBatch : end_;
    batch_ = e;
    transitions(b, e);
    size_t k = 0;
    for (uint64_t t = b + kTick; t <= e && b_.ok(); t += kTick) tick(t, k++);
    if (e == end_) ending();
    return b_.ok();
  }
  double seconds() const { return double(batch_ - kStart) / 1e9; }

 private:
  uint64_t uniform(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }
  uint64_t runNs() { return uniform(400'000, 1'600'000); }
  // Two CPUs shared by every worker: a running worker is mostly runnable.
  uint64_t oncpuOf(uint64_t ran) const { return ran * 2 / (workers_.size() + 1); }

  void hello() {
    tmtest::Hello h;
    h.protocolVersion = TM_PROTOCOL_VERSION;
    h.probeVersion = "tm-bench-longcap";
    h.pid = kMainTid;
    h.ppid = 0;
    h.exe = "/usr/bin/tm-bench-swarm";
    h.argv = {"tm-bench-swarm", "busy"};
    h.host = "generated";
    h.kernel = "6.1";
    h.cpuCount = 2;
    h.tickNs = kTick;
    h.sources = {THREADMON__SOURCE__SOURCE_INTERPOSE, THREADMON__SOURCE__SOURCE_PROC_TASK,
                 THREADMON__SOURCE__SOURCE_PROC_STAT};
    h.startNs = kStart;
    h.startRealtimeNs = 1'790'000'000'000'000'000;
    h.probeTid = kProbeTid;
    h.sessionId = 1;
    b_.hello(h);
  }

  void descriptions() {
    b_.threadStart(kMainTid, kStart, "tm-bench-swarm", "", false, true);
    b_.threadStart(kProbeTid, kStart, "threadmon", "", true, false);
    for (const Worker &w : workers_)
      b_.threadStart(w.tid, kStart, "tm-bench-swarm", "tm-bench-swarm!busy_worker", false, false,
                     kMainTid);
    for (int m = 0; m < kMutexes; m++) {
      const QByteArray symbol = QByteArray("busy_mutexes+0x") + QByteArray::number(m * 40, 16);
      b_.syncObject(uint32_t(m + 1), THREADMON__SYNC_KIND__KIND_MUTEX, 0x404000 + uint64_t(m) * 40,
                    "/usr/bin/tm-bench-swarm", symbol.constData(), nullptr, nullptr, kStart);
    }
  }

  // Every worker's state changes in [b, e), in time order, and its
  // readings at the batch's ticks.
  void transitions(uint64_t b, uint64_t e) {
    changes_.clear();
    for (Worker &w : workers_) {
      w.atTicks.clear();
      for (uint64_t t = b + kTick; t <= e; t += kTick) {
        while (w.next < t) step(w);
        w.atTicks.push_back(readingAt(w, t));
      }
      while (w.next < e) step(w);
    }
    std::sort(changes_.begin(), changes_.end(),
              [](const tmtest::Transition &x, const tmtest::Transition &y) {
                return x.t != y.t ? x.t < y.t : x.tid < y.tid;
              });
    for (size_t at = 0; at < changes_.size() && b_.ok(); at += kMaxPerFrame) {
      const size_t n = std::min(kMaxPerFrame, changes_.size() - at);
      b_.transitions(changes_[at].t,
                     std::vector<tmtest::Transition>(changes_.begin() + ptrdiff_t(at),
                                                     changes_.begin() + ptrdiff_t(at + n)));
    }
  }

  // The worker's next state change: a run of work ends in a lock (contended
  // half of the time) or, every 50 locks, in a 1 ms nap.
  void step(Worker &w) {
    const uint64_t t = w.next;
    const uint64_t spent = t - w.changedAt;
    tmtest::Transition c{int64_t(t), w.tid, THREADMON__THREAD_STATE__STATE_RUNNING};
    if (w.state == THREADMON__THREAD_STATE__STATE_RUNNING) {
      w.running += spent;
      w.oncpu += oncpuOf(spent);
      w.runqueue += spent - oncpuOf(spent);
      w.invol++;
      if (++w.acquisitions % 50 == 0) {
        c.state = w.state = THREADMON__THREAD_STATE__STATE_SLEEPING;
        w.next = t + 1'060'000;
      } else {
        const int m = int(uniform(0, kMutexes - 1));
        MutexStats &ms = mutexes_[m];
        ms.acq++;
        ms.holdNs += 20'000;
        if (uniform(0, 1)) {
          ms.cont++;
          const uint64_t wait = uniform(50'000, 1'000'000);
          ms.waitNs += wait;
          ms.maxWait = std::max(ms.maxWait, wait);
          c.state = w.state = THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX;
          c.object = w.object = uint32_t(m + 1);
          c.holder = w.holder = workers_[uniform(0, workers_.size() - 1)].tid;
          w.next = t + wait;
        } else {
          w.next = t + runNs();  // uncontended: no change to report
          w.changedAt = t;
          return;
        }
      }
    } else {
      w.vol++;
      c.releaser = w.state == THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX ? w.holder : 0;
      w.state = THREADMON__THREAD_STATE__STATE_RUNNING;
      w.object = w.holder = 0;
      w.next = t + runNs();
    }
    w.changedAt = t;
    changes_.push_back(c);
  }

  // Its run so far counted too.
  Reading readingAt(const Worker &w, uint64_t t) const {
    Reading r{w.oncpu, w.runqueue, w.vol, w.invol,
              w.state == THREADMON__THREAD_STATE__STATE_RUNNING};
    if (r.running && t > w.changedAt) {
      r.oncpu += oncpuOf(t - w.changedAt);
      r.runqueue += t - w.changedAt - oncpuOf(t - w.changedAt);
    }
    return r;
  }

  // A tenth of the workers a tick, in turn: the probe's sampler reads a
  // thread again only when its plan says so (probe/sample/read_plan.h), which for
  // this workload's captures is about 10 of the 100 workers a tick.
  // The k-th tick of the batch.
  void tick(uint64_t t, size_t k) {
    const size_t n = (workers_.size() + kReadEvery - 1) / kReadEvery;
    tmtest::Tick &tk = tick_;
    tk.t = int64_t(t);
    tk.lwps.clear();
    for (size_t i = 0; i < n; i++) {
      const Worker &w = workers_[(seq_ * n + i) % workers_.size()];
      const Reading &r = w.atTicks[k];
      tmtest::Lwp l{w.tid, r.oncpu / 10 * 9, r.oncpu / 10, r.oncpu, r.runqueue,
                    r.vol, r.invol,          100};
      l.cpu = int(w.tid % 2);
      l.kstate = r.running ? 'R' : 'S';
      l.readNs = int64_t(t);
      tk.lwps.push_back(l);
    }
    seq_++;
    // /proc/stat every 5 ticks, as the probe reads it.
    tk.cpus.clear();
    const uint64_t elapsed = t - kStart;
    if (seq_ % 5 == 0)
      for (uint32_t c = 0; c < 2; c++)
        tk.cpus.push_back({c, elapsed / 10 * 9, 0, elapsed / 10, 0, 0, 0, 0, 0});
    tk.sync.clear();
    for (int m = 0; m < kMutexes; m++) {
      const MutexStats &ms = mutexes_[m];
      tk.sync.push_back(
          {uint32_t(m + 1), ms.acq, ms.cont, ms.waitNs, ms.maxWait, ms.holdNs, 0, ms.acq});
    }
    tk.threadsTracked = uint32_t(workers_.size() + 2);
    b_.tick(tk);
  }

  void ending() {
    for (const Worker &w : workers_) b_.threadEnd(w.tid, int64_t(end_), w.oncpu);
    b_.goodbye(int64_t(end_), 0);
  }

  const uint64_t end_;
  std::mt19937_64 rng_;
  tmtest::StreamBuilder b_;
  std::vector<Worker> workers_;
  MutexStats mutexes_[kMutexes];
  std::vector<tmtest::Transition> changes_;
  tmtest::Tick tick_;
  uint64_t seq_ = 0;
  uint64_t batch_ = kStart;  // the next batch's start
};

bool write(tmon::CaptureWriter *out, int threads, uint64_t lengthNs) {
  Generator g(threads, lengthNs, [out](Threadmon__Frame &f) { return out->writeFrame(f); });
  bool over = false;
  if (!g.begin()) return false;
  while (!over)
    if (!g.next(&over)) return false;
  return true;
}

Stream::Stream(int threads, uint64_t lengthNs)
    : g_(std::make_unique<Generator>(threads, lengthNs, tmtest::intoBytes(&out_))) {}

Stream::~Stream() = default;

QByteArray Stream::start() {
  out_ = tmtest::header();
  g_->begin();
  return std::exchange(out_, QByteArray());
}

QByteArray Stream::next() {
  bool over = false;
  g_->next(&over);
  return std::exchange(out_, QByteArray());
}

double Stream::seconds() const {
  return g_->seconds();
}

bool writeFile(const QString &path, int threads, uint64_t lengthNs, bool summaries) {
  tmon::CaptureWriter w;
  w.setSummaries(summaries);
  return w.open(path) && write(&w, threads, lengthNs) && w.close();
}

bool writePlainFile(const QString &path, int threads, uint64_t lengthNs) {
  // Created as the writer creates captures (no symlink followed).
  const int fd = tm_create_replacing(QFile::encodeName(path).constData());
  QFile f;
  if (fd < 0 || !f.open(fd, QIODevice::WriteOnly, QFileDevice::AutoCloseHandle)) {
    if (fd >= 0) ::close(fd);
    return false;
  }
  Stream s(threads, lengthNs);
  QByteArray bytes = s.start();
  while (!bytes.isEmpty()) {
    if (f.write(bytes) != bytes.size()) return false;
    bytes = s.next();
  }
  return f.flush();
}

bool dropIndex(const QString &path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadWrite) || !f.seek(f.size() - TM_INDEX_TAIL_BYTES)) return false;
  const QByteArray tail = f.read(TM_INDEX_TAIL_BYTES);
  uint64_t at = 0;
  for (int i = 7; i >= 0; i--) at = at << 8 | uint8_t(tail[i]);
  return tail.endsWith(TM_INDEX_MAGIC) && f.resize(qint64(at));
}

}  // namespace busycap
