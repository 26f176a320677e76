#include "busy_stream.h"

#include <algorithm>

#include "test_ui_synth.h"
#include "threadmon.pb-c.h"

namespace busy {

namespace {
constexpr uint32_t kPid = 5000;
constexpr uint64_t kStartNs = 1'000'000'000;
constexpr uint64_t kTickNs = 10'000'000;

QByteArray pack(Threadmon__Frame *f) {
  QByteArray payload(qsizetype(threadmon__frame__get_packed_size(f)), '\0');
  threadmon__frame__pack(f, reinterpret_cast<uint8_t *>(payload.data()));
  return synth::framed(payload);
}
}  // namespace

Stream::Stream(int threads) : threads_(threads), t_(size_t(threads)) {}

uint32_t Stream::next(uint32_t n) {
  rng_ = rng_ * 1103515245u + 12345u;
  return (rng_ >> 8) % n;
}

QByteArray Stream::start() {
  QByteArray out = synth::header() + synth::helloFrame(kPid, QByteArray());
  for (int i = 0; i < threads_; ++i) {
    Threadmon__ThreadStart s = THREADMON__THREAD_START__INIT;
    s.tid = kPid + 2 + uint32_t(i);
    s.time_ns = kStartNs;
    s.creator_tid = kPid;
    const QByteArray name = "busy-" + QByteArray::number(i);
    s.name = const_cast<char *>(name.constData());
    s.start_routine = const_cast<char *>("tm-bench-swarm!busy_main");
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_THREAD_START;
    f.thread_start = &s;
    out += pack(&f);
  }
  for (uint32_t m = 0; m < 4; ++m) {
    Threadmon__SyncObject o = THREADMON__SYNC_OBJECT__INIT;
    o.id = m + 1;
    o.kind = THREADMON__SYNC_KIND__KIND_MUTEX;
    o.address = 0x555500001000ull + 0x40 * m;
    o.module = const_cast<char *>("tm-bench-swarm");
    o.symbol = const_cast<char *>("busy_mutexes");
    o.first_seen_ns = kStartNs;
    Threadmon__Frame f = THREADMON__FRAME__INIT;
    f.body_case = THREADMON__FRAME__BODY_SYNC_OBJECT;
    f.sync_object = &o;
    out += pack(&f);
  }
  return out;
}

QByteArray Stream::nextTick() {
  const uint64_t base = kStartNs + tick_ * kTickNs, end = base + kTickNs;
  ++tick_;
  // Per thread: run 2-5 ms; maybe wait 1-3 ms for a mutex; nap 1 ms; run on.
  std::vector<uint32_t> trTid, trObj, trHolder, trReleaser, swTid, swCpu;
  std::vector<int64_t> trDelta, swDelta;
  std::vector<Threadmon__ThreadState> trState;
  std::vector<Threadmon__SwitchKind> swKind;
  uint64_t trLast = base, swLast = base;
  for (int i = 0; i < threads_; ++i) {
    const uint32_t tid = kPid + 2 + uint32_t(i);
    const uint32_t cpu = uint32_t(i) % 2;
    Thread &th = t_[size_t(i)];
    // Each thread's changes fall in its own slice of the tick, so the
    // batch stays in time order.
    const uint64_t slice = kTickNs / uint64_t(threads_);
    uint64_t t = base + slice * uint64_t(i);
    const uint64_t run = slice / 2, nap = slice / 4;
    auto tr = [&](uint64_t at, Threadmon__ThreadState s, uint32_t obj, uint32_t holder) {
      trTid.push_back(tid);
      trDelta.push_back(int64_t(at - trLast));
      trLast = at;
      trState.push_back(s);
      trObj.push_back(obj);
      trHolder.push_back(holder);
      trReleaser.push_back(s == THREADMON__THREAD_STATE__STATE_RUNNING && obj == 0 && holder ? holder : 0);
    };
    auto sw = [&](uint64_t at, Threadmon__SwitchKind k) {
      swTid.push_back(tid);
      swDelta.push_back(int64_t(at - swLast));
      swLast = at;
      swCpu.push_back(cpu);
      swKind.push_back(k);
    };
    t += run;
    const uint32_t m = next(4);
    mutexAcq_[m] += 50;
    th.acq += 50;
    if (next(4) == 0) {  // contended
      const uint32_t holder = kPid + 2 + next(uint32_t(threads_));
      tr(t, THREADMON__THREAD_STATE__STATE_BLOCKED_MUTEX, m + 1, holder);
      sw(t, THREADMON__SWITCH_KIND__SWITCH_OUT);
      mutexCont_[m] += 1;
      mutexWait_[m] += nap;
      t += nap;
      tr(t, THREADMON__THREAD_STATE__STATE_RUNNING, 0, holder);
      sw(t, THREADMON__SWITCH_KIND__SWITCH_IN);
      th.vol++;
    }
    tr(t, THREADMON__THREAD_STATE__STATE_SLEEPING, 0, 0);
    sw(t, THREADMON__SWITCH_KIND__SWITCH_OUT);
    t += nap;
    tr(t, THREADMON__THREAD_STATE__STATE_RUNNING, 0, 0);
    sw(t, THREADMON__SWITCH_KIND__SWITCH_IN);
    th.vol++;
    th.oncpu += kTickNs - 2 * nap;
    th.runq += nap / 4;
    th.minflt += 1;
    cpuBusy_[cpu] += kTickNs - 2 * nap;
  }
  QByteArray out;
  Threadmon__Transitions trs = THREADMON__TRANSITIONS__INIT;
  trs.base_ns = base;
  trs.n_tid = trTid.size(); trs.tid = trTid.data();
  trs.n_delta_ns = trDelta.size(); trs.delta_ns = trDelta.data();
  trs.n_state = trState.size(); trs.state = trState.data();
  trs.n_object_id = trObj.size(); trs.object_id = trObj.data();
  trs.n_holder_tid = trHolder.size(); trs.holder_tid = trHolder.data();
  trs.n_releaser_tid = trReleaser.size(); trs.releaser_tid = trReleaser.data();
  Threadmon__Frame f1 = THREADMON__FRAME__INIT;
  f1.body_case = THREADMON__FRAME__BODY_TRANSITIONS;
  f1.transitions = &trs;
  out += pack(&f1);
  Threadmon__CpuSwitches sws = THREADMON__CPU_SWITCHES__INIT;
  sws.base_ns = base;
  sws.n_tid = swTid.size(); sws.tid = swTid.data();
  sws.n_delta_ns = swDelta.size(); sws.delta_ns = swDelta.data();
  sws.n_cpu = swCpu.size(); sws.cpu = swCpu.data();
  sws.n_kind = swKind.size(); sws.kind = swKind.data();
  Threadmon__Frame f2 = THREADMON__FRAME__INIT;
  f2.body_case = THREADMON__FRAME__BODY_SWITCHES;
  f2.switches = &sws;
  out += pack(&f2);

  std::vector<Threadmon__LwpSample> lwps(static_cast<size_t>(threads_));
  std::vector<Threadmon__LwpSample *> lwpPtrs;
  for (int i = 0; i < threads_; ++i) {
    Threadmon__LwpSample &l = lwps[size_t(i)];
    const Thread &th = t_[size_t(i)];
    l = THREADMON__LWP_SAMPLE__INIT;
    l.tid = kPid + 2 + uint32_t(i);
    l.user_ns = th.oncpu / 10 * 9;
    l.system_ns = th.oncpu / 10;
    l.oncpu_ns = th.oncpu;
    l.runqueue_ns = th.runq;
    l.vol_ctxsw = th.vol;
    l.invol_ctxsw = th.vol / 8;
    l.minflt = th.minflt;
    l.cpu = i % 2;
    l.kstate = 'R';
    l.read_ns = end;
    lwpPtrs.push_back(&l);
  }
  Threadmon__CpuSample cpus[2];
  Threadmon__CpuSample *cpuPtrs[2];
  const uint64_t elapsed = end - kStartNs;
  for (int c = 0; c < 2; ++c) {
    cpus[c] = THREADMON__CPU_SAMPLE__INIT;
    const uint64_t b = std::min(cpuBusy_[c], elapsed);
    cpus[c].cpu = uint32_t(c);
    cpus[c].user_ns = b / 10 * 9;
    cpus[c].system_ns = b / 10;
    cpus[c].idle_ns = elapsed - b;
    cpuPtrs[c] = &cpus[c];
  }
  Threadmon__SyncStats stats[4];
  Threadmon__SyncStats *statPtrs[4];
  for (int m = 0; m < 4; ++m) {
    stats[m] = THREADMON__SYNC_STATS__INIT;
    stats[m].id = uint32_t(m) + 1;
    stats[m].acquisitions = mutexAcq_[m];
    stats[m].contentions = mutexCont_[m];
    stats[m].wait_ns = mutexWait_[m];
    stats[m].max_wait_ns = mutexCont_[m] ? kTickNs / 4 : 0;
    stats[m].hold_ns = mutexAcq_[m] * 1000;
    statPtrs[m] = &stats[m];
  }
  Threadmon__ProbeStats ps = THREADMON__PROBE_STATS__INIT;
  ps.threads_tracked = uint32_t(threads_);
  Threadmon__Tick t = THREADMON__TICK__INIT;
  t.seq = tick_;
  t.time_ns = end;
  t.n_lwps = lwpPtrs.size(); t.lwps = lwpPtrs.data();
  t.n_cpus = 2; t.cpus = cpuPtrs;
  t.n_sync = 4; t.sync = statPtrs;
  t.probe = &ps;
  Threadmon__Frame f3 = THREADMON__FRAME__INIT;
  f3.body_case = THREADMON__FRAME__BODY_TICK;
  f3.tick = &t;
  out += pack(&f3);
  return out;
}

}  // namespace busy
