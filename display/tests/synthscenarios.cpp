#include "synthscenarios.h"

#include <algorithm>
#include <vector>

namespace synth {

using tmtest::kMs;
using tmtest::StreamBuilder;

namespace {

constexpr int64_t kStartNs = 1000000000;  // monotonic time of the Hello
constexpr int64_t kTickNs = 10000000;     // 10 ms
constexpr uint32_t kMutexId = 1, kCondId = 2, kInternalId = 3;
constexpr uint64_t kInternalAddr = 0x7f0000001000ull;
constexpr uint32_t kPushStack = 1, kPopStack = 2, kRandomStack = 3;

struct Lcg {  // deterministic, so tests see the same stream every run
  uint64_t s = 88172645463325252ull;
  uint32_t next(uint32_t n) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>((s >> 33) % n);
  }
};

struct Event {
  int64_t t;
  uint32_t tid;
  int state;  // ThreadState, or -1 for a switch only
  uint32_t obj;
  int sw;  // SwitchKind, or -1
  uint32_t cpu;
  uint32_t holder = 0;  // extra objects: the worker holding it (else the next worker)
};

struct Counters {
  uint64_t oncpu = 0, runq = 0, vol = 0, invol = 0, minflt = 0;
  int64_t lastIn = 0, lastReady = 0;
  bool onCpu = false, ready = false;
  int cpu = 0;
  uint64_t futex = 0;  // hidden-lock word while "sleeping" in it
};

tmtest::Hello workloadHello(uint32_t pid, const QByteArray &token, uint32_t protocolVersion) {
  tmtest::Hello h;
  h.protocolVersion = protocolVersion;
  h.probeVersion = "synthetic";
  h.pid = pid;
  h.exe = "/usr/bin/synthetic-workload";
  h.argv = {};
  h.host = "testhost";
  h.kernel = "6.1.0";
  h.cpuCount = kCpuCount;
  h.tickNs = kTickNs;
  h.sources = {};
  h.token = token;
  h.startNs = kStartNs;
  h.startRealtimeNs = 1700000000000000000ull;
  h.probeTid = pid + 1;
  h.sessionId = 0x5eed;
  return h;
}

// Workers start 0.3 ms apart; past 1,000 of them closer, so that all start
// within the first 0.3 s.
int64_t startStagger(const Workload &w, int i) {
  const int64_t step = w.workers > 1000 ? 300000 * 1000 / w.workers : 300000;
  return i * step;
}

// Worker life: run, then block on the mutex (most often), wait on the
// condition variable, or sleep; the gap between becoming RUNNING and being
// switched in is run-queue time.
std::vector<Event> simulate(const Workload &w, int64_t endNs) {
  // Without contention the workers only run and sleep (a clean program).
  std::vector<Event> ev;
  Lcg rng;
  Lcg spread;  // its own sequence, so the streams without extra objects stay as they were
  spread.s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < w.workers; ++i) {
    const uint32_t tid = w.pid + 2 + static_cast<uint32_t>(i);
    int64_t t = kStartNs + 2000000 + startStagger(w, i);
    ev.push_back({t, tid, THREADMON__THREAD_STATE__STATE_RUNNING, 0, -1, 0});
    while (t < endNs - 20000000) {
      const int64_t queued = 100000 * rng.next(20);
      const uint32_t cpu = rng.next(kCpuCount);
      ev.push_back({t + queued, tid, -1, 0, THREADMON__SWITCH_KIND__SWITCH_IN, cpu});
      t += queued + 1000000 * (2 + rng.next(7));
      const uint32_t pick = rng.next(10);
      int state = THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX;
      uint32_t obj = kMutexId;
      if (pick >= 7) {
        state = THREADMON__THREAD_STATE__STATE_BLOCKED_COND;
        obj = kCondId;
      }
      if (pick == 9 || !w.contention) {
        state = THREADMON__THREAD_STATE__STATE_SLEEPING;
        obj = 0;
      }
      uint32_t holder = 0;
      if (obj == kMutexId && w.extraObjects > 0 && spread.next(4) != 0) {
        obj = kInternalId + 1 + spread.next(static_cast<uint32_t>(w.extraObjects));
        holder = w.pid + 2 + spread.next(static_cast<uint32_t>(w.workers));
      }
      ev.push_back({t, tid, state, obj, THREADMON__SWITCH_KIND__SWITCH_OUT, cpu, holder});
      // Mutex waits are long: the workers serialise on it (a known finding).
      t += 1000000 * (obj == kMutexId || holder ? 4 + rng.next(8) : 1 + rng.next(4));
      ev.push_back({t, tid, THREADMON__THREAD_STATE__STATE_RUNNING, 0, -1, 0});
    }
    ev.push_back({t + 1000000, tid, THREADMON__THREAD_STATE__STATE_EXITED, 0, -1, 0});
  }
  std::stable_sort(ev.begin(), ev.end(), [](const Event &a, const Event &b) { return a.t < b.t; });
  return ev;
}

}  // namespace

QByteArray helloFrame(uint32_t pid, const QByteArray &token, uint32_t protocolVersion) {
  QByteArray out;
  StreamBuilder(tmtest::intoBytes(&out)).hello(workloadHello(pid, token, protocolVersion));
  return out;
}

QByteArray noticeFrame(uint64_t timeNs, const QByteArray &text) {
  QByteArray out;
  StreamBuilder(tmtest::intoBytes(&out)).notice(int64_t(timeNs), text.constData());
  return out;
}

int threadCount(const Workload &w) {
  return w.workers + 2;
}

QByteArray stream(const Workload &w) {
  const int64_t endNs = kStartNs + static_cast<int64_t>(w.seconds * 1e9);
  QByteArray out = tmtest::header();
  StreamBuilder b(tmtest::intoBytes(&out));
  b.hello(workloadHello(w.pid, w.token, w.protocolVersion));
  b.threadStart(w.pid, kStartNs, "synthetic", "", false, true);
  b.threadStart(w.pid + 1, kStartNs, "threadmon", "libthreadmon.so!sampler_main", true, false,
                w.pid);
  for (int i = 0; i < w.workers; ++i) {
    const QByteArray name = "worker-" + QByteArray::number(i);
    b.threadStart(w.pid + 2 + static_cast<uint32_t>(i), kStartNs + 1000000 + startStagger(w, i),
                  name.constData(), "synthetic-workload!worker_main+0x24", false, false, w.pid);
  }
  b.syncObject(kMutexId, THREADMON__SYNC_KIND__KIND_MUTEX, 0x55550000a040ull, "synthetic-workload",
               "queue_lock", nullptr, nullptr, kStartNs);
  b.syncObject(kCondId, THREADMON__SYNC_KIND__KIND_COND, 0x55550000a080ull, "synthetic-workload",
               "queue_nonempty", nullptr, nullptr, kStartNs);
  b.syncObject(kInternalId, THREADMON__SYNC_KIND__KIND_INTERNAL, kInternalAddr, "libc.so.6",
               "random_lock", nullptr, nullptr, kStartNs);
  const int objects = kObjectCount + w.extraObjects;
  for (int k = 0; k < w.extraObjects; ++k) {
    const QByteArray module = "libpart" + QByteArray::number(k % 16) + ".so";
    const QByteArray symbol = "lock_" + QByteArray::number(k);
    b.syncObject(kInternalId + 1 + static_cast<uint32_t>(k), THREADMON__SYNC_KIND__KIND_MUTEX,
                 0x55560000a000ull + 0x40ull * static_cast<uint64_t>(k), module.constData(),
                 symbol.constData(), nullptr, nullptr, kStartNs);
  }
  b.stack(kPushStack, {"synthetic-workload!push_job+0x31 (queue.c:42)",
                       "synthetic-workload!worker_main+0x24", "libc.so.6!start_thread+0x97"});
  b.stack(kPopStack, {"synthetic-workload!pop_job+0x12 (queue.c:58)",
                      "synthetic-workload!worker_main+0x40", "libc.so.6!start_thread+0x97"});
  b.stack(kRandomStack, {"synthetic-workload!roll_dice+0x11 (dice.c:7)", "libc.so.6!rand+0x9",
                         "libc.so.6!__lll_lock_wait_private+0x2e"});
  uint64_t siteCont[2] = {}, siteWait[2] = {};  // the mutex's two call sites

  const std::vector<Event> events = simulate(w, endNs);
  std::vector<Counters> ctr(static_cast<size_t>(w.workers));
  std::vector<uint64_t> syncAcq(static_cast<size_t>(objects) + 1),
      syncCont(static_cast<size_t>(objects) + 1), syncWait(static_cast<size_t>(objects) + 1);
  uint64_t cpuBusy[kCpuCount] = {};
  size_t next = 0;
  uint64_t seq = 0;  // ticks before this one
  std::vector<tmtest::Transition> trs;
  std::vector<tmtest::Switch> sws;
  tmtest::Tick tk;
  for (int64_t tick = kStartNs + kTickNs; tick <= endNs; tick += kTickNs) {
    trs.clear();
    sws.clear();
    if (tick == kStartNs + kTickNs)  // main waits in pthread_join for the workers
      trs.push_back({tick - kTickNs + 1000000, w.pid, THREADMON__THREAD_STATE__STATE_BLOCKED_JOIN});
    for (; next < events.size() && events[next].t <= tick; ++next) {
      const Event &e = events[next];
      Counters &c = ctr[e.tid - w.pid - 2];
      if (e.state >= 0) {
        // The next worker holds the mutex and releases the waits: a known
        // waiter x holder pattern (worker-i waits for worker-(i+1)).
        const uint32_t other =
            w.pid + 2 + (e.tid - w.pid - 2 + 1) % static_cast<uint32_t>(w.workers);
        trs.push_back({e.t, e.tid, static_cast<Threadmon__ThreadState>(e.state), e.obj,
                       e.holder            ? e.holder
                       : e.obj == kMutexId ? other
                                           : 0,
                       e.state == THREADMON__THREAD_STATE__STATE_RUNNING ? other : 0});
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
        sws.push_back({e.t, e.tid, e.cpu, static_cast<Threadmon__SwitchKind>(e.sw)});
        if (e.sw == THREADMON__SWITCH_KIND__SWITCH_IN) {
          c.onCpu = true;
          c.lastIn = e.t;
          c.cpu = static_cast<int>(e.cpu);
          if (c.ready) c.runq += uint64_t(e.t - c.lastReady);
          c.ready = false;
        } else {
          c.onCpu = false;
          c.oncpu += uint64_t(e.t - c.lastIn);
          cpuBusy[e.cpu] += uint64_t(e.t - c.lastIn);
          c.vol += 1;
          c.minflt += 3;
          syncAcq[kMutexId] += 4;  // uncontended acquisitions while running
        }
      }
    }
    b.transitions(tick - kTickNs, trs);
    b.cpuSwitches(tick - kTickNs, sws);

    tk.t = tick;
    tk.lwps.clear();
    for (size_t i = 0; i < ctr.size(); ++i) {
      const Counters &c = ctr[i];
      const uint64_t on = c.oncpu + (c.onCpu ? uint64_t(tick - c.lastIn) : 0);
      tmtest::Lwp l{w.pid + 2 + static_cast<uint32_t>(i), on / 10 * 8, on / 10 * 2, on, c.runq};
      l.vol = c.vol;
      l.invol = c.vol / 4;
      l.minflt = c.minflt;
      l.cpu = c.cpu;
      l.kstate = c.onCpu ? 'R' : 'S';
      l.futex = c.futex;
      tk.lwps.push_back(l);
    }
    tk.cpus.clear();
    const uint64_t elapsed = uint64_t(tick - kStartNs);
    for (uint32_t c = 0; c < kCpuCount; ++c) {
      const uint64_t busy = std::min(cpuBusy[c], elapsed);
      const uint64_t iowait = (elapsed - busy) / 20;
      tk.cpus.push_back(
          {c, busy / 10 * 8, 0, busy / 10 * 2, elapsed - busy - iowait, iowait, 0, 0, 0});
    }
    tk.sync.clear();
    for (uint32_t o = 1; o <= static_cast<uint32_t>(objects); ++o) {
      tk.sync.push_back({o, syncAcq[o] + (o == kInternalId ? seq : 0), syncCont[o], syncWait[o],
                         syncCont[o] ? 4000000ull : 0, syncAcq[o] * 50000ull,
                         o == kInternalId ? seq / 5 : 0});
    }
    tk.samplerCpuNs = seq * 20000ull;
    tk.threadsTracked = static_cast<uint32_t>(threadCount(w));
    ++seq;
    tk.sites = {{kMutexId, kPushStack, siteCont[0], siteWait[0]},
                {kMutexId, kPopStack, siteCont[1], siteWait[1]},
                {kInternalId, kRandomStack, seq / 5, seq / 5 * uint64_t(kTickNs)}};
    b.tick(tk);
    if (!w.notice.isEmpty() && tick == kStartNs + (endNs - kStartNs) / kTickNs / 2 * kTickNs)
      b.notice(tick, w.notice.constData());
  }
  for (int i = 0; i < w.workers; ++i)
    b.threadEnd(w.pid + 2 + static_cast<uint32_t>(i), endNs - 5000000);
  if (w.goodbye) b.goodbye(endNs, 0);
  return out;
}

Deadlock deadlockStream(bool resolves) {
  Deadlock d;
  const uint32_t pid = 5150;
  d.left = pid + 2;
  d.right = pid + 3;
  d.lockA = 11;
  d.lockB = 12;
  const int64_t ms = kMs;
  const int64_t endNs = kStartNs + 1500 * ms;
  QByteArray out = tmtest::header();
  StreamBuilder b(tmtest::intoBytes(&out));
  b.hello(workloadHello(pid, QByteArray(), 1));
  b.threadStart(pid, kStartNs, "bank", "", false, true);
  b.threadStart(pid + 1, kStartNs, "threadmon", "libthreadmon.so!sampler_main", true, false, pid);
  b.threadStart(d.left, kStartNs + 1 * ms, "left", "bank!teller+0x10", false, false, pid);
  b.threadStart(d.right, kStartNs + 1 * ms, "right", "bank!teller+0x10", false, false, pid);
  b.syncObject(d.lockA, THREADMON__SYNC_KIND__KIND_MUTEX, 0x55550000b000ull, "bank", "lock_a",
               nullptr, nullptr, kStartNs);
  b.syncObject(d.lockB, THREADMON__SYNC_KIND__KIND_MUTEX, 0x55550000b040ull, "bank", "lock_b",
               nullptr, nullptr, kStartNs);
  b.stack(21,
          {"bank!transfer+0x20 (bank.c:17)", "bank!teller+0x44", "libc.so.6!start_thread+0x97"});
  b.stack(22, {"bank!audit+0x18 (bank.c:33)", "bank!teller+0x58", "libc.so.6!start_thread+0x97"});
  std::vector<tmtest::Transition> trs = {
      {kStartNs + 2 * ms, d.left, THREADMON__THREAD_STATE__STATE_RUNNING},
      {kStartNs + 2 * ms, d.right, THREADMON__THREAD_STATE__STATE_RUNNING},
      {kStartNs + 2 * ms, pid, THREADMON__THREAD_STATE__STATE_BLOCKED_JOIN},
      // left holds lock_a and wants lock_b; right holds lock_b and wants lock_a.
      {kStartNs + 300 * ms, d.left, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, d.lockB, d.right},
      {kStartNs + 310 * ms, d.right, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, d.lockA,
       d.left}};
  if (resolves) {
    // right's timed lock gives up, it unlocks lock_b, left gets it.
    trs.push_back({kStartNs + 1000 * ms, d.right, THREADMON__THREAD_STATE__STATE_RUNNING});
    trs.push_back(
        {kStartNs + 1001 * ms, d.left, THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0, d.right});
  }
  size_t next = 0;
  for (int64_t tick = kStartNs + kTickNs; tick <= endNs; tick += kTickNs) {
    std::vector<tmtest::Transition> batch;
    for (; next < trs.size() && trs[next].t <= tick; ++next) batch.push_back(trs[next]);
    b.transitions(tick - kTickNs, batch);
    const bool stuck = tick >= kStartNs + 300 * ms && (!resolves || tick < kStartNs + 1000 * ms);
    const bool blocked = tick >= kStartNs + 310 * ms;
    tmtest::Tick tk;
    tk.t = tick;
    for (uint32_t i = 0; i < 2; ++i) {
      const uint64_t ran =
          uint64_t(std::min(tick, kStartNs + 300 * ms) - kStartNs +
                   (resolves && tick > kStartNs + 1000 * ms ? tick - kStartNs - 1000 * ms : 0));
      tmtest::Lwp l{i == 0 ? d.left : d.right, ran / 2, 0, ran / 2,
                    0};  // two threads, two CPUs half the time
      l.cpu = int(i);
      l.kstate = stuck ? 'S' : 'R';
      tk.lwps.push_back(l);
      const uint32_t lock = i == 0 ? d.lockA : d.lockB;
      tk.sync.push_back({lock, 1000u + (blocked ? 1 : 0), blocked ? 1u : 0u, 0, 0, 0});
      if (blocked) tk.sites.push_back({lock, i == 0 ? 21u : 22u, 1, 0});
    }
    b.tick(tk);
    if (tick == kStartNs + 450 * ms) d.formedAt = int(out.size());
  }
  if (resolves) b.goodbye(endNs, 0);
  d.bytes = out;
  return d;
}

StreamBuilder userThreadScenario() {
  using tmtest::Lwp;
  auto at = [](int64_t ms) { return tmtest::kT0 + ms * kMs; };
  StreamBuilder b;
  b.hello(true);
  b.threadStart(102, at(0), "main", "workload!main", false, true);
  b.threadStart(101, at(0), "worker", "workload!worker+0x10");
  b.userThread(1, at(0), 101, "workload!fiber+0x0");
  b.userThread(2, at(0), 101, "workload!other_fiber+0x0");
  b.cpuSwitch(101, at(0), 1, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.cpuSwitch(102, at(0), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.userSwitch(101, at(10), 0, 1);
  b.cpuSwitch(101, at(20), 1, THREADMON__SWITCH_KIND__SWITCH_OUT_PREEMPT);
  b.userSwitch(101, at(30), 1, 2);
  b.cpuSwitch(101, at(40), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.transition(101, at(50), THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, 7);
  b.cpuSwitch(101, at(50), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.userSwitch(101, at(60), 2, 1);
  b.transition(101, at(80), THREADMON__THREAD_STATE__STATE_RUNNING);
  b.cpuSwitch(101, at(80), 0, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.userSwitch(101, at(90), 1, 0, THREADMON__USER_SWITCH_KIND__USER_DONE);
  b.transition(101, at(100), THREADMON__THREAD_STATE__STATE_EXITED);
  b.cpuSwitch(101, at(100), 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.threadEnd(101, at(100));
  const uint64_t clock101[] = {0, 10, 20, 20, 20, 30, 30, 30, 30, 40, 50};
  for (int ms = 10; ms <= 120; ms += 10) {
    std::vector<Lwp> l{Lwp{102, 0, 0, 0, 0, 1, 0, 0, 0, 0, 'S'}};
    if (ms <= 100) l.push_back(Lwp{101, 0, 0, clock101[ms / 10] * kMs, 0, 0, 0, 0, 0, 0, 'R'});
    b.tick(at(ms), l);
  }
  b.goodbye(at(120), 0);
  return b;
}

namespace {
using tmtest::kT0;
// Two LWPs, started at 0, on CPUs 0 and 1 throughout unless told otherwise.
void twoLwps(StreamBuilder &b, uint32_t cpus, int users) {
  b.hello(true, cpus);
  b.threadStart(100, kT0, "main", "workload!main", false, true);
  b.cpuSwitch(100, kT0, 0, THREADMON__SWITCH_KIND__SWITCH_OUT);
  b.threadStart(101, kT0, "lwp-0", "workload!lwp_main");
  b.threadStart(102, kT0, "lwp-1", "workload!lwp_main");
  b.cpuSwitch(101, kT0, 0, THREADMON__SWITCH_KIND__SWITCH_IN);
  b.cpuSwitch(102, kT0, 1, THREADMON__SWITCH_KIND__SWITCH_IN);
  for (int u = 1; u <= users; u++) b.userThread(uint32_t(u), kT0, 100, "workload!worker+0x0");
}
void endLwps(StreamBuilder &b, int64_t end) {
  for (uint32_t tid : {101u, 102u}) {
    b.transition(tid, end, THREADMON__THREAD_STATE__STATE_EXITED);
    b.cpuSwitch(tid, end, tid - 101, THREADMON__SWITCH_KIND__SWITCH_OUT);
    b.threadEnd(tid, end);
  }
  for (int64_t t = kT0 + 10 * kMs; t <= end; t += 10 * kMs) b.tick(t, {});
  b.goodbye(end, 0);
}
}  // namespace

StreamBuilder userSharingScenario(uint32_t cpus) {
  StreamBuilder b;
  twoLwps(b, cpus, 6);
  uint32_t last[2] = {0, 0};
  for (int slice = 0; slice < 60; slice++) {
    for (uint32_t l = 0; l < 2; l++) {
      const uint32_t u = 3 * l + 1 + uint32_t(slice % 3);
      b.userSwitch(101 + l, kT0 + slice * 10 * kMs, last[l], u);
      last[l] = u;
    }
  }
  for (uint32_t l = 0; l < 2; l++)
    b.userSwitch(101 + l, kT0 + 600 * kMs, last[l], 0, THREADMON__USER_SWITCH_KIND__USER_DONE);
  endLwps(b, kT0 + 600 * kMs);
  return b;
}

StreamBuilder userHandoffScenario() {
  StreamBuilder b;
  twoLwps(b, 2, 4);
  constexpr int64_t kUs = 1000;
  for (int period = 0; period < 2000; period++) {
    const int64_t t = kT0 + period * 100 * kUs;
    for (uint32_t l = 0; l < 2; l++) {
      const uint32_t tid = 101 + l, u = 2 * l + 1 + uint32_t(period % 2);
      if (period) {
        b.transition(tid, t, THREADMON__THREAD_STATE__STATE_RUNNING);
        b.cpuSwitch(tid, t, l, THREADMON__SWITCH_KIND__SWITCH_IN);
      }
      b.userSwitch(tid, t, 0, u);
      b.userSwitch(tid, t + 10 * kUs, u, 0);
      b.transition(tid, t + 10 * kUs, THREADMON__THREAD_STATE__STATE_BLOCKED_COND, 9);
      b.cpuSwitch(tid, t + 10 * kUs, l, THREADMON__SWITCH_KIND__SWITCH_OUT);
    }
  }
  const int64_t end = kT0 + 200 * kMs;
  for (uint32_t l = 0; l < 2; l++) {
    b.transition(101 + l, end, THREADMON__THREAD_STATE__STATE_RUNNING);
    b.cpuSwitch(101 + l, end, l, THREADMON__SWITCH_KIND__SWITCH_IN);
    for (uint32_t u = 2 * l + 1; u <= 2 * l + 2; u++) {
      b.userSwitch(101 + l, end, 0, u);
      b.userSwitch(101 + l, end, u, 0, THREADMON__USER_SWITCH_KIND__USER_DONE);
    }
  }
  endLwps(b, end);
  return b;
}

}  // namespace synth
