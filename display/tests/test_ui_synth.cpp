#include "test_ui_synth.h"

#include <algorithm>
#include <vector>

#include "threadmon.pb-c.h"
#include "tmwire.h"

namespace synth {

namespace {

constexpr uint64_t kStartNs = 1000000000ull;  // monotonic time of the Hello
constexpr uint64_t kTickNs = 10000000ull;     // 10 ms
constexpr uint32_t kMutexId = 1, kCondId = 2, kInternalId = 3;

QByteArray packFrame(Threadmon__Frame *f) {
  QByteArray payload(static_cast<qsizetype>(threadmon__frame__get_packed_size(f)), '\0');
  threadmon__frame__pack(f, reinterpret_cast<uint8_t *>(payload.data()));
  return framed(payload);
}

struct Lcg {  // deterministic, so tests see the same stream every run
  uint64_t s = 88172645463325252ull;
  uint32_t next(uint32_t n) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>((s >> 33) % n);
  }
};

struct Event {
  uint64_t t;
  uint32_t tid;
  int state;     // ThreadState, or -1 for a switch only
  uint32_t obj;
  int sw;        // SwitchKind, or -1
  uint32_t cpu;
  uint32_t holder = 0;  // extra objects: the worker holding it (else the next worker)
};

struct Counters {
  uint64_t oncpu = 0, runq = 0, vol = 0, invol = 0, minflt = 0;
  uint64_t lastIn = 0, lastReady = 0;
  bool onCpu = false, ready = false;
  int cpu = 0;
  uint64_t futex = 0;  // hidden-lock word while "sleeping" in it
};

constexpr uint64_t kInternalAddr = 0x7f0000001000ull;
constexpr uint32_t kPushStack = 1, kPopStack = 2, kRandomStack = 3;

QByteArray stackFrame(uint32_t id, std::vector<const char *> frames) {
  Threadmon__Stack st = THREADMON__STACK__INIT;
  st.id = id;
  st.n_frames = frames.size();
  st.frames = const_cast<char **>(frames.data());
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_STACK;
  f.stack = &st;
  return packFrame(&f);
}

// Workers start 0.3 ms apart; past 1,000 of them closer, so that all start
// within the first 0.3 s.
uint64_t startStagger(const Workload &w, int i) {
  const uint64_t step = w.workers > 1000 ? 300000ull * 1000 / static_cast<uint64_t>(w.workers) : 300000ull;
  return static_cast<uint64_t>(i) * step;
}

// Worker life: run, then block on the mutex (most often), wait on the
// condition variable, or sleep; the gap between becoming RUNNING and being
// switched in is run-queue time.
std::vector<Event> simulate(const Workload &w, uint64_t endNs) {
  // Without contention the workers only run and sleep (a clean program).
  std::vector<Event> ev;
  Lcg rng;
  Lcg spread;  // its own sequence, so the streams without extra objects stay as they were
  spread.s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < w.workers; ++i) {
    const uint32_t tid = w.pid + 2 + static_cast<uint32_t>(i);
    uint64_t t = kStartNs + 2000000ull + startStagger(w, i);
    ev.push_back({t, tid, THREADMON__THREAD_STATE__STATE_RUNNING, 0, -1, 0});
    while (t < endNs - 20000000ull) {
      const uint64_t queued = 100000ull * rng.next(20);
      const uint32_t cpu = rng.next(kCpuCount);
      ev.push_back({t + queued, tid, -1, 0, THREADMON__SWITCH_KIND__SWITCH_IN, cpu});
      t += queued + 1000000ull * (2 + rng.next(7));
      const uint32_t pick = rng.next(10);
      int state = THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX;
      uint32_t obj = kMutexId;
      if (pick >= 7) { state = THREADMON__THREAD_STATE__STATE_BLOCKED_COND; obj = kCondId; }
      if (pick == 9 || !w.contention) { state = THREADMON__THREAD_STATE__STATE_SLEEPING; obj = 0; }
      uint32_t holder = 0;
      if (obj == kMutexId && w.extraObjects > 0 && spread.next(4) != 0) {
        obj = kInternalId + 1 + spread.next(static_cast<uint32_t>(w.extraObjects));
        holder = w.pid + 2 + spread.next(static_cast<uint32_t>(w.workers));
      }
      ev.push_back({t, tid, state, obj, THREADMON__SWITCH_KIND__SWITCH_OUT, cpu, holder});
      // Mutex waits are long: the workers serialise on it (a known finding).
      t += 1000000ull * (obj == kMutexId || holder ? 4 + rng.next(8) : 1 + rng.next(4));
      ev.push_back({t, tid, THREADMON__THREAD_STATE__STATE_RUNNING, 0, -1, 0});
    }
    ev.push_back({t + 1000000ull, tid, THREADMON__THREAD_STATE__STATE_EXITED, 0, -1, 0});
  }
  std::stable_sort(ev.begin(), ev.end(), [](const Event &a, const Event &b) { return a.t < b.t; });
  return ev;
}

QByteArray threadStart(uint32_t tid, uint64_t t, uint32_t creator, const char *name,
                       const char *routine, bool probe, bool main) {
  Threadmon__ThreadStart ts = THREADMON__THREAD_START__INIT;
  ts.tid = tid;
  ts.time_ns = t;
  ts.creator_tid = creator;
  ts.name = const_cast<char *>(name);
  ts.start_routine = const_cast<char *>(routine);
  ts.is_probe = probe;
  ts.is_main = main;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_THREAD_START;
  f.thread_start = &ts;
  return packFrame(&f);
}

QByteArray syncObject(uint32_t id, Threadmon__SyncKind kind, uint64_t addr, const char *module,
                      const char *symbol) {
  Threadmon__SyncObject o = THREADMON__SYNC_OBJECT__INIT;
  o.id = id;
  o.kind = kind;
  o.address = addr;
  o.module = const_cast<char *>(module);
  o.symbol = const_cast<char *>(symbol);
  o.first_seen_ns = kStartNs;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_SYNC_OBJECT;
  f.sync_object = &o;
  return packFrame(&f);
}

}  // namespace

QByteArray header(uint16_t formatMajor) {
  uint8_t h[TM_HEADER_BYTES];
  tm_header_encode(h);
  h[8] = static_cast<uint8_t>(formatMajor);
  h[9] = static_cast<uint8_t>(formatMajor >> 8);
  return QByteArray(reinterpret_cast<const char *>(h), TM_HEADER_BYTES);
}

QByteArray framed(const QByteArray &payload) {
  uint8_t prefix[TM_FRAME_PREFIX_BYTES];
  tm_frame_prefix_encode(prefix, reinterpret_cast<const uint8_t *>(payload.constData()),
                         static_cast<uint32_t>(payload.size()));
  return QByteArray(reinterpret_cast<const char *>(prefix), TM_FRAME_PREFIX_BYTES) + payload;
}

QByteArray helloFrame(uint32_t pid, const QByteArray &token, uint32_t protocolVersion) {
  Threadmon__Hello h = THREADMON__HELLO__INIT;
  h.protocol_version = protocolVersion;
  h.probe_version = const_cast<char *>("synthetic");
  h.pid = pid;
  h.ppid = 1;
  h.exe = const_cast<char *>("/usr/bin/synthetic-workload");
  h.host = const_cast<char *>("testhost");
  h.kernel = const_cast<char *>("6.1.0");
  h.cpu_count = kCpuCount;
  h.tick_interval_ns = kTickNs;
  QByteArray tok = token;
  h.token = tok.data();
  h.start_monotonic_ns = kStartNs;
  h.start_realtime_ns = 1700000000000000000ull;
  h.probe_tid = pid + 1;
  h.session_id = 0x5eed;
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_HELLO;
  f.hello = &h;
  return packFrame(&f);
}

QByteArray noticeFrame(uint64_t timeNs, const QByteArray &text) {
  Threadmon__Notice n = THREADMON__NOTICE__INIT;
  n.time_ns = timeNs;
  n.text = const_cast<char *>(text.constData());
  Threadmon__Frame f = THREADMON__FRAME__INIT;
  f.body_case = THREADMON__FRAME__BODY_NOTICE;
  f.notice = &n;
  return packFrame(&f);
}

int threadCount(const Workload &w) { return w.workers + 2; }

QByteArray stream(const Workload &w) {
  const uint64_t endNs = kStartNs + static_cast<uint64_t>(w.seconds * 1e9);
  QByteArray out = header() + helloFrame(w.pid, w.token, w.protocolVersion);
  out += threadStart(w.pid, kStartNs, 0, "synthetic", "", false, true);
  out += threadStart(w.pid + 1, kStartNs, w.pid, "threadmon", "libthreadmon.so!sampler_main",
                     true, false);
  for (int i = 0; i < w.workers; ++i) {
    const QByteArray name = "worker-" + QByteArray::number(i);
    out += threadStart(w.pid + 2 + static_cast<uint32_t>(i),
                       kStartNs + 1000000ull + startStagger(w, i), w.pid,
                       name.constData(), "synthetic-workload!worker_main+0x24", false, false);
  }
  out += syncObject(kMutexId, THREADMON__SYNC_KIND__KIND_MUTEX, 0x55550000a040ull,
                    "synthetic-workload", "queue_lock");
  out += syncObject(kCondId, THREADMON__SYNC_KIND__KIND_COND, 0x55550000a080ull,
                    "synthetic-workload", "queue_nonempty");
  out += syncObject(kInternalId, THREADMON__SYNC_KIND__KIND_INTERNAL, kInternalAddr,
                    "libc.so.6", "random_lock");
  const int objects = kObjectCount + w.extraObjects;
  for (int k = 0; k < w.extraObjects; ++k) {
    const QByteArray module = "libpart" + QByteArray::number(k % 16) + ".so";
    const QByteArray symbol = "lock_" + QByteArray::number(k);
    out += syncObject(kInternalId + 1 + static_cast<uint32_t>(k), THREADMON__SYNC_KIND__KIND_MUTEX,
                      0x55560000a000ull + 0x40ull * static_cast<uint64_t>(k), module.constData(),
                      symbol.constData());
  }
  out += stackFrame(kPushStack, {"synthetic-workload!push_job+0x31 (queue.c:42)",
                                 "synthetic-workload!worker_main+0x24", "libc.so.6!start_thread+0x97"});
  out += stackFrame(kPopStack, {"synthetic-workload!pop_job+0x12 (queue.c:58)",
                                "synthetic-workload!worker_main+0x40", "libc.so.6!start_thread+0x97"});
  out += stackFrame(kRandomStack, {"synthetic-workload!roll_dice+0x11 (dice.c:7)",
                                   "libc.so.6!rand+0x9", "libc.so.6!__lll_lock_wait_private+0x2e"});
  uint64_t siteCont[2] = {}, siteWait[2] = {};  // the mutex's two call sites

  const std::vector<Event> events = simulate(w, endNs);
  std::vector<Counters> ctr(static_cast<size_t>(w.workers));
  std::vector<uint64_t> syncAcq(static_cast<size_t>(objects) + 1),
      syncCont(static_cast<size_t>(objects) + 1), syncWait(static_cast<size_t>(objects) + 1);
  uint64_t cpuBusy[kCpuCount] = {};
  size_t next = 0;
  uint64_t seq = 0;
  for (uint64_t tick = kStartNs + kTickNs; tick <= endNs; tick += kTickNs) {
    std::vector<uint32_t> trTid, swTid, swCpu, trObj, trHolder, trReleaser;
    std::vector<int64_t> trDelta, swDelta;
    std::vector<Threadmon__ThreadState> trState;
    std::vector<Threadmon__SwitchKind> swKind;
    uint64_t trLast = tick - kTickNs, swLast = tick - kTickNs;
    for (; next < events.size() && events[next].t <= tick; ++next) {
      const Event &e = events[next];
      Counters &c = ctr[e.tid - w.pid - 2];
      if (e.state >= 0) {
        trTid.push_back(e.tid);
        trDelta.push_back(static_cast<int64_t>(e.t - trLast));
        trLast = e.t;
        trState.push_back(static_cast<Threadmon__ThreadState>(e.state));
        trObj.push_back(e.obj);
        // The next worker holds the mutex and releases the waits: a known
        // waiter x holder pattern (worker-i waits for worker-(i+1)).
        const uint32_t other =
            w.pid + 2 + (e.tid - w.pid - 2 + 1) % static_cast<uint32_t>(w.workers);
        trHolder.push_back(e.holder ? e.holder : e.obj == kMutexId ? other : 0);
        trReleaser.push_back(e.state == THREADMON__THREAD_STATE__STATE_RUNNING ? other : 0);
        c.futex = 0;
        if (e.state == THREADMON__THREAD_STATE__STATE_RUNNING) {
          c.ready = true;
          c.lastReady = e.t;
        } else if (e.obj) {
          syncAcq[e.obj] += 1;
          syncCont[e.obj] += 1;
          syncWait[e.obj] += 2000000ull;
          if (e.obj == kMutexId) {
            siteCont[next % 2] += 1;
            siteWait[next % 2] += 2000000ull;
          }
        } else if (e.state == THREADMON__THREAD_STATE__STATE_SLEEPING && w.contention) {
          c.futex = kInternalAddr;  // "asleep" in the library's lock
        }
      }
      if (e.sw >= 0) {
        swTid.push_back(e.tid);
        swDelta.push_back(static_cast<int64_t>(e.t - swLast));
        swLast = e.t;
        swCpu.push_back(e.cpu);
        swKind.push_back(static_cast<Threadmon__SwitchKind>(e.sw));
        if (e.sw == THREADMON__SWITCH_KIND__SWITCH_IN) {
          c.onCpu = true;
          c.lastIn = e.t;
          c.cpu = static_cast<int>(e.cpu);
          if (c.ready) c.runq += e.t - c.lastReady;
          c.ready = false;
        } else {
          c.onCpu = false;
          c.oncpu += e.t - c.lastIn;
          cpuBusy[e.cpu] += e.t - c.lastIn;
          c.vol += 1;
          c.minflt += 3;
          syncAcq[kMutexId] += 4;  // uncontended acquisitions while running
        }
      }
    }
    if (tick == kStartNs + kTickNs) {  // main waits in pthread_join for the workers
      trTid.insert(trTid.begin(), w.pid);
      trDelta.insert(trDelta.begin(), 1000000);
      trState.insert(trState.begin(), THREADMON__THREAD_STATE__STATE_BLOCKED_JOIN);
      trObj.insert(trObj.begin(), 0);
      trHolder.insert(trHolder.begin(), 0);
      trReleaser.insert(trReleaser.begin(), 0);
      if (trDelta.size() > 1) trDelta[1] -= 1000000;
    }
    if (!trTid.empty()) {
      Threadmon__Transitions tr = THREADMON__TRANSITIONS__INIT;
      tr.base_ns = tick - kTickNs;
      tr.n_tid = trTid.size(); tr.tid = trTid.data();
      tr.n_delta_ns = trDelta.size(); tr.delta_ns = trDelta.data();
      tr.n_state = trState.size(); tr.state = trState.data();
      tr.n_object_id = trObj.size(); tr.object_id = trObj.data();
      tr.n_holder_tid = trHolder.size(); tr.holder_tid = trHolder.data();
      tr.n_releaser_tid = trReleaser.size(); tr.releaser_tid = trReleaser.data();
      Threadmon__Frame f = THREADMON__FRAME__INIT;
      f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
      f.transitions = &tr;
      out += packFrame(&f);
    }
    if (!swTid.empty()) {
      Threadmon__CpuSwitches sw = THREADMON__CPU_SWITCHES__INIT;
      sw.base_ns = tick - kTickNs;
      sw.n_tid = swTid.size(); sw.tid = swTid.data();
      sw.n_delta_ns = swDelta.size(); sw.delta_ns = swDelta.data();
      sw.n_cpu = swCpu.size(); sw.cpu = swCpu.data();
      sw.n_kind = swKind.size(); sw.kind = swKind.data();
      Threadmon__Frame f = THREADMON__FRAME__INIT;
      f.body_case = THREADMON__FRAME__BODY_SWITCHES;
      f.switches = &sw;
      out += packFrame(&f);
    }
    std::vector<Threadmon__LwpSample> lwps(ctr.size());
    std::vector<Threadmon__LwpSample *> lwpPtrs;
    for (size_t i = 0; i < ctr.size(); ++i) {
      Threadmon__LwpSample &l = lwps[i];
      l = THREADMON__LWP_SAMPLE__INIT;
      const uint64_t on = ctr[i].oncpu + (ctr[i].onCpu ? tick - ctr[i].lastIn : 0);
      l.tid = w.pid + 2 + static_cast<uint32_t>(i);
      l.user_ns = on / 10 * 8;
      l.system_ns = on / 10 * 2;
      l.oncpu_ns = on;
      l.runqueue_ns = ctr[i].runq;
      l.vol_ctxsw = ctr[i].vol;
      l.invol_ctxsw = ctr[i].vol / 4;
      l.minflt = ctr[i].minflt;
      l.cpu = ctr[i].cpu;
      l.kstate = ctr[i].onCpu ? 'R' : 'S';
      l.futex_addr = ctr[i].futex;
      lwpPtrs.push_back(&l);
    }
    Threadmon__CpuSample cpus[kCpuCount];
    Threadmon__CpuSample *cpuPtrs[kCpuCount];
    const uint64_t elapsed = tick - kStartNs;
    for (int c = 0; c < kCpuCount; ++c) {
      cpus[c] = THREADMON__CPU_SAMPLE__INIT;
      const uint64_t busy = std::min(cpuBusy[c], elapsed);
      cpus[c].cpu = static_cast<uint32_t>(c);
      cpus[c].user_ns = busy / 10 * 8;
      cpus[c].system_ns = busy / 10 * 2;
      cpus[c].iowait_ns = (elapsed - busy) / 20;
      cpus[c].idle_ns = elapsed - busy - cpus[c].iowait_ns;
      cpuPtrs[c] = &cpus[c];
    }
    std::vector<Threadmon__SyncStats> stats(static_cast<size_t>(objects));
    std::vector<Threadmon__SyncStats *> statPtrs(static_cast<size_t>(objects));
    for (uint32_t o = 0; o < static_cast<uint32_t>(objects); ++o) {
      stats[o] = THREADMON__SYNC_STATS__INIT;
      stats[o].id = o + 1;
      stats[o].acquisitions = syncAcq[o + 1] + (o + 1 == kInternalId ? seq : 0);
      stats[o].contentions = syncCont[o + 1];
      stats[o].wait_ns = syncWait[o + 1];
      stats[o].max_wait_ns = syncCont[o + 1] ? 4000000ull : 0;
      stats[o].hold_ns = syncAcq[o + 1] * 50000ull;
      stats[o].wait_samples = o + 1 == kInternalId ? seq / 5 : 0;
      statPtrs[o] = &stats[o];
    }
    Threadmon__ProbeStats ps = THREADMON__PROBE_STATS__INIT;
    ps.sampler_cpu_ns = seq * 20000ull;
    ps.threads_tracked = static_cast<uint32_t>(threadCount(w));
    Threadmon__Tick t = THREADMON__TICK__INIT;
    t.seq = ++seq;
    t.time_ns = tick;
    t.n_lwps = lwpPtrs.size(); t.lwps = lwpPtrs.data();
    t.n_cpus = kCpuCount; t.cpus = cpuPtrs;
    t.n_sync = statPtrs.size(); t.sync = statPtrs.data();
    t.probe = &ps;
    Threadmon__SiteStats sites[3];
    Threadmon__SiteStats *sitePtrs[3];
    for (int k = 0; k < 3; ++k) {
      sites[k] = THREADMON__SITE_STATS__INIT;
      sites[k].object_id = k < 2 ? kMutexId : kInternalId;
      sites[k].stack_id = k == 0 ? kPushStack : k == 1 ? kPopStack : kRandomStack;
      sites[k].contentions = k < 2 ? siteCont[k] : seq / 5;
      sites[k].wait_ns = k < 2 ? siteWait[k] : seq / 5 * kTickNs;
      sitePtrs[k] = &sites[k];
    }
    t.n_sites = 3;
    t.sites = sitePtrs;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_TICK;
    f.tick = &t;
    out += packFrame(&f);
    if (!w.notice.isEmpty() && tick == kStartNs + (endNs - kStartNs) / kTickNs / 2 * kTickNs)
      out += noticeFrame(tick, w.notice);
  }
  for (int i = 0; i < w.workers; ++i) {
    Threadmon__ThreadEnd te = THREADMON__THREAD_END__INIT;
    te.tid = w.pid + 2 + static_cast<uint32_t>(i);
    te.time_ns = endNs - 5000000ull;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_THREAD_END;
    f.thread_end = &te;
    out += packFrame(&f);
  }
  if (w.goodbye) {
    Threadmon__Goodbye g = THREADMON__GOODBYE__INIT;
    g.time_ns = endNs;
    g.reason = THREADMON__END_REASON__END_EXIT;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_GOODBYE;
    f.goodbye = &g;
    out += packFrame(&f);
  }
  return out;
}

Deadlock deadlockStream(bool resolves) {
  Deadlock d;
  const uint32_t pid = 5150;
  d.left = pid + 2;
  d.right = pid + 3;
  d.lockA = 11;
  d.lockB = 12;
  const uint64_t ms = 1000000ull;
  const uint64_t endNs = kStartNs + 1500 * ms;
  QByteArray out = header() + helloFrame(pid, QByteArray());
  out += threadStart(pid, kStartNs, 0, "bank", "", false, true);
  out += threadStart(pid + 1, kStartNs, pid, "threadmon", "libthreadmon.so!sampler_main", true, false);
  out += threadStart(d.left, kStartNs + 1 * ms, pid, "left", "bank!teller+0x10", false, false);
  out += threadStart(d.right, kStartNs + 1 * ms, pid, "right", "bank!teller+0x10", false, false);
  out += syncObject(d.lockA, THREADMON__SYNC_KIND__KIND_MUTEX, 0x55550000b000ull, "bank", "lock_a");
  out += syncObject(d.lockB, THREADMON__SYNC_KIND__KIND_MUTEX, 0x55550000b040ull, "bank", "lock_b");
  out += stackFrame(21, {"bank!transfer+0x20 (bank.c:17)", "bank!teller+0x44", "libc.so.6!start_thread+0x97"});
  out += stackFrame(22, {"bank!audit+0x18 (bank.c:33)", "bank!teller+0x58", "libc.so.6!start_thread+0x97"});
  struct Tr {
    uint64_t t;
    uint32_t tid;
    Threadmon__ThreadState state;
    uint32_t obj, holder, releaser;
  };
  std::vector<Tr> trs = {
      {kStartNs + 2 * ms, d.left, THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, 0},
      {kStartNs + 2 * ms, d.right, THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, 0},
      {kStartNs + 2 * ms, pid, THREADMON__THREAD_STATE__STATE_BLOCKED_JOIN, 0, 0, 0},
      // left holds lock_a and wants lock_b; right holds lock_b and wants lock_a.
      {kStartNs + 300 * ms, d.left, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, d.lockB, d.right, 0},
      {kStartNs + 310 * ms, d.right, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, d.lockA, d.left, 0}};
  if (resolves) {
    // right's timed lock gives up, it unlocks lock_b, left gets it.
    trs.push_back({kStartNs + 1000 * ms, d.right, THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, 0});
    trs.push_back({kStartNs + 1001 * ms, d.left, THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, d.right});
  }
  size_t next = 0;
  uint64_t seq = 0;
  for (uint64_t tick = kStartNs + kTickNs; tick <= endNs; tick += kTickNs) {
    std::vector<uint32_t> tid, obj, holder, releaser;
    std::vector<int64_t> delta;
    std::vector<Threadmon__ThreadState> state;
    uint64_t last = tick - kTickNs;
    for (; next < trs.size() && trs[next].t <= tick; ++next) {
      const Tr &e = trs[next];
      tid.push_back(e.tid);
      delta.push_back(static_cast<int64_t>(e.t - last));
      last = e.t;
      state.push_back(e.state);
      obj.push_back(e.obj);
      holder.push_back(e.holder);
      releaser.push_back(e.releaser);
    }
    if (!tid.empty()) {
      Threadmon__Transitions tr = THREADMON__TRANSITIONS__INIT;
      tr.base_ns = tick - kTickNs;
      tr.n_tid = tid.size(); tr.tid = tid.data();
      tr.n_delta_ns = delta.size(); tr.delta_ns = delta.data();
      tr.n_state = state.size(); tr.state = state.data();
      tr.n_object_id = obj.size(); tr.object_id = obj.data();
      tr.n_holder_tid = holder.size(); tr.holder_tid = holder.data();
      tr.n_releaser_tid = releaser.size(); tr.releaser_tid = releaser.data();
      Threadmon__Frame f = THREADMON__FRAME__INIT;
      f.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
      f.transitions = &tr;
      out += packFrame(&f);
    }
    const bool stuck = tick >= kStartNs + 300 * ms && (!resolves || tick < kStartNs + 1000 * ms);
    Threadmon__LwpSample lwps[2];
    Threadmon__LwpSample *lwpPtrs[2];
    for (int i = 0; i < 2; ++i) {
      lwps[i] = THREADMON__LWP_SAMPLE__INIT;
      const uint64_t ran = std::min(tick, kStartNs + 300 * ms) - kStartNs +
                           (resolves && tick > kStartNs + 1000 * ms ? tick - kStartNs - 1000 * ms : 0);
      lwps[i].tid = i == 0 ? d.left : d.right;
      lwps[i].user_ns = ran / 2;  // two threads share two CPUs half the time
      lwps[i].oncpu_ns = ran / 2;
      lwps[i].cpu = static_cast<uint32_t>(i);
      lwps[i].kstate = stuck ? 'S' : 'R';
      lwpPtrs[i] = &lwps[i];
    }
    Threadmon__SyncStats stats[2];
    Threadmon__SyncStats *statPtrs[2];
    Threadmon__SiteStats sites[2];
    Threadmon__SiteStats *sitePtrs[2];
    const bool blocked = tick >= kStartNs + 310 * ms;
    for (int i = 0; i < 2; ++i) {
      stats[i] = THREADMON__SYNC_STATS__INIT;
      stats[i].id = i == 0 ? d.lockA : d.lockB;
      stats[i].acquisitions = 1000 + (blocked ? 1 : 0);
      stats[i].contentions = blocked ? 1 : 0;
      statPtrs[i] = &stats[i];
      sites[i] = THREADMON__SITE_STATS__INIT;
      sites[i].object_id = stats[i].id;
      sites[i].stack_id = i == 0 ? 21 : 22;
      sites[i].contentions = blocked ? 1 : 0;
      sitePtrs[i] = &sites[i];
    }
    Threadmon__Tick t = THREADMON__TICK__INIT;
    t.seq = ++seq;
    t.time_ns = tick;
    t.n_lwps = 2; t.lwps = lwpPtrs;
    t.n_sync = 2; t.sync = statPtrs;
    t.n_sites = blocked ? 2 : 0; t.sites = sitePtrs;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_TICK;
    f.tick = &t;
    out += packFrame(&f);
    if (tick == kStartNs + 450 * ms) d.formedAt = int(out.size());
  }
  if (resolves) {
    Threadmon__Goodbye g = THREADMON__GOODBYE__INIT;
    g.time_ns = endNs;
    g.reason = THREADMON__END_REASON__END_EXIT;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_GOODBYE;
    f.goodbye = &g;
    out += packFrame(&f);
  }
  d.bytes = out;
  return d;
}

}  // namespace synth
