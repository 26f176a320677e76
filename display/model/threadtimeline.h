// ThreadTimeline: one thread's inputs (interposed transitions, switch
// records, LWP counter samples) and the final state intervals derived from
// them (docs/format.md, "Final states").
//
// Derivation is incremental: settle() extends the intervals up to a horizon
// and, when late data arrived, first cuts them back to the tick where the
// late data starts. Raw transitions and switches are only kept for
// kRawKeepNs behind the horizon; older late arrivals are counted and ignored.
#ifndef THREADMON_THREADTIMELINE_H
#define THREADMON_THREADTIMELINE_H

#include <algorithm>
#include <cstdint>
#include <vector>

#include "checkpoints.h"
#include "counterseries.h"
#include "intervalcode.h"
#include "modeltypes.h"
#include "podvector.h"

namespace tmon {

// LWP counters kept per sample (proto/counters.def's TM_LWP_COUNTER), in
// its order.
enum LwpCounter {
#define TM_LWP_COUNTER(field, number, index, ...) k##index,
#include "counters.def"
  kLwpCounters
};
using LwpSeries = CounterSeries<kLwpCounters>;
// Counters most threads never move (sched_yield calls; perf cycles and
// instructions, recorded only with THREADMON_COUNTERS=1; its TM_LWP_EXTRA):
// a series of their own, with points only where one is non-zero, so that
// they cost nothing to the many threads without them.
enum LwpExtraCounter {
#define TM_LWP_EXTRA(field, number, index, ...) k##index,
#include "counters.def"
  kLwpExtraCounters
};
using LwpExtraSeries = CounterSeries<kLwpExtraCounters>;
// A sample's CPU, state letter and, when its read found it asleep in a
// syscall (LwpSample.asleep_syscall), what that syscall waited for
// (asleep_kind), packed in the point's aux.
// (Inline: the model is built -fPIC, where a function defined out of line
// is never inlined, and these are read for every derived tick.)
uint32_t lwpAux(int cpu, uint32_t kstate, uint32_t asleepSyscall = 0, int asleepKind = 0);
// -1 when unknown.
inline int lwpAuxCpu(uint32_t aux) {
  return int(aux & 0xFFFF) - 1;
}
// 0 when unknown.
inline uint32_t lwpAuxKstate(uint32_t aux) {
  return (aux >> 16) & 0xFF;
}
// AsleepKind; -1 when not seen asleep in a syscall.
inline int lwpAuxAsleepKind(uint32_t aux) {
  return int(aux >> 24) - 1;
}
// Point::extra of a sample at t whose kOncpu was read at readNs
// (LwpSample.read_ns; 0 = not sent, older captures).
int32_t lwpExtra(int64_t t, int64_t readNs);
int64_t lwpReadNs(const LwpSeries::Point &p);  // the tick's time when not sent
bool lwpReadSent(const LwpSeries::Point &p);

// Sorted session tick times; the fallback splits RUNNING time tick by tick.
using TickTimes = std::vector<int64_t>;

class ThreadTimeline {
 public:
  static constexpr int64_t kRawKeepNs = 10'000'000'000;
  static constexpr int kNoCpuCode = 0xFFF;  // an interval's CPU bits when it has none

  ThreadTimeline(uint32_t tid, int64_t firstSeen, int64_t base);

  ThreadInfo info;
  bool baselineZero = false;  // ThreadStart seen: counters were 0 at startNs
  // Counters 0 at this time, no reading since: the start a segment before
  // saw (SessionStore::carryZeroReading), its own start moved by knownFrom.
  int64_t carriedZeroNs = INT64_MIN;
  // When its counters were 0, if no reading since is known to differ: the
  // time its first reading counts from (INT64_MIN: none).
  int64_t countersZeroNs() const { return baselineZero ? info.startNs : carriedZeroNs; }
  // A thread of a process attached to (SOURCE_ATTACH) that existed before
  // the attach: its counters count from its birth, so its times in the
  // session count from its first sample (SessionModel::lwpDelta).
  bool countedFromFirstSample = false;
  // schedstat credits a run-queue wait when it ends (the kernel's
  // sched_info_arrive): a thread waiting at the reading its counters count
  // from brings the part of that wait before the reading into its next one.
  // That part is not the session's (SessionStore::dropWaitBeforeBaseline).
  struct WaitBeforeBaseline {
    int64_t sampleNs = INT64_MIN;       // the reading counted from (none: INT64_MIN)
    int64_t droppedFromNs = INT64_MAX;  // its readings from here on...
    uint64_t runqueueNs = 0;            // ...count this much less run-queue time
  } waitBefore;
  LwpSeries lwp;
  LwpExtraSeries lwpExtra;

  // Inputs, and what became of them: ignored when a duplicate, too late to
  // use, or one too many at one instant (FrameCheck::kMaxSameInstant).
  enum class Added { Yes, Duplicate, Late, Crowded };
  // In order (nearly always), appended here: inline, so a transition folded
  // costs no call (the model is built -fPIC; GCC left it a call in the
  // fold's two loops, whose entry and exit were half its cost).
  [[gnu::always_inline]] Added addTransition(int64_t t, int state, uint32_t object) {
    if (t >= appendFrom_) {
      trans_.push_back(Raw{t, object, uint8_t(state), 0});
      appendFrom_ = t + 1;
      transitionDirty(t);
      return Added::Yes;
    }
    return placeTransition(t, state, object);
  }
  // addTransition's common case in two steps, so that the fold makes no
  // call while it holds a transition's values (SyncActivity::plainAt):
  // appendsPlainly: a transition at t is appended where there is room
  // and changes nothing derived; appendPlain appends it.
  bool appendsPlainly(int64_t t) const {
    return t >= appendFrom_ && !trans_.full() && !(derived_ && t < derivedUntil_);
  }
  void appendPlain(int64_t t, int state, uint32_t object) {
    Raw *const at = trans_.end();
    *at = Raw{t, object, uint8_t(state), 0};
    trans_.setEnd(at + 1);
    appendFrom_ = t + 1;
  }
  // cpu: limits::kMaxCpus and above are unknown.
  Added addSwitch(int64_t t, int kind, uint32_t cpu);
  // The kernel lost switch records after t (of some thread, perhaps this
  // one): from t until its next record, its last one is no longer trusted.
  void addSwitchGap(int64_t t);
  void markDirty(int64_t t) {  // data at or after t changed
    if (derived_ && t < derivedUntil_) dirtyFrom_ = std::min(dirtyFrom_, t);
  }
  // A transition at t: it also changes the stolen share of the ticks of its
  // sample span (clockShare charges program code first), from its start.
  void transitionDirty(int64_t t) {
    if (derived_ && t < derivedUntil_) markDirty(sampleSpanStart(t));
  }
  // An LWP sample was added at a tick; prevTick: the tick before it,
  // prevSample: the thread's sample before it (INT64_MIN: none). A sample
  // added with nothing to re-derive (carried from a window before): prevTick
  // INT64_MIN.
  void sampleAdded(int64_t prevTick, int64_t prevSample);
  void setStart(int64_t t);  // moves the lifetime start (re-derives all; not once evicted)
  int64_t rawFloor() const { return rawFloor_; }

  // Derives intervals up to horizon (the session's newest settled time).
  void settle(const TickTimes &ticks, int64_t horizon);
  int64_t derivedUntil() const { return derived_ ? derivedUntil_ : info.startNs; }

  // Queries over derived data.
  void stateTimes(const TimeRange &r, const TickTimes &ticks, StateTimes *out) const;
  // stateTimes and cpuTimes of one range, in one walk over its intervals.
  void stateAndCpuTimes(const TimeRange &r, const TickTimes &ticks, StateTimes *out,
                        std::vector<int64_t> *perCpu) const;
  void intervals(const TimeRange &r, const TickTimes &ticks, std::vector<StateInterval> *out) const;
  // f(const StateInterval &) for each piece of the intervals in r, clipped
  // to it, in time order, read from the store without a copy: intervals()
  // is these pieces with the adjacent ones of one run (sameRun) merged.
  // Inline, so that f inlines (the model is built -fPIC).
  template <typename F>
  void forEachPiece(const TimeRange &r, const TickTimes &ticks, F &&f) const;
  // Adds on-CPU ns per CPU index into perCpu (grown as needed).
  void cpuTimes(const TimeRange &r, std::vector<int64_t> *perCpu) const;
  TimeRange lifetime() const;  // [start, end or derivedUntil)
  // Where its event ring was full (an UNKNOWN transition to the next one, or
  // the end of its life), overlapping r: the states inside are folded totals.
  void eventGapSpans(const TimeRange &r, std::vector<TimeRange> *out) const;
  size_t bytes() const;

  // Bounded live memory: the intervals before t (a tick time, derived
  // already) leave RAM; what they held stays as the cumulative time per
  // state at t (a checkpoint) and the on-CPU time per CPU, so whole-run
  // totals stay exact and a window's edges in evicted time are exact at
  // checkpoints, interpolated between them. Records before t become late.
  void evictBefore(int64_t t);
  // Where full detail starts (the newest checkpoint), INT64_MIN if none.
  int64_t evictedUntil() const { return cuts_.last(); }

 private:
  // 12 bytes: start (48 bits, ns after base_), state code (4 bits), CPU (12
  // bits), payload (object id, or the fractions of a mixed interval).
  struct Packed {
    uint32_t lo, hi, payload;
  };
  // 16 bytes: a transition's holder is the waits' (SyncActivity), not kept
  // here, where nothing read it (24 bytes with it: a third more to store
  // and to copy as the records grow).
  struct Raw {
    int64_t t;
    uint32_t object;
    uint8_t state;  // threadmon.ThreadState, or SwitchKind for switches
    uint16_t cpu;
  };
  static_assert(sizeof(Raw) == 16, "a record in 16 bytes");

  // Where a record at t goes in v (after those at t), or why it does not.
  template <typename Same>
  static Added placeAt(const PodVector<Raw> &v, int64_t t, Same &&same, const Raw **at);
  Added placeTransition(int64_t t, int state, uint32_t object);
  // Defined here, so that they inline (the model is built -fPIC): every
  // derivation and query reads them per interval.
  int64_t startOf(const Packed &p) const {
    return base_ + (int64_t(p.hi & 0xFFFF) << 32 | int64_t(p.lo));
  }
  static unsigned codeOf(const Packed &p) { return (p.hi >> 16) & 0xF; }
  static int cpuOf(const Packed &p) {
    const int c = int(p.hi >> 20);
    return c == kNoCpuCode ? -1 : c;
  }
  void push(int64_t t, unsigned code, int cpu, uint32_t payload);
  // An interval's code and CPU bits (those of Packed::hi above its start).
  static uint32_t bitsOf(unsigned code, int cpu) {
    const unsigned c = cpu < 0 || cpu >= kNoCpuCode ? unsigned(kNoCpuCode) : unsigned(cpu);
    return code << 16 | c << 20;
  }
  void pushBits(int64_t t, uint32_t bits, uint32_t payload);
  void truncate(int64_t t);
  void sweep(const TickTimes &ticks, int64_t from, int64_t to);
  // At least as many intervals as sweep(ticks, from, to) pushes.
  size_t sweepBound(const TickTimes &ticks, int64_t from, int64_t to) const;
  // Where in sw_ and trans_ a search for a time should start: near these
  // indices (SIZE_MAX: the ends, where new records go).
  struct RawNear {
    size_t sw, trans;
  };
  // On-CPU ns by switch records in [t0,t1), -1 when the records do not say;
  // programCodeOnly: only while the thread ran its own code (state RUNNING).
  int64_t recordsOnCpu(int64_t t0, int64_t t1, bool programCodeOnly = false,
                       RawNear near = RawNear{SIZE_MAX, SIZE_MAX}) const;
  // For the tick starting at a: of the on-CPU time by records in the span
  // between the samples around it, the share the thread's CPU clock ran, in
  // 1/kFracOne (the rest was stolen).
  uint32_t clockShare(int64_t a, RawNear near) const;
  bool bornWaiting() const;  // runnable from its start to its first record
  // Where the span between two sample reads that holds t begins: the
  // newest sample read at or before t (the start, one counted from zero).
  int64_t sampleSpanStart(int64_t t) const;
  // Where the off-CPU span going on just before t began (its switch-out
  // record), else t: re-derived when what ends it comes (spanEnd).
  int64_t sleepStartBefore(int64_t t) const;
  // The newest sample at or before p that found the thread off a CPU in a
  // syscall or state (offCpuCode), looking back kSaidSpanNs at most. Each
  // sweep asks it once, nearly always of a sample newer than the last one
  // asked: what the walk before learnt (saidLo_, saidHi_) keeps it short
  // (an always busy thread's walk was 100 samples, every 50 ms live).
  const LwpSeries::Point *lastSaid(const LwpSeries::Point *p);
  // How an off-CPU span [out, in) of a thread running its own code ends,
  // from the counters of the samples around its switch-in; 0s when not known:
  // - waited: woken and waiting for a CPU (a voluntary span's only: asleep in
  //   a call no wrapper sees), from the run-queue counter;
  // - switching: on a CPU by the thread's clock before the switch-in record.
  //   The kernel charges a thread its clock from when it is picked, and the
  //   record is written after the context switch: a few microseconds per
  //   switch, which a thread in a storm of futex waits does 10,000 times a
  //   second (mutex_loop's rand() loopers: 7% of their CPU time, read as
  //   sleep on a quiet machine).
  struct WakeSplit {
    int64_t a = INT64_MIN, b = INT64_MIN;  // the sample reads it was made for
    double share = 0;                      // of each voluntary span ending in (a, b]
    int64_t switching = 0;                 // per switch-in in (a, b]
  };
  struct SpanEnd {
    int64_t waited = 0, switching = 0;
  };
  SpanEnd spanEnd(int64_t out, int64_t in, bool voluntary, WakeSplit *cache) const;
  void trimRaw(int64_t floor);
  // stateTimes/cpuTimes over the held intervals only, [t0, t1) inside the lifetime.
  void detailTimes(int64_t t0, int64_t t1, StateTimes *out) const;
  void detailCpuTimes(int64_t t0, int64_t t1, std::vector<int64_t> *perCpu) const;
  size_t firstOverlapping(int64_t t) const;
  // f(interval, start, end) for each held interval from the one going on at
  // t, in order, until f returns false.
  template <typename F>
  void walkFrom(int64_t t, F &&f) const;

  int64_t base_;
  PodVector<Packed> iv_;
  bool derived_ = false;
  bool derivedBaseline_ = false;  // baselineZero when last derived
  int64_t derivedUntil_ = 0;
  int64_t dirtyFrom_ = INT64_MAX;
  int64_t rawFloor_ = INT64_MIN;  // raw data before this was dropped
  // A transition at or after this is the newest and in time: appended
  // (rawFloor_, or past the newest's time). One compare for the three
  // (the floor, an empty vector, its last record) that addTransition made.
  int64_t appendFrom_ = INT64_MIN;
  PodVector<Raw> trans_;
  PodVector<Raw> sw_;
  // The RUNNING time splits of the newest ticks derived that had any (a
  // sweep re-derives from a tick; a partial tail tick without a sample, at
  // the thread's or the session's end, continues the split before it).
  // A few: late data that takes the splits of the last ones away leaves
  // the one before as the sweep from the start would find it.
  struct TickSplit {
    int64_t tick;
    uint32_t on, rq;
  };
  static constexpr size_t kSplitsKept = 4;
  std::vector<TickSplit> splits_;
  // No sample in (saidLo_, saidHi_] found the thread off a CPU (lastSaid);
  // forgotten when a sample comes inside.
  int64_t saidLo_ = INT64_MIN, saidHi_ = INT64_MIN;
  bool anyIdleRead_ = false;  // some sample found it waiting for work (sweep's saidAfter)
  Checkpoints<kFinalStateCount> cuts_;  // time per state
  std::vector<int64_t> cpuEvicted_;     // on-CPU ns per CPU before the newest cut
};

template <typename F>
void ThreadTimeline::walkFrom(int64_t t, F &&f) const {
  // Each start read once, the vector's ends once: the callers' stores
  // (their sums, their output) might alias iv_'s as far as the compiler knows.
  const Packed *const iv = iv_.data();
  const size_t n = iv_.size();
  size_t i = firstOverlapping(t);
  if (i >= n) return;
  int64_t start = startOf(iv[i]);
  for (; i < n; i++) {
    const int64_t end = i + 1 < n ? startOf(iv[i + 1]) : derivedUntil_;
    if (!f(iv[i], start, end)) return;
    start = end;
  }
}

template <typename F>
void ThreadTimeline::forEachPiece(const TimeRange &r, const TickTimes &ticks, F &&f) const {
  using namespace intervalcode;
  const TimeRange life = lifetime();
  const int64_t t0 = std::max(r.t0, life.t0), t1 = std::min(r.t1, life.t1);
  if (t1 <= t0) return;
  // Each start read once, the vector's ends once (as in walkFrom).
  const Packed *const iv = iv_.data();
  const size_t n = iv_.size();
  size_t i = firstOverlapping(t0);
  if (i >= n) return;
  auto nt = ticks.begin();  // the tick after x below, searched from the last one
  // An interval [s, e) as pieces clipped to [t0, t1): the window's first
  // and last, and the mixed ones. Out of line, so that f inlines in it and
  // in the plain pieces' loop below once each (not once per piece made).
  const auto clipped = [&](const Packed &p, int64_t s, int64_t e) __attribute__((noinline)) {
    if (e <= t0) return;
    const auto put = [&](int64_t a, int64_t b, FinalState st, uint32_t obj, int cpu) {
      a = std::max(a, t0);
      b = std::min(b, t1);
      if (b > a) f(StateInterval{a, b, st, obj, cpu});
    };
    const unsigned code = codeOf(p);
    if (code != kMixed) {
      put(s, e, FinalState(code), p.payload, cpuOf(p));
      return;
    }
    // A mixed interval is drawn tick by tick: on-CPU, then runnable, then the rest.
    const Mix m = mixOf(p.payload);
    const FinalState restState = FinalState(restCodeOfMix(m.rest));
    int64_t x = s;
    if (t0 > s) {
      auto tk = std::upper_bound(ticks.begin(), ticks.end(), t0);
      if (tk != ticks.begin()) x = std::max(s, *(tk - 1));
    }
    while (x < std::min(e, t1)) {
      // x only grows, nearly always into the tick after the last one
      // (a search from there over the rest of the run's ticks was a third
      // of a mixed interval's walk).
      if (nt != ticks.end() && *nt <= x) ++nt;
      if (nt != ticks.end() && *nt <= x) nt = std::upper_bound(nt, ticks.end(), x);
      const int64_t y = nt == ticks.end() ? e : std::min(e, *nt);
      const int64_t on = part(y - x, m.on), rq = part(y - x, m.rq);
      put(x, x + on, FinalState::OnCpu, 0, cpuOf(p));
      put(x + on, x + on + rq, FinalState::Runnable, 0, -1);
      put(x + on + rq, y, restState, 0, -1);
      x = y;
    }
  };
  int64_t s = startOf(iv[i]);
  const size_t last = n - 1;  // ends at derivedUntil_, not at a next start
  // The one going on at t0.
  if (s < t0) {
    const int64_t e = i < last ? startOf(iv[i + 1]) : derivedUntil_;
    clipped(iv[i], s, e);
    if (i == last || e >= t1) return;
    s = e;
    i++;
  }
  // The intervals wholly inside the window: plain ones as they are, with
  // no clipping (2.2 M of the 2.36 M a Perfetto export of half.tmcap
  // walks; issue 25).
  for (; i < last; i++) {
    const int64_t e = startOf(iv[i + 1]);
    if (e > t1) break;
    const Packed &p = iv[i];
    const unsigned code = codeOf(p);
    if (code == kMixed)
      clipped(p, s, e);
    else if (e > s)
      f(StateInterval{s, e, FinalState(code), p.payload, cpuOf(p)});
    s = e;
  }
  // The one the window ends in.
  if (s < t1) clipped(iv[i], s, i < last ? startOf(iv[i + 1]) : derivedUntil_);
}

}  // namespace tmon

#endif
