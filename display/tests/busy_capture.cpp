#include "busy_capture.h"

#include <QByteArray>
#include <QFile>
#include <algorithm>
#include <functional>
#include <random>
#include <vector>

#include "capturewriter.h"
#include "threadmon.pb-c.h"
#include "tmblock.h"
#include "tmwire.h"

namespace busycap {

namespace {

constexpr uint64_t kStart = kStartNs;
constexpr uint64_t kTick = 10'000'000;
constexpr uint64_t kBatch = 50'000'000;  // the probe's transition batches
constexpr uint32_t kMainTid = 1000, kProbeTid = 1001;
constexpr size_t kMaxPerFrame = 2048;  // transitions per frame
constexpr size_t kReadEvery = 10;      // ticks between two samples of a worker

struct Worker {
  uint32_t tid = 0;
  uint64_t next = 0;  // time of its next state change
  int state = THREADMON__THREAD_STATE__STATE_RUNNING;
  uint32_t object = 0, holder = 0;
  int acquisitions = 0;
  uint64_t changedAt = 0;
  // Cumulative counters, as /proc and schedstat would give them.
  uint64_t running = 0, oncpu = 0, runqueue = 0, vol = 0, invol = 0;
};

struct MutexStats {
  uint64_t acq = 0, cont = 0, waitNs = 0, maxWait = 0, holdNs = 0;
};

struct Change {
  uint64_t t;
  uint32_t tid, object, holder, releaser;
  int state;
};

}  // namespace

// The session, a 50 ms batch at a time, each frame given to sink_.
class Generator {
 public:
  using Sink = std::function<bool(Threadmon__Frame &)>;
  Generator(int threads, uint64_t lengthNs)
      : end_(lengthNs ? kStart + lengthNs : UINT64_MAX), rng_(42) {
    for (int i = 0; i < threads; i++) {
      Worker w;
      w.tid = kFirstWorker + uint32_t(i);
      w.changedAt = kStart;
      w.next = kStart + runNs();
      workers_.push_back(w);
    }
  }

  void setSink(Sink sink) { sink_ = std::move(sink); }
  bool begin() { return hello() && descriptions(); }
  // The next batch; false when a write failed. *over once the session ended.
  bool next(bool *over) {
    *over = batch_ >= end_;
    if (*over) return true;
    const uint64_t b = batch_, e = end_ - b > kBatch ? b + kBatch : end_;
    batch_ = e;
    if (!transitions(e)) return false;
    for (uint64_t t = b + kTick; t <= e; t += kTick)
      if (!tick(t)) return false;
    return e < end_ || ending();
  }
  double seconds() const { return double(batch_ - kStart) / 1e9; }

 private:
  uint64_t uniform(uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }
  uint64_t runNs() { return uniform(400'000, 1'600'000); }

  bool write(Threadmon__Frame &f) { return sink_(f); }

  bool hello() {
    Threadmon__Hello h = THREADMON__HELLO__INIT;
    h.protocol_version = TM_PROTOCOL_VERSION;
    h.probe_version = const_cast<char *>("tm-bench-longcap");
    h.pid = kMainTid;
    h.exe = const_cast<char *>("/usr/bin/tm-bench-swarm");
    char *argv[] = {const_cast<char *>("tm-bench-swarm"), const_cast<char *>("busy")};
    h.argv = argv;
    h.n_argv = 2;
    h.host = const_cast<char *>("generated");
    h.kernel = const_cast<char *>("6.1");
    h.cpu_count = 2;
    h.tick_interval_ns = kTick;
    Threadmon__Source sources[] = {THREADMON__SOURCE__SOURCE_INTERPOSE,
                                   THREADMON__SOURCE__SOURCE_PROC_TASK,
                                   THREADMON__SOURCE__SOURCE_PROC_STAT};
    h.sources = sources;
    h.n_sources = 3;
    h.start_monotonic_ns = kStart;
    h.start_realtime_ns = 1'790'000'000'000'000'000;
    h.probe_tid = kProbeTid;
    h.session_id = 1;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_HELLO;
    f.hello = &h;
    return write(f);
  }

  bool threadStart(uint32_t tid, const char *name, const char *routine, bool probe, bool main) {
    Threadmon__ThreadStart s = THREADMON__THREAD_START__INIT;
    s.tid = tid;
    s.time_ns = kStart;
    s.creator_tid = main || probe ? 0 : kMainTid;
    s.name = const_cast<char *>(name);
    s.start_routine = const_cast<char *>(routine);
    s.is_probe = probe;
    s.is_main = main;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_THREAD_START;
    f.thread_start = &s;
    return write(f);
  }

  bool descriptions() {
    if (!threadStart(kMainTid, "tm-bench-swarm", "", false, true) ||
        !threadStart(kProbeTid, "threadmon", "", true, false))
      return false;
    for (const Worker &w : workers_)
      if (!threadStart(w.tid, "tm-bench-swarm", "tm-bench-swarm!busy_worker", false, false))
        return false;
    for (int m = 0; m < kMutexes; m++) {
      Threadmon__SyncObject o = THREADMON__SYNC_OBJECT__INIT;
      o.id = uint32_t(m + 1);
      o.kind = THREADMON__SYNC_KIND__KIND_MUTEX;
      o.address = 0x404000 + uint64_t(m) * 40;
      o.module = const_cast<char *>("/usr/bin/tm-bench-swarm");
      QByteArray symbol = QByteArray("busy_mutexes+0x") + QByteArray::number(m * 40, 16);
      o.symbol = symbol.data();
      o.first_seen_ns = kStart;
      Threadmon__Frame f = THREADMON__FRAME__INIT;
      f.body_case = THREADMON__FRAME__BODY_SYNC_OBJECT;
      f.sync_object = &o;
      if (!write(f)) return false;
    }
    return true;
  }

  // Every worker's state changes before e, in time order.
  bool transitions(uint64_t e) {
    changes_.clear();
    for (Worker &w : workers_) {
      while (w.next < e) step(w);
    }
    std::sort(changes_.begin(), changes_.end(), [](const Change &a, const Change &b) {
      return a.t != b.t ? a.t < b.t : a.tid < b.tid;
    });
    for (size_t at = 0; at < changes_.size(); at += kMaxPerFrame) {
      const size_t n = std::min(kMaxPerFrame, changes_.size() - at);
      std::vector<uint32_t> tid(n), object(n), holder(n), releaser(n);
      std::vector<int64_t> delta(n);
      std::vector<Threadmon__ThreadState> state(n);
      uint64_t prev = changes_[at].t;
      for (size_t i = 0; i < n; i++) {
        const Change &c = changes_[at + i];
        tid[i] = c.tid;
        delta[i] = int64_t(c.t - prev);
        prev = c.t;
        state[i] = Threadmon__ThreadState(c.state);
        object[i] = c.object;
        holder[i] = c.holder;
        releaser[i] = c.releaser;
      }
      Threadmon__Transitions tr = THREADMON__TRANSITIONS__INIT;
      tr.base_ns = changes_[at].t;
      tr.n_tid = tr.n_delta_ns = tr.n_state = n;
      tr.n_object_id = tr.n_holder_tid = tr.n_releaser_tid = n;
      tr.tid = tid.data();
      tr.delta_ns = delta.data();
      tr.state = state.data();
      tr.object_id = object.data();
      tr.holder_tid = holder.data();
      tr.releaser_tid = releaser.data();
      Threadmon__Frame f = THREADMON__FRAME__INIT;
      f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
      f.transitions = &tr;
      if (!write(f)) return false;
    }
    return true;
  }

  // The worker's next state change: a run of work ends in a lock (contended
  // half of the time) or, every 50 locks, in a 1 ms nap.
  void step(Worker &w) {
    const uint64_t t = w.next;
    const uint64_t spent = t - w.changedAt;
    Change c{t, w.tid, 0, 0, 0, THREADMON__THREAD_STATE__STATE_RUNNING};
    if (w.state == THREADMON__THREAD_STATE__STATE_RUNNING) {
      w.running += spent;
      // Two CPUs shared by every worker: a running worker is mostly runnable.
      w.oncpu += spent * 2 / (workers_.size() + 1);
      w.runqueue += spent - spent * 2 / (workers_.size() + 1);
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

  // A tenth of the workers a tick, in turn: the probe's sampler reads a
  // thread again only when its plan says so (probe/sample/read_plan.h), which for
  // this workload's captures is about 10 of the 100 workers a tick.
  bool tick(uint64_t t) {
    const size_t n = (workers_.size() + kReadEvery - 1) / kReadEvery;
    std::vector<Threadmon__LwpSample> lwps(n);
    std::vector<Threadmon__LwpSample *> lwpp(n);
    for (size_t i = 0; i < n; i++) {
      const Worker &w = workers_[(seq_ * n + i) % workers_.size()];
      Threadmon__LwpSample &s = lwps[i];
      s = THREADMON__LWP_SAMPLE__INIT;
      s.tid = w.tid;
      s.oncpu_ns = w.oncpu;
      s.user_ns = w.oncpu / 10 * 9;
      s.system_ns = w.oncpu / 10;
      s.runqueue_ns = w.runqueue;
      s.vol_ctxsw = w.vol;
      s.invol_ctxsw = w.invol;
      s.minflt = 100;
      s.cpu = int32_t(w.tid % 2);
      s.kstate = w.state == THREADMON__THREAD_STATE__STATE_RUNNING ? 'R' : 'S';
      s.read_ns = t;
      lwpp[i] = &s;
    }
    Threadmon__CpuSample cpus[2];
    Threadmon__CpuSample *cpup[2];
    const uint64_t elapsed = t - kStart;
    for (uint32_t c = 0; c < 2; c++) {
      cpus[c] = THREADMON__CPU_SAMPLE__INIT;
      cpus[c].cpu = c;
      cpus[c].user_ns = elapsed / 10 * 9;
      cpus[c].system_ns = elapsed / 10;
      cpup[c] = &cpus[c];
    }
    Threadmon__SyncStats sync[kMutexes];
    Threadmon__SyncStats *syncp[kMutexes];
    for (int m = 0; m < kMutexes; m++) {
      sync[m] = THREADMON__SYNC_STATS__INIT;
      sync[m].id = uint32_t(m + 1);
      sync[m].acquisitions = mutexes_[m].acq;
      sync[m].contentions = mutexes_[m].cont;
      sync[m].wait_ns = mutexes_[m].waitNs;
      sync[m].max_wait_ns = mutexes_[m].maxWait;
      sync[m].hold_ns = mutexes_[m].holdNs;
      sync[m].hold_samples = mutexes_[m].acq;
      syncp[m] = &sync[m];
    }
    Threadmon__ProbeStats ps = THREADMON__PROBE_STATS__INIT;
    ps.threads_tracked = uint32_t(workers_.size() + 2);
    Threadmon__Tick tk = THREADMON__TICK__INIT;
    tk.seq = ++seq_;
    tk.time_ns = t;
    tk.lwps = lwpp.data();
    tk.n_lwps = lwpp.size();
    // /proc/stat every 5 ticks, as the probe reads it.
    tk.cpus = cpup;
    tk.n_cpus = seq_ % 5 == 0 ? 2 : 0;
    tk.sync = syncp;
    tk.n_sync = kMutexes;
    tk.probe = &ps;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_TICK;
    f.tick = &tk;
    return write(f);
  }

  bool ending() {
    for (const Worker &w : workers_) {
      Threadmon__ThreadEnd e = THREADMON__THREAD_END__INIT;
      e.tid = w.tid;
      e.time_ns = end_;
      e.oncpu_ns = w.oncpu;
      Threadmon__Frame f = THREADMON__FRAME__INIT;
      f.body_case = THREADMON__FRAME__BODY_THREAD_END;
      f.thread_end = &e;
      if (!write(f)) return false;
    }
    Threadmon__Goodbye g = THREADMON__GOODBYE__INIT;
    g.time_ns = end_;
    g.reason = THREADMON__END_REASON__END_EXIT;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_GOODBYE;
    f.goodbye = &g;
    return write(f);
  }

  const uint64_t end_;
  std::mt19937_64 rng_;
  std::vector<Worker> workers_;
  MutexStats mutexes_[kMutexes];
  std::vector<Change> changes_;
  uint64_t seq_ = 0;
  uint64_t batch_ = kStart;  // the next batch's start
  Sink sink_;
};

bool write(tmon::CaptureWriter *out, int threads, uint64_t lengthNs) {
  Generator g(threads, lengthNs);
  g.setSink([out](Threadmon__Frame &f) { return out->writeFrame(f); });
  bool over = false;
  if (!g.begin()) return false;
  while (!over)
    if (!g.next(&over)) return false;
  return true;
}

Stream::Stream(int threads, uint64_t lengthNs)
    : g_(std::make_unique<Generator>(threads, lengthNs)) {
  g_->setSink([this](Threadmon__Frame &f) {
    const size_t n = threadmon__frame__get_packed_size(&f);
    const qsizetype at = out_.size();
    out_.resize(at + qsizetype(TM_FRAME_PREFIX_BYTES + n));
    auto *p = reinterpret_cast<uint8_t *>(out_.data()) + at;
    threadmon__frame__pack(&f, p + TM_FRAME_PREFIX_BYTES);
    tm_frame_prefix_encode(p, p + TM_FRAME_PREFIX_BYTES, uint32_t(n));
    return true;
  });
}

Stream::~Stream() = default;

QByteArray Stream::start() {
  uint8_t header[TM_HEADER_BYTES];
  tm_header_encode(header);
  out_ = QByteArray(reinterpret_cast<const char *>(header), TM_HEADER_BYTES);
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

bool dropIndex(const QString &path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadWrite) || !f.seek(f.size() - TM_INDEX_TAIL_BYTES)) return false;
  const QByteArray tail = f.read(TM_INDEX_TAIL_BYTES);
  uint64_t at = 0;
  for (int i = 7; i >= 0; i--) at = at << 8 | uint8_t(tail[i]);
  return tail.endsWith(TM_INDEX_MAGIC) && f.resize(qint64(at));
}

}  // namespace busycap
